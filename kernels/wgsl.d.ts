/** WGSL sources are imported as strings: Vite's `?raw`, and cli/wgsl-loader.mjs in Node. */
declare module '*.wgsl?raw' {
  const source: string;
  export default source;
}
