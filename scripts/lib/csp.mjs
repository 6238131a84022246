// The strict Content-Security-Policy the page and the embed are tested under (scripts/serve.mjs
// --csp, tests/e2e/security.test.mjs): no inline script or style, no eval (only WebAssembly
// compilation, 'wasm-unsafe-eval'), workers from the page's own origin only, and fetches from it
// and from the Hugging Face Hub's origins that loading a model by id needs (the Your model view,
// lens.loadCheckpoint({ hub })) — nothing else.

/**
 * The Hub's origins: huggingface.co (the resolve URLs) and the file stores it redirects a
 * model.safetensors to (the LFS CDNs and the Xet store's bridge).
 */
export const HUB_ORIGINS = Object.freeze([
  'https://huggingface.co',
  'https://cdn-lfs.huggingface.co',
  'https://cdn-lfs-us-1.huggingface.co',
  'https://cdn-lfs-eu-1.huggingface.co',
  'https://cas-bridge.xethub.hf.co',
]);

/** The policy with `connect` (origins) as its connect-src after 'self'. */
export const cspWithConnect = (connect) => [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  `connect-src ${["'self'", ...connect].join(' ')}`,
  "object-src 'none'",
  "base-uri 'none'",
  'frame-ancestors *',
].join('; ');

export const STRICT_CSP = cspWithConnect(HUB_ORIGINS);

/**
 * Tests only: STRICT_CSP with more origins in connect-src (a local stand-in of the Hub on
 * loopback, scripts/lib/hub-stand-in.mjs, which a page reaches through the hubEndpoint hash parameter).
 * A page hosted against a mirror needs the same: its origin added by whoever hosts it.
 */
export const strictCspAlso = (origins) => cspWithConnect([...HUB_ORIGINS, ...origins]);
