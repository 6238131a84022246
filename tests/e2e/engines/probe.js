// Test-only recorder loaded first in every page the engine checks open (scripts/serve.mjs --probe,
// or a <script> tag in the file:// fixture): console errors, uncaught errors and rejections, CSP
// violations, dialogs and wasm instantiations, read back with window.__probe.report(). The same in
// every engine, because WebKit's WebDriver has no console log and no network events.
(() => {
  const errors = [];
  const violations = [];
  const dialogs = [];
  let wasmInstances = 0;
  const originalError = console.error;
  console.error = function (...args) {
    errors.push(`console error: ${args.map(String).join(' ')}`);
    return originalError.apply(this, args);
  };
  addEventListener('error', (e) => errors.push(`page error: ${e.message}`));
  addEventListener('unhandledrejection', (e) => errors.push(`unhandled rejection: ${e.reason?.message ?? e.reason}`));
  document.addEventListener('securitypolicyviolation', (e) => violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  for (const name of ['alert', 'confirm', 'prompt']) {
    window[name] = (message) => {
      dialogs.push(`${name}: ${message}`);
      return null;
    };
  }
  for (const name of ['instantiate', 'instantiateStreaming']) {
    const original = WebAssembly[name];
    if (!original) continue;
    WebAssembly[name] = function (...args) {
      wasmInstances += 1;
      return original.apply(this, args);
    };
  }
  // The document's resource timing entries (not a worker's own fetches): every URL it loaded.
  const own = (url) => (location.protocol === 'file:' ? url.startsWith('file:') : url.startsWith(location.origin)) ||
    url.startsWith('data:') || url.startsWith('blob:');
  performance.setResourceTimingBufferSize?.(10000);
  window.__probe = {
    report: () => ({
      errors: [...errors],
      offOrigin: performance.getEntriesByType('resource').map((e) => e.name).filter((url) => !own(url)),
      resources: performance.getEntriesByType('resource').map((e) => e.name),
      violations: [...violations],
      dialogs: [...dialogs],
      wasmInstances,
    }),
  };
})();
