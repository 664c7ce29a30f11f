// A Vitest reporter that appends each test file's start and end, and each test's start, to
// test-reports/vitest-progress.log as they happen, so that when the suite is stopped for running
// past its time (scripts/test.mjs) the files still running, and the test each was in, can be named.
import { appendFileSync, mkdirSync } from 'node:fs';
import { relative } from 'node:path';

const LOG = 'test-reports/vitest-progress.log';

export default class ProgressReporter {
  onInit() {
    mkdirSync('test-reports', { recursive: true });
  }
  write(kind, what) {
    appendFileSync(LOG, `${new Date().toISOString()}\t${kind}\t${what}\n`);
  }
  onTestModuleStart(module) {
    this.write('start', relative(process.cwd(), module.moduleId));
  }
  onTestCaseReady(test) {
    this.write('test', `${relative(process.cwd(), test.module.moduleId)}\t${test.fullName}`);
  }
  onTestModuleEnd(module) {
    this.write('end', relative(process.cwd(), module.moduleId));
  }
}
