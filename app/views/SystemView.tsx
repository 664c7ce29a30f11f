/**
 * System: which backend the worker runs on (the adapter, its key limits and features, or why it
 * fell back to the CPU) and a kernel self-test against the CPU reference.
 */
import { useMutation, useQuery } from '@tanstack/react-query';
import { backendInfoQuery, runSelfTest } from '../queries/system';
import type { BackendInfo, SelfTestResult } from '../../worker/protocol';

function AdapterDetails({ info }: { info: BackendInfo }) {
  if (!info.adapter) {
    return (
      <p data-testid="adapter-info">
        No WebGPU adapter: running on the CPU reference backend. Reason: {info.fallbackReason}
      </p>
    );
  }
  const a = info.adapter;
  const software = a.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe|warp/i.test(`${a.vendor} ${a.architecture} ${a.description} ${a.device}`);
  return (
    <div data-testid="adapter-info">
      {software && (
        <p className="note" data-testid="software-adapter">
          This adapter is a <strong>software GPU</strong> ({a.architecture || a.description || 'a fallback adapter'}): SwiftShader and its kind run WebGPU on the
          CPU, with no graphics hardware involved. Every kernel works and gives the same numbers, but slowly: matmuls reach a few GFLOPS instead of thousands, and
          each dispatch costs tens of microseconds, so one step of the grpo-arith preset takes several seconds here (about 8 s on a 2-core machine) where a real GPU
          takes a fraction of a second. On such a machine keep to the small presets, fewer prompts per step and evaluations on fewer problems; the step time by
          phase on the run dashboard shows where the time goes. Chrome picks a software adapter when it finds no usable GPU (or its GPU is blocklisted):{' '}
          <code>chrome://gpu</code> says why.
        </p>
      )}
      <dl className="facts">
        <dt>Vendor</dt>
        <dd>{a.vendor || '(not reported)'}</dd>
        <dt>Architecture</dt>
        <dd>{a.architecture || '(not reported)'}</dd>
        <dt>Description</dt>
        <dd>{a.description || a.device || '(not reported)'}</dd>
        <dt>Fallback adapter</dt>
        <dd>{a.isFallbackAdapter ? 'yes' : 'no'}</dd>
        <dt>Features</dt>
        <dd>{a.features.length ? a.features.join(', ') : 'none'}</dd>
      </dl>
      <table className="limits">
        <caption>Device limits</caption>
        <thead>
          <tr>
            <th scope="col">Limit</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(a.limits).map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td>{v.toLocaleString('en-US')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SelfTestSummary({ result }: { result: SelfTestResult }) {
  return (
    <div>
      <p data-testid="selftest-result" className={result.passed ? 'ok' : 'bad'}>
        {result.passed ? 'passed' : 'failed'}: {result.cases.length} matmul cases on {result.backend}, max |error|{' '}
        {result.maxAbsError.toExponential(2)}; {result.gflops.toFixed(2)} GFLOPS at {result.gflopsSize}³ ({(result.ms / 1000).toFixed(1)} s)
      </p>
      <details>
        <summary>Cases</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Case</th>
              <th scope="col">Max |error|</th>
              <th scope="col">Tolerance</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {result.cases.map((c) => (
              <tr key={c.name}>
                <th scope="row">{c.name}</th>
                <td>{c.maxAbsError.toExponential(2)}</td>
                <td>{c.tolerance.toExponential(1)}</td>
                <td>{c.passed ? 'passed' : 'failed'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </div>
  );
}

export function SystemView() {
  const backend = useQuery(backendInfoQuery());
  const selfTest = useMutation({ mutationFn: runSelfTest });

  return (
    <section aria-labelledby="system-title">
      <h1 id="system-title">System</h1>
      <h2>Backend</h2>
      {backend.isPending && <p role="status">Looking for a WebGPU adapter…</p>}
      {backend.isError && (
        <p role="alert">
          Could not start the worker backend ({backend.error.name}): {backend.error.message}
        </p>
      )}
      {backend.data && (
        <>
          <p>
            Active backend: <strong data-testid="backend-name">{backend.data.backend}</strong>
          </p>
          <AdapterDetails info={backend.data} />
        </>
      )}
      <h2>Kernel self-test</h2>
      <p>Runs matmul on the active backend in every layout (A·B, A·Bᵀ, Aᵀ·B) on odd shapes and compares it with the CPU reference.</p>
      <button type="button" onClick={() => selfTest.mutate()} disabled={!backend.data || selfTest.isPending}>
        Run kernel self-test
      </button>
      <div aria-live="polite">
        {selfTest.isPending && <p role="status">Running the self-test…</p>}
        {selfTest.isError && (
          <p data-testid="selftest-result" role="alert" className="bad">
            failed: {selfTest.error.name}: {selfTest.error.message}
          </p>
        )}
        {selfTest.data && <SelfTestSummary result={selfTest.data} />}
      </div>
    </section>
  );
}
