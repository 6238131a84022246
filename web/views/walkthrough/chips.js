// The token chips under a text box, patched in place (typing changes one token; rebuilding 64
// chips is a relayout). A chip shows a token as text, with its whitespace made visible.
import { el } from '../../shared/dom.js';
import { displayToken } from '../../shared/labels.js';

const MAX_CHIPS = 256; // beyond this the chips say how many more there are

export class Chips {
  #host;
  #shown = null; // the tokens drawn last

  constructor(host) {
    this.#host = host;
  }

  /** The tokens as chips; the last `padTokens` are drawn as padding. */
  render(tokens, padTokens = 0) {
    const key = `${padTokens}|${tokens.join('\u0001')}`;
    if (key === this.#shown) return;
    this.#shown = key;
    const host = this.#host;
    const shown = Math.min(tokens.length, MAX_CHIPS);
    const chips = host.querySelectorAll(':scope > .chip');
    for (let i = chips.length; i < shown; ++i) host.append(el('span', 'chip'));
    for (let i = shown; i < chips.length; ++i) chips[i].remove();
    host.querySelector(':scope > .more')?.remove();
    host.querySelectorAll(':scope > .chip').forEach((chip, i) => {
      const text = displayToken(tokens[i]);
      const className = i >= tokens.length - padTokens ? 'chip pad' : 'chip';
      if (chip.textContent !== text) chip.textContent = text;
      if (chip.className !== className) chip.className = className;
      chip.title = `token ${i + 1}`;
    });
    if (tokens.length > MAX_CHIPS) host.append(el('span', 'muted small more', `… and ${tokens.length - MAX_CHIPS} more tokens`));
  }
}
