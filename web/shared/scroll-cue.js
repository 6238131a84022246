// A visible cue on a box that scrolls: a fade with an arrow over its right (or bottom) edge while
// there is more to see that way (a phone draws no scrollbar until the box is touched). The frame
// carries data-overflows="x", "y", "x y" or "" for tests and styles.
import { el } from './dom.js';

/**
 * Wraps `scroller` (a box with overflow: auto) in a `.scroll-frame` holding the cues; they follow
 * scrolling and the sizes of the scroller and of `content` (what it holds, when its size changes
 * without the scroller's). Returns { frame, update } (update: after new content).
 */
export function scrollCue(scroller, content = null) {
  const frame = el('div', 'scroll-frame');
  const right = el('span', 'scroll-cue scroll-cue-right', '→');
  const down = el('span', 'scroll-cue scroll-cue-down', '↓');
  for (const cue of [right, down]) {
    cue.setAttribute('aria-hidden', 'true');
    cue.hidden = true;
  }
  right.title = 'Scroll sideways for more';
  down.title = 'Scroll down for more';
  frame.append(scroller, right, down);
  const update = () => {
    const wide = scroller.scrollWidth > scroller.clientWidth + 1;
    const tall = scroller.scrollHeight > scroller.clientHeight + 1;
    right.hidden = !(wide && scroller.scrollLeft + scroller.clientWidth < scroller.scrollWidth - 1);
    down.hidden = !(tall && scroller.scrollTop + scroller.clientHeight < scroller.scrollHeight - 1);
    frame.dataset.overflows = [wide ? 'x' : '', tall ? 'y' : ''].filter(Boolean).join(' ');
  };
  scroller.addEventListener('scroll', update, { passive: true });
  if (typeof ResizeObserver === 'function') {
    const observer = new ResizeObserver(update);
    observer.observe(scroller);
    if (content) observer.observe(content);
  }
  return { frame, update };
}
