/**
 * WebGPU in Node through the `webgpu` package (Dawn). On a machine without a GPU, Dawn finds an
 * adapter only through a software Vulkan: the SwiftShader ICD shipped in Debian's chromium
 * package. We point the Vulkan loader at it when no GPU device node exists and the variable is
 * unset; `DEWPOINT_VK_ICD=system` keeps the system's ICDs, any other value names an ICD file.
 */
import { existsSync, readdirSync } from 'node:fs';

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

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

let cached: GPU | null = null;

/** The `navigator.gpu` equivalent in Node (one per process). */
export async function nodeGpu(): Promise<GPU> {
  if (cached) return cached;
  configureVulkanIcd();
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  cached = create([]) as GPU;
  return cached;
}
