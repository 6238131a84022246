// The Circuits view's (and the element's circuits snapshots') number texts (formatting only).
import { formatNumber } from './format.js';

/** 0.4523 -> '45.2%' (the page's one percentage formatter). */
export { formatPercent as percent } from './format.js';

/** A logit difference or an effect: '3.214', '−0.05'. */
export const signed = (v) => formatNumber(v, 3).replace(/^-/, '−');
