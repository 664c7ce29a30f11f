/**
 * WebGPU in Node through the `webgpu` package (Dawn). On a machine without a GPU, Dawn finds an
 * adapter only through a software Vulkan: the SwiftShader ICD shipped in Debian's chromium
 * package. We point the Vulkan loader at it when no GPU device node exists and the variable is
 * unset; `DEWPOINT_VK_ICD=system` keeps the system's ICDs, any other value names an ICD file.
 * Without an XDG_RUNTIME_DIR it gives the process a private one first (`privateRuntimeDir`).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

function hasGpuDeviceNode(): boolean {
  if (existsSync('/dev/nvidia0')) return true;
  try {
    return readdirSync('/dev/dri').some((f) => f.startsWith('renderD'));
  } catch {
    return false; // no /dev/dri: no GPU render node on this machine
  }
}

/** Decides the Vulkan ICD before Dawn loads; returns what was chosen, for `dewpoint info`. */
export function configureVulkanIcd(env: NodeJS.ProcessEnv = process.env): string {
  const choice = env.DEWPOINT_VK_ICD;
  if (choice === 'system') return 'system ICDs (DEWPOINT_VK_ICD=system)';
  if (choice) {
    env.VK_ICD_FILENAMES = choice;
    return choice;
  }
  if (env.VK_ICD_FILENAMES) return env.VK_ICD_FILENAMES;
  if (!hasGpuDeviceNode() && existsSync(SWIFTSHADER_ICD)) {
    env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
    return SWIFTSHADER_ICD;
  }
  return 'system ICDs';
}

/**
 * Gives the process an empty XDG_RUNTIME_DIR of its own (0700, removed at exit) when the
 * environment has none; returns it, or null when one was set. Why: Mesa's device-select layer
 * (an implicit Vulkan layer, Debian's mesa-vulkan-drivers) asks the Wayland compositor for the
 * default GPU whenever the instance enables VK_KHR_wayland_surface, which Dawn does; libwayland's
 * wl_display_connect then prints "error: XDG_RUNTIME_DIR is invalid or not set in the environment."
 * to stderr (once per device enumeration, twice a run) before failing. In an empty runtime
 * directory it finds no socket and fails silently, as the XDG base-directory spec's replacement
 * directory intends; nothing else is hidden. libwayland's own test: set and absolute.
 */
export function privateRuntimeDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.XDG_RUNTIME_DIR?.startsWith('/')) return null;
  const dir = mkdtempSync(join(tmpdir(), 'dewpoint-runtime-'));
  env.XDG_RUNTIME_DIR = dir;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

let cached: GPU | null = null;

/** The `navigator.gpu` equivalent in Node (one per process). */
export async function nodeGpu(): Promise<GPU> {
  if (cached) return cached;
  configureVulkanIcd();
  privateRuntimeDir();
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  cached = create([]) as GPU;
  return cached;
}
