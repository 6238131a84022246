// Token chips: a token per chip, whitespace made visible. A long input collapses to its first and
// last few chips around a "… N more" button (aria-expanded) that shows them all, and a "Show fewer"
// button that collapses them again; a selected token is always shown. chipRuns decides which
// chips to draw (pure, tested in node); TokenChips patches them in place (typing changes one
// token: rebuilding every chip is a relayout). A character a shipped model read as another
// (its tokenize with unknown: 'map') is named in the chip's title, and a look-alike or a
// substitute is marked. Used by the walkthrough and the element.
import { button, el } from './dom.js';
import { displayToken, typedNote } from './labels.js';

export const COLLAPSE_AT = 48; // more tokens than this collapse
export const HEAD_CHIPS = 16; // shown at the start when collapsed
export const TAIL_CHIPS = 8; // shown at the end when collapsed

/**
 * The chips to draw of `count` tokens, as sorted, disjoint runs [{ from, to }] (`to` exclusive):
 * every token when there are at most `collapseAt` or when expanded, else the first `head`, the
 * last `tail` and each selected index (out-of-range or non-integer ones are ignored). What lies
 * between two runs (or before the first, after the last) is hidden behind a "… N more" button.
 */
export function chipRuns(count, { expanded = false, selected = [], collapseAt = COLLAPSE_AT, head = HEAD_CHIPS,
  tail = TAIL_CHIPS } = {}) {
  if (count <= 0) return [];
  if (expanded || count <= collapseAt) return [{ from: 0, to: count }];
  const shown = [[0, Math.min(head, count)], [Math.max(0, count - tail), count]];
  for (const i of selected) if (Number.isInteger(i) && i >= 0 && i < count) shown.push([i, i + 1]);
  shown.sort((a, b) => a[0] - b[0]);
  const runs = [];
  for (const [from, to] of shown) {
    if (from >= to) continue;
    const last = runs[runs.length - 1];
    if (last && from <= last.to) last.to = Math.max(last.to, to); // overlapping or touching
    else runs.push({ from, to });
  }
  return runs;
}

/** What to draw for chipRuns: chips, a "more" button for each gap, and "fewer" when expanded. */
export function chipItems(count, options = {}) {
  const runs = chipRuns(count, options);
  const items = [];
  let end = 0;
  for (const run of runs) {
    if (run.from > end) items.push({ kind: 'more', hidden: run.from - end });
    for (let i = run.from; i < run.to; ++i) items.push({ kind: 'chip', index: i });
    end = run.to;
  }
  if (end < count) items.push({ kind: 'more', hidden: count - end });
  if (options.expanded && count > (options.collapseAt ?? COLLAPSE_AT)) items.push({ kind: 'fewer' });
  return items;
}

export class TokenChips {
  #host;
  /** Text of a first, non-chip item ("Tokens:"), or undefined; drawn on the next render. */
  label;
  #expanded = false;
  #tokens = [];
  #padTokens = 0;
  #selected = [];
  #mapped = new Map(); // token index -> { typed, read, how }: a character read as another
  #shown = null; // what was drawn last

  /** label: text of a first, non-chip item ("Tokens:"), if any. */
  constructor(host, { label } = {}) {
    this.#host = host;
    this.label = label;
  }

  /**
   * The tokens as chips; the last `padTokens` are drawn as padding; `selected` indices stay
   * visible; `mapped` ({ position, typed, read, how } of a character model's tokenize with
   * unknown: 'map') says which tokens were typed as other characters: a look-alike or a
   * substitute is marked, and every such chip's title names what was typed.
   */
  render(tokens, padTokens = 0, selected = [], mapped = []) {
    this.#tokens = tokens;
    this.#padTokens = padTokens;
    this.#selected = selected;
    this.#mapped = new Map(mapped.map((m) => [m.position, m]));
    this.#draw();
  }

  /** Shows every chip (true) or the collapsed runs (false). */
  setExpanded(expanded) {
    this.#expanded = expanded;
    this.#draw();
  }

  #draw(focus) {
    const tokens = this.#tokens;
    const selected = [...new Set(this.#selected)];
    const mapped = [...this.#mapped.values()].map((m) => `${m.position}:${m.typed}`).join('\u0001');
    const key = `${this.label}|${this.#expanded}|${this.#padTokens}|${selected}|${tokens.join('\u0001')}|${mapped}`;
    if (key === this.#shown) return;
    this.#shown = key;
    const items = chipItems(tokens.length, { expanded: this.#expanded, selected });
    if (this.label !== undefined) items.unshift({ kind: 'label' });
    const host = this.#host;
    items.forEach((item, k) => {
      let node = host.children[k];
      if (node?.dataset.kind !== item.kind) {
        const fresh = this.#create(item.kind);
        if (node) host.insertBefore(fresh, node);
        else host.append(fresh);
        node = fresh;
      }
      this.#fill(node, item, selected);
    });
    while (host.children.length > items.length) host.lastElementChild.remove();
    if (focus) host.querySelector(`:scope > [data-kind="${focus}"]`)?.focus();
  }

  #create(kind) {
    let node;
    if (kind === 'label') node = el('span', 'tokens-label');
    else if (kind === 'chip') node = el('span', 'chip');
    else {
      node = button(`more-tokens ${kind}`, '', () => {
        this.#expanded = kind === 'more';
        this.#draw(this.#expanded ? 'fewer' : 'more'); // focus stays on the toggle
      });
      node.setAttribute('aria-expanded', String(kind === 'fewer'));
    }
    node.dataset.kind = kind;
    return node;
  }

  #fill(node, item, selected) {
    const count = this.#tokens.length;
    if (item.kind === 'label') {
      node.textContent = this.label;
    } else if (item.kind === 'chip') {
      const i = item.index;
      const text = displayToken(this.#tokens[i]);
      const mapped = this.#mapped.get(i);
      const substitute = mapped && mapped.how !== 'lowercase';
      const className = `chip${i >= count - this.#padTokens ? ' pad' : ''}${selected.includes(i) ? ' selected' : ''}` +
        (substitute ? ` substitute ${mapped.how}` : '');
      if (node.textContent !== text) node.textContent = text;
      if (node.className !== className) node.className = className;
      node.title = mapped ? `token ${i + 1}: ${typedNote(mapped)}` : `token ${i + 1}`;
    } else if (item.kind === 'more') {
      node.textContent = `… ${item.hidden} more`;
      node.title = `Show all ${count} tokens`;
    } else if (item.kind === 'fewer') {
      node.textContent = 'Show fewer';
      node.title = `Show the first ${HEAD_CHIPS} and last ${TAIL_CHIPS} of ${count} tokens`;
    }
  }
}
