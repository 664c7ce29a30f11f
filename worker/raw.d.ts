/** Text files imported as strings (the example environment): Vite's `?raw`, and cli/wgsl-loader.mjs in Node. */
declare module '*.py?raw' {
  const text: string;
  export default text;
}
declare module '*.jsonl?raw' {
  const text: string;
  export default text;
}
