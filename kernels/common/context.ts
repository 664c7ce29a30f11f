/**
 * Adapter and device acquisition, shared by the page, the Worker and Node (which passes the
 * `GPU` object of the `webgpu` package). Requests the adapter's own maxima for the limits the
 * training step needs, the optional features it can use, and installs an always-on
 * `uncapturederror` listener and a `device.lost` handler: after a loss every wait on the device
 * (see readback.ts) rejects with a named `GpuDeviceLost` error instead of hanging.
 */
import type { AdapterSummary } from '../backends/info';
import { GpuError } from './errors';

export interface GpuContext {
  readonly device: GPUDevice;
  readonly adapter: AdapterSummary;
  /** Set once the device is lost (including after `destroy()`). */
  lost: GpuError | null;
  /** Resolves with the named error when the device is lost. */
  readonly lostPromise: Promise<GpuError>;
  /** Uncaptured validation / out-of-memory errors, oldest first (capped). */
  readonly errors: GpuError[];
  /** Called for every uncaptured error and for a device loss. */
  onError: ((error: GpuError) => void) | null;
}

type AcquireResult = { ok: true; ctx: GpuContext } | { ok: false; reason: string };

/** Limits raised to the adapter's maxima: big buffers and workgroups matter for training. */
const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

/** Limits reported to the user besides the raised ones. */
const REPORTED_LIMITS = [
  ...RAISED_LIMITS,
  'minStorageBufferOffsetAlignment',
  'minUniformBufferOffsetAlignment',
  'maxComputeWorkgroupSizeZ',
] as const;

const OPTIONAL_FEATURES: GPUFeatureName[] = ['timestamp-query', 'subgroups', 'shader-f16'];

const MAX_KEPT_ERRORS = 32;

export async function acquireGpu(
  gpu: GPU | undefined,
  powerPreference: GPUPowerPreference = 'high-performance',
): Promise<AcquireResult> {
  if (!gpu)
    return {
      ok: false,
      reason:
        'navigator.gpu is undefined: this browser or context has no WebGPU (Chrome needs a secure context: https or localhost)',
    };
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference });
  } catch (e) {
    return { ok: false, reason: `requestAdapter() threw: ${(e as Error).message}` };
  }
  if (!adapter)
    return {
      ok: false,
      reason: 'requestAdapter() returned null: no WebGPU adapter is available (no GPU, or WebGPU disabled)',
    };

  const requiredLimits: Record<string, number> = {};
  const adapterLimits = adapter.limits as unknown as Record<string, number>;
  for (const name of RAISED_LIMITS) {
    if (typeof adapterLimits[name] === 'number') requiredLimits[name] = adapterLimits[name];
  }
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ label: 'dewpoint', requiredLimits, requiredFeatures });
  } catch (e) {
    return { ok: false, reason: `requestDevice() failed: ${(e as Error).message}` };
  }

  const info = (adapter as GPUAdapter & { info?: GPUAdapterInfo }).info;
  const deviceLimits = device.limits as unknown as Record<string, number>;
  const limits: Record<string, number> = {};
  for (const name of REPORTED_LIMITS) {
    if (typeof deviceLimits[name] === 'number') limits[name] = deviceLimits[name];
  }
  const summary: AdapterSummary = {
    vendor: info?.vendor ?? '',
    architecture: info?.architecture ?? '',
    device: info?.device ?? '',
    description: info?.description ?? '',
    isFallbackAdapter: Boolean((info as { isFallbackAdapter?: boolean } | undefined)?.isFallbackAdapter),
    limits,
    features: [...device.features].map(String).sort(),
  };
  return { ok: true, ctx: wrapDevice(device, summary) };
}

/** Installs the error listener and the loss handler on a device. */
function wrapDevice(device: GPUDevice, adapter: AdapterSummary): GpuContext {
  let resolveLost!: (e: GpuError) => void;
  const lostPromise = new Promise<GpuError>((resolve) => (resolveLost = resolve));
  const ctx: GpuContext = { device, adapter, lost: null, lostPromise, errors: [], onError: null };
  device.addEventListener('uncapturederror', (event) => {
    const err = (event as GPUUncapturedErrorEvent).error;
    // By class name: the GPU*Error globals are not defined in every host (Node without `globals`).
    const name = err.constructor.name === 'GPUOutOfMemoryError' ? 'GpuOutOfMemory' : 'GpuValidationError';
    const error = new GpuError(name, err.message);
    ctx.errors.push(error);
    if (ctx.errors.length > MAX_KEPT_ERRORS) ctx.errors.shift();
    ctx.onError?.(error);
  });
  void device.lost.then((info) => {
    const error = new GpuError('GpuDeviceLost', `GPU device lost (${info.reason}): ${info.message || 'no message'}`);
    ctx.lost = error;
    resolveLost(error);
    ctx.onError?.(error);
  });
  return ctx;
}

/**
 * True on a software adapter (SwiftShader: a CPU Vulkan with 4-wide subgroups, where workgroup
 * barriers are costly and a few long-running invocations beat many short ones).
 */
export function isSoftwareSummary(a: AdapterSummary): boolean {
  return a.isFallbackAdapter || a.architecture === 'swiftshader';
}

/** Throws the named error if the device is gone: call before encoding work. */
export function assertAlive(ctx: GpuContext): void {
  if (ctx.lost) throw ctx.lost;
}
