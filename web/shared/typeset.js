// LaTeX to the page with KaTeX: no HTML from the input is trusted (trust: false), errors are
// shown in place instead of thrown.
import katex from 'katex';
import 'katex/dist/katex.min.css';

/** Typesets `latex` into `target` (display mode unless display is false). */
export function typeset(latex, target, display = true) {
  katex.render(latex, target, { displayMode: display, throwOnError: false, trust: false, strict: 'ignore', output: 'htmlAndMathml' });
}
