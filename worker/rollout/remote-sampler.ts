/**
 * A sampler that runs elsewhere, one of the rollout scheduler's slots (worker/train/scheduler.ts):
 * the scheduler publishes a version's weights to it before it draws a batch, and it draws as
 * `generate` would on a model holding them. Two places run one: a Web Worker beside the trainer's
 * worker in the browser (worker/sampler-worker.ts) and a worker thread in Node
 * (cli/thread-sampler.ts). Both speak the messages below over a port: `PortSampler` is the
 * trainer's end, `serveSampler` the sampler's. The weights travel in no message: the sampler's
 * model keeps them in a shared wasm memory that the trainer writes a version into in place
 * (shared-weights.ts), so a batch costs its prompts and options, never a copy of the weights.
 *
 * Messages, each answered `{ id }` (with `weights` for 'init', `generated` for a draw) or
 * `{ id, error }`, in order: `{ id, type: 'init', config, threads }` first (a frozen Model of the
 * run's shape on its own backend over a shared memory; the answer's `weights` says where its
 * tensors are), then `{ id, type: 'generate', version, prompts: number[][], options }`
 * (GenerateOptions without its callback), drawn only if the shared tensors hold `version` before
 * and after the draw. The sampler's end sends `{ id: 0 }` once it listens.
 */
import type { WasmOps } from '../../kernels/backends/wasm';
import type { ModelConfig } from '../model/config';
import { Model } from '../model/model';
import type { Generated, GenerateOptions } from './generate';
import { generate } from './generate';
import type { Sampler } from './prompt-source';
import type { SharedWeights } from './shared-weights';
import { NO_VERSION, WRITING, heldVersion, shareWeights, writeWeights } from './shared-weights';

export interface RemoteSampler {
  /**
   * Writes version `version`'s weights where the sampler reads them, once it has started, and
   * gives the sampler that draws under them: a draw refuses (rejects) once another version was
   * written over them.
   */
  publish(version: number, weights: ReadonlyMap<string, Float32Array>): Promise<Sampler>;
  close(): void;
}

/** One end of a message channel (a Worker, a worker thread's parentPort, a Web Worker's self). */
interface SamplerPort {
  postMessage(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
}

/** The trainer's end: a port to the sampler, how to stop it, and (Node) whether it may keep the process alive. */
export interface SamplerEndpoint extends SamplerPort {
  /** A failure of the sampler's context itself (an uncaught error, an exit): every pending request fails with it. */
  onFailure(listener: (e: Error) => void): void;
  terminate(): void;
  /** Keep the process alive while a request is pending (Node's ref/unref); absent in the browser. */
  keepAlive?(on: boolean): void;
}

type Answer = { id: number; weights?: SharedWeights; generated?: Generated[]; error?: string };
type Pending = { resolve: (m: Answer) => void; reject: (e: Error) => void };

/** The scheduler's end of a sampler elsewhere; `where` names it in errors ("the sampler thread", "the sampler worker"). */
export class PortSampler implements RemoteSampler {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;
  private readonly ready: Promise<void>;
  /** Where the sampler's weights are, once its 'init' is answered. */
  private readonly shared: Promise<SharedWeights>;

  constructor(
    private readonly port: SamplerEndpoint,
    config: ModelConfig,
    private readonly where: string,
    threads = 1,
  ) {
    let started!: () => void;
    this.ready = new Promise<void>((resolve) => (started = resolve));
    port.onMessage((message) => {
      const m = message as Answer;
      if (m.id === 0) return started();
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) port.keepAlive?.(false);
      if (m.error) p.reject(new Error(`${where}: ${m.error}`));
      else p.resolve(m);
    });
    port.onFailure((e) => {
      this.failure = new Error(`${where} stopped: ${e.message}`);
      for (const p of this.pending.values()) p.reject(this.failure);
      this.pending.clear();
    });
    port.keepAlive?.(false);
    // The first request: any later one waits behind it in the sampler's queue.
    this.shared = this.call({ type: 'init', config, threads }).then((a) => a.weights!);
    this.shared.catch(() => {}); // a failed init fails every publish and later request too
  }

  private async call(message: object): Promise<Answer> {
    if (this.failure) throw this.failure;
    const id = this.nextId++;
    const answer = new Promise<Answer>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.port.keepAlive?.(true);
    await this.ready;
    this.port.postMessage({ id, ...message });
    return answer;
  }

  async publish(version: number, weights: ReadonlyMap<string, Float32Array>): Promise<Sampler> {
    const shared = await this.shared;
    try {
      writeWeights(shared, version, weights);
    } catch (e) {
      throw new Error(`${this.where}: ${(e as Error).message}`);
    }
    return (prompts, options) => this.draw(version, prompts, options);
  }

  private async draw(version: number, prompts: readonly ArrayLike<number>[], options: GenerateOptions) {
    // The progress callback stays here: the sampler's rows report nothing back.
    const { onProgress: _progress, ...rest } = options;
    const { generated } = await this.call({
      type: 'generate',
      version,
      prompts: prompts.map((p) => Array.from(p)),
      options: rest,
    });
    return generated!;
  }

  close(): void {
    this.port.terminate();
  }
}

type Request =
  | { id: number; type: 'init'; config: ModelConfig; threads: number }
  | { id: number; type: 'generate'; version: number; prompts: number[][]; options: GenerateOptions };

/**
 * The sampler's end: a frozen Model of the run's shape on the backend `opsFor(threads)` makes (over
 * a shared memory), whose weights the trainer writes (shared-weights.ts), drawing with `generate`
 * on request. One request at a time, in order. Listens at once, then says so (`{ id: 0 }`).
 */
export function serveSampler(port: SamplerPort, opsFor: (threads: number) => Promise<WasmOps>): void {
  let model: Model | null = null;
  let shared: SharedWeights | null = null;
  let initFailed: string | null = null;
  let queue = Promise.resolve();
  port.onMessage((message) => {
    const m = message as Request;
    queue = queue.then(async () => {
      try {
        if (m.type === 'init') {
          try {
            const ops = await opsFor(m.threads);
            model = new Model(ops, m.config, { frozen: true });
            shared = shareWeights(model, ops);
          } catch (e) {
            initFailed = `its model could not start: ${(e as Error).name}: ${(e as Error).message}`;
            throw new Error(initFailed);
          }
          port.postMessage({ id: m.id, weights: shared });
        } else if (!model || !shared) {
          throw new Error(initFailed ?? `a '${m.type}' request before 'init'`);
        } else {
          expectVersion(shared, m.version, 'before the draw');
          const generated = await generate(model, m.prompts, m.options);
          expectVersion(shared, m.version, 'after the draw');
          port.postMessage({ id: m.id, generated });
        }
      } catch (e) {
        port.postMessage({ id: m.id, error: `${(e as Error).name}: ${(e as Error).message}` });
      }
    });
  });
  port.postMessage({ id: 0 });
}

/** A draw under `version` refuses weights that are not that version whole: another written over it, or being written. */
function expectVersion(shared: SharedWeights, version: number, when: string): void {
  const held = heldVersion(shared);
  if (held === version) return;
  const what =
    held === WRITING ? 'a version was being written' : held === NO_VERSION ? 'none was written' : `version ${held} was`;
  throw new Error(
    `a draw under weights version ${version}, ${when}: ${what} (a slot's weights are rewritten only after the batch drawn from them)`,
  );
}
