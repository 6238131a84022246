// The strict Content-Security-Policy the page and the embed are tested under (scripts/serve.mjs
// --csp, tests/e2e/security.test.mjs): no inline script or style, no eval (only WebAssembly
// compilation, 'wasm-unsafe-eval'), workers and fetches from the page's own origin only.
export const STRICT_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  'frame-ancestors *',
].join('; ');
