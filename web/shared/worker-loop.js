// The worker side of worker-calls.js: one message loop that answers every request {id, type, …}
// with {id, ok, value | error}. Used by the engine's, the Train view's and the Your model view's workers.

/**
 * Answers each request with `handlers[type](message)`'s value (an unknown type is refused); until
 * `ready()`, every request but 'init' is refused with `notReady`. `transferables(value, message)`
 * lists the buffers moved (not copied) to the page with a value; any error (thrown, or in
 * posting) becomes {id, ok: false, error}.
 * @param {{ready: () => boolean, notReady: string,
 *   handlers: Record<string, (message: object) => unknown | Promise<unknown>>,
 *   transferables?: (value: unknown, message: object) => Transferable[]}} loop
 */
export function serveRequests({ ready, notReady, handlers, transferables = () => [] }, scope = self) {
  scope.addEventListener('message', async (event) => {
    const message = event.data;
    const { id, type } = message;
    try {
      if (!ready() && type !== 'init') throw new Error(notReady);
      const handler = Object.hasOwn(handlers, type) ? handlers[type] : null;
      if (!handler) throw new Error(`unknown request '${String(type).slice(0, 40)}'`);
      const value = await handler(message);
      scope.postMessage({ id, ok: true, value }, transferables(value, message));
    } catch (error) {
      scope.postMessage({ id, ok: false, error: error?.message ?? String(error) });
    }
  });
}
