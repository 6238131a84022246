// The Circuits view's (and the element's circuits snapshots') number texts (formatting only).
import { formatNumber } from './format.js';

/** 0.4523 -> '45.2%'. */
export const percent = (p) => `${(p * 100).toFixed(p >= 0.995 || p < 0.001 ? 2 : 1)}%`;

/** A logit difference or an effect: '3.214', '−0.05'. */
export const signed = (v) => formatNumber(v, 3).replace(/^-/, '−');
