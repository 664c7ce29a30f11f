/**
 * A sampler that runs elsewhere, one of the rollout scheduler's slots (worker/train/scheduler.ts):
 * the scheduler publishes a version's weights to it before it draws a batch, and it draws as
 * `generate` would on a model holding them. Two places run one: a Web Worker beside the trainer's
 * worker in the browser (worker/sampler-worker.ts) and a worker thread in Node
 * (cli/thread-sampler.ts). Both speak the messages below over a port: `PortSampler` is the
 * trainer's end, `serveSampler` the sampler's.
 *
 * Messages, each answered `{ id }` (with `generated` for a draw) or `{ id, error }`, in order:
 * `{ id, type: 'init', config, threads }` first (a Model of the run's shape on its own backend),
 * `{ id, type: 'weights', weights: [name, Float32Array][] }` and `{ id, type: 'generate', prompts:
 * number[][], options }` (GenerateOptions without its callback). The sampler's end sends `{ id: 0 }`
 * once it listens.
 */
import type { Ops } from '../../kernels/ops';
import type { ModelConfig } from '../model/config';
import { Model } from '../model/model';
import type { Generated, GenerateOptions } from './generate';
import { generate } from './generate';
import type { Sampler } from './prompt-source';

export interface RemoteSampler {
  publish(weights: ReadonlyMap<string, Float32Array>): Promise<void>;
  sampler: Sampler;
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

type Answer = { id: number; generated?: Generated[]; error?: string };
type Pending = { resolve: (m: Answer) => void; reject: (e: Error) => void };

/** The scheduler's end of a sampler elsewhere; `where` names it in errors ("the sampler thread", "the sampler worker"). */
export class PortSampler implements RemoteSampler {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;
  private readonly ready: Promise<void>;

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
    this.call({ type: 'init', config, threads }).catch(() => {}); // a failed init fails every later request too
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

  async publish(weights: ReadonlyMap<string, Float32Array>): Promise<void> {
    await this.call({ type: 'weights', weights: [...weights] });
  }

  sampler = async (prompts: readonly ArrayLike<number>[], options: GenerateOptions): Promise<Generated[]> => {
    // The progress callback stays here: the sampler's rows report nothing back.
    const { onProgress: _progress, ...rest } = options;
    const { generated } = await this.call({
      type: 'generate',
      prompts: prompts.map((p) => Array.from(p)),
      options: rest,
    });
    return generated!;
  };

  close(): void {
    this.port.terminate();
  }
}

type Request =
  | { id: number; type: 'init'; config: ModelConfig; threads: number }
  | { id: number; type: 'weights'; weights: [string, Float32Array][] }
  | { id: number; type: 'generate'; prompts: number[][]; options: GenerateOptions };

/**
 * The sampler's end: a Model of the run's shape on the backend `opsFor(threads)` makes, holding the
 * weights last published, drawing with `generate` on request. One request at a time, in order: a
 * draw never sees weights published after it was asked. Listens at once, then says so (`{ id: 0 }`).
 */
export function serveSampler(port: SamplerPort, opsFor: (threads: number) => Promise<Ops>): void {
  let model: Model | null = null;
  let initFailed: string | null = null;
  let queue = Promise.resolve();
  port.onMessage((message) => {
    const m = message as Request;
    queue = queue.then(async () => {
      try {
        if (m.type === 'init') {
          try {
            model = new Model(await opsFor(m.threads), m.config, { frozen: true });
          } catch (e) {
            initFailed = `its model could not start: ${(e as Error).name}: ${(e as Error).message}`;
            throw e;
          }
          port.postMessage({ id: m.id });
        } else if (!model) {
          throw new Error(initFailed ?? `a '${m.type}' request before 'init'`);
        } else if (m.type === 'weights') {
          model.setWeights(new Map(m.weights));
          port.postMessage({ id: m.id });
        } else {
          port.postMessage({ id: m.id, generated: await generate(model, m.prompts, m.options) });
        }
      } catch (e) {
        port.postMessage({ id: m.id, error: `${(e as Error).name}: ${(e as Error).message}` });
      }
    });
  });
  port.postMessage({ id: 0 });
}
