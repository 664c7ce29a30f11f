/**
 * The wasm backend's helper threads: `threads − 1` workers (kernels/wasm/thread.mjs) share the
 * calling thread's WebAssembly memory and each runs its part of a kernel, woken through a shared
 * control block with Atomics; the caller runs the first part itself, then blocks with Atomics.wait
 * until every part is done. That blocking is why the ops run in a dedicated Worker (the browser
 * main thread may not wait) or in Node. A kernel's parts write disjoint outputs (rows of a matmul,
 * batch rows of attention), so the result is bit-identical to one thread. Hosts supply `spawn`
 * (kernels/ knows neither Web Workers nor worker_threads).
 */

const SLOT = 64; // ints per slot: 16 of control, then 24 f64 arguments
const ARGS = 8;
/** How long the caller waits for a helper's part before calling the helper lost (no kernel part comes near it). */
const HELPER_PART_LIMIT_MS = 300_000;

/** A started helper thread, as the host's Worker API exposes it. */
export interface ThreadPort {
  postMessage(message: unknown): void;
  /** Calls `fn` with each message the thread posts. */
  onMessage(fn: (message: unknown) => void): void;
  /** Called once the thread has started and its listeners are on (Node: unref, so it does not keep the process alive). */
  started?(): void;
  /** Calls `fn` if the thread ends (Node: its exit; a browser worker: its error event), with why. */
  onExit?(fn: (why: string) => void): void;
  terminate(): void;
}

/** One part of a kernel: the export's index in `names` and its arguments. */
interface Part {
  fn: number;
  args: number[];
}

/** The helper threads and their control block (Atomics and SharedArrayBuffer are ES2022 globals). */
export class WasmThreadPool {
  private readonly ctl: Int32Array;
  private readonly f64: Float64Array;
  private seq = 0;
  private failure: string | null = null;
  private closed = false;
  /** Helper threads that ended while the pool was open, and why (their parts can never finish). */
  private readonly exited = new Map<number, string>();

  private constructor(
    private readonly ports: ThreadPort[],
    control: SharedArrayBuffer,
  ) {
    this.ctl = new Int32Array(control);
    this.f64 = new Float64Array(control);
    ports.forEach((p, slot) => {
      p.onMessage((m) => {
        const msg = m as { type?: string; message?: string };
        if (msg.type === 'error') this.failure = msg.message ?? 'a helper thread failed';
      });
      p.onExit?.((why) => {
        if (!this.closed) this.exited.set(slot, why);
      });
      p.started?.();
    });
  }

  /** Threads in all, the caller included. */
  get size(): number {
    return this.ports.length + 1;
  }

  /** Starts `helpers` threads on `module` over the shared `memory`; resolves when every one has instantiated it. */
  static async start(
    module: object,
    memory: object,
    helpers: number,
    names: readonly string[],
    spawn: () => ThreadPort,
  ): Promise<WasmThreadPool> {
    const control = new SharedArrayBuffer(Math.max(1, helpers) * SLOT * 4);
    const ports = Array.from({ length: helpers }, spawn);
    await Promise.all(
      ports.map(
        (p, slot) =>
          new Promise<void>((resolve, reject) => {
            p.onMessage((m) => {
              const msg = m as { type?: string; message?: string };
              if (msg.type === 'ready') resolve();
              else if (msg.type === 'error') reject(new Error(`wasm helper thread ${slot}: ${msg.message}`));
            });
            p.postMessage({ type: 'start', module, memory, control, slot, names: [...names] });
          }),
      ),
    );
    return new WasmThreadPool(ports, control);
  }

  /**
   * Runs parts[0] here and parts[1..] on helper threads (at most `size` parts), returning when all
   * are done. The caller blocks, so no timer can end the wait: a closed pool is refused, and a
   * helper that has not finished its part within `limitMs` is called lost (an error naming it)
   * instead of holding the thread for ever.
   */
  run(parts: readonly Part[], here: (part: Part) => void, limitMs = HELPER_PART_LIMIT_MS): void {
    if (this.closed) throw new Error('wasm threads: the pool is closed (its ops were disposed)');
    if (parts.length > this.size) throw new Error(`wasm threads: ${parts.length} parts for ${this.size} threads`);
    const seq = ++this.seq;
    for (let i = 1; i < parts.length; i++) {
      const base = (i - 1) * SLOT;
      const argBase = (base >> 1) + ARGS;
      const { fn, args } = parts[i];
      this.ctl[base + 2] = fn;
      this.ctl[base + 3] = args.length;
      for (let j = 0; j < args.length; j++) this.f64[argBase + j] = args[j];
      Atomics.store(this.ctl, base, seq);
      Atomics.notify(this.ctl, base);
    }
    if (parts.length) here(parts[0]);
    const deadline = Date.now() + limitMs;
    for (let i = 1; i < parts.length; i++) {
      const base = (i - 1) * SLOT;
      // Wait on the value just checked: one read again could already be `seq`, whose notify has passed.
      for (let done = Atomics.load(this.ctl, base + 1); done !== seq; done = Atomics.load(this.ctl, base + 1)) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`wasm helper thread ${i - 1} did not finish its part within ${limitMs / 1000} s`);
        const gone = this.exited.get(i - 1);
        if (gone !== undefined) throw new Error(`wasm helper thread ${i - 1} ended (${gone}); its part cannot finish`);
        Atomics.wait(this.ctl, base + 1, done, Math.min(1000, left));
      }
      if (this.ctl[base + 4]) throw new Error(`wasm helper thread ${i - 1} failed: ${this.failure ?? 'see its error'}`);
    }
  }

  /** Stops the helper threads. */
  close(): void {
    this.closed = true;
    for (let i = 0; i < this.ports.length; i++) {
      Atomics.store(this.ctl, i * SLOT, -1);
      Atomics.notify(this.ctl, i * SLOT);
    }
    this.ports.forEach((p) => p.terminate());
  }
}
