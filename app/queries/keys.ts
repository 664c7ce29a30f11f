/** Query keys for every worker read, from one factory. */
export const keys = {
  backend: () => ['backend'] as const,
  presets: () => ['presets'] as const,
};
