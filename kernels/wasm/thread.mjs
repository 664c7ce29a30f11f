// A helper thread of the wasm backend (a Web Worker in the browser, a worker_threads Worker in
// Node): instantiates ops-mt.wasm over the shared memory it is sent, says 'ready', then loops:
// waits for a job on its slot of the control block, runs one kernel export with the job's
// arguments, marks the job done. Plain JavaScript with no imports, so both hosts load it as is.
// Control block per slot (Int32Array, SLOT ints): [0] job sequence number, [1] done sequence
// number, [2] kernel index, [3] argument count, [4] failed (1); up to 24 arguments as Float64
// from f64 index ARGS of the slot (ints 16..63).
const SLOT = 64;
const ARGS = 8; // in f64 units: ints 16.. of the slot

// The specifier is a variable so that bundlers leave the Node-only import alone.
const NODE_WORKER = 'node:worker_threads';
const port =
  typeof self !== 'undefined' && typeof self.postMessage === 'function'
    ? self
    : (await import(/* @vite-ignore */ NODE_WORKER)).parentPort;
const on = (fn) =>
  port.addEventListener ? port.addEventListener('message', (e) => fn(e.data)) : port.on('message', fn);

on((msg) => {
  if (msg.type !== 'start') return;
  const { module, memory, control, slot, names } = msg;
  const abort = () => {
    throw new Error('wasm kernel aborted');
  };
  const exports = new WebAssembly.Instance(module, { env: { memory, abort } }).exports;
  const fns = names.map((n) => exports[n]);
  const ctl = new Int32Array(control);
  const f64 = new Float64Array(control);
  const base = slot * SLOT;
  const argBase = (base >> 1) + ARGS;
  // The slot's job number before saying ready: the caller may post the first job as soon as it
  // hears it, and a number read after that would already be the job's, which would then never run.
  let seen = Atomics.load(ctl, base);
  port.postMessage({ type: 'ready', slot });
  for (;;) {
    Atomics.wait(ctl, base, seen);
    seen = Atomics.load(ctl, base);
    if (seen < 0) return; // shut down
    try {
      const argc = ctl[base + 3];
      const args = new Array(argc);
      for (let i = 0; i < argc; i++) args[i] = f64[argBase + i];
      fns[ctl[base + 2]](...args);
      ctl[base + 4] = 0;
    } catch (e) {
      ctl[base + 4] = 1;
      port.postMessage({ type: 'error', slot, message: String(e && e.message ? e.message : e) });
    }
    Atomics.store(ctl, base + 1, seen);
    Atomics.notify(ctl, base + 1);
  }
});
