// LaTeX to the page with KaTeX: no HTML from the input is trusted (trust: false), errors are
// shown in place instead of thrown; a wide equation scaled to its box.
import katex from 'katex';
import 'katex/dist/katex.min.css';

/** Typesets `latex` into `target` (display mode unless display is false). */
export function typeset(latex, target, display = true) {
  katex.render(latex, target, { displayMode: display, throwOnError: false, trust: false, strict: 'ignore', output: 'htmlAndMathml' });
}

/**
 * Each displayed equation in `box` that is wider than it scaled down to fit, to `smallest` of its
 * size at the least (past that its box scrolls). Needs `box` laid out; does nothing while hidden.
 */
export function fitEquations(box, smallest = 0.75) {
  if (!box.clientWidth) return;
  for (const display of box.querySelectorAll('.katex-display')) {
    const equation = display.querySelector('.katex');
    if (!equation || display.scrollWidth <= display.clientWidth) continue;
    const size = parseFloat(getComputedStyle(equation).fontSize);
    equation.style.fontSize = `${size * Math.max(smallest, (display.clientWidth - 2) / display.scrollWidth)}px`;
  }
}
