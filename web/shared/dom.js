// DOM helpers shared by the page's views and the <attention-lens> element. Text goes in with
// textContent only: nothing here ever parses a string as HTML.

/** A new element with an optional class and text. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The page's element with this id. */
export const $ = (id) => document.getElementById(id);

/** A button (type="button") with a class and a label, calling onClick when clicked. */
export function button(className, label, onClick) {
  const b = el('button', className, label);
  b.type = 'button';
  if (onClick) b.addEventListener('click', onClick);
  return b;
}

/** Runs `job` when the browser is idle (or after `fallbackMs` where it cannot say). */
export const whenIdle = (job, timeout = 1000, fallbackMs = 20) => (typeof requestIdleCallback === 'function'
  ? requestIdleCallback(job, { timeout }) : setTimeout(job, fallbackMs));

/** Cancels a whenIdle job. */
export const cancelIdle = (handle) => (typeof cancelIdleCallback === 'function'
  ? cancelIdleCallback(handle) : clearTimeout(handle));
