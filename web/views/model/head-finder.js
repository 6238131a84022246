// The head finder: a table of every head's previous-token and induction scores (model.headScores
// on the seeded repeated-random-token probe), sorted by a column; a row's button highlights that
// head in the grid. Numbers from the worker, written with textContent.
import { button, el } from '../../shared/dom.js';
import { formatNumber } from '../../shared/format.js';
import { sortHeads } from './model-data.js';

const COLUMNS = [['induction', 'Induction'], ['previousToken', 'Previous token']];
const shown = (v) => (v === null || v === undefined ? '—' : formatNumber(v, 3));

export class HeadFinder {
  #host;
  #onPick;
  #scores = [];
  #key = 'induction';
  #picked = null;

  /** @param {(layer: number, head: number) => void} onPick */
  constructor(host, onPick) {
    this.#host = host;
    this.#onPick = onPick;
  }

  render(scores = this.#scores) {
    this.#scores = scores;
    const table = el('table', 'model-finder-table');
    const head = el('tr');
    head.append(el('th', '', 'Head'));
    for (const [key, label] of COLUMNS) {
      const th = el('th');
      th.setAttribute('aria-sort', key === this.#key ? 'descending' : 'none');
      th.append(button('link-button', label, () => {
        this.#key = key;
        this.render();
      }));
      head.append(th);
    }
    table.append(el('thead'), el('tbody'));
    table.tHead.append(head);
    for (const s of sortHeads(scores, this.#key)) {
      const row = el('tr');
      row.dataset.layer = String(s.layer);
      row.dataset.head = String(s.head);
      const picked = this.#picked?.layer === s.layer && this.#picked?.head === s.head;
      row.classList.toggle('highlighted', picked);
      const pick = button('link-button', `L${s.layer + 1} · H${s.head + 1}`, () => {
        this.#picked = { layer: s.layer, head: s.head };
        this.render();
        this.#onPick(s.layer, s.head);
      });
      pick.setAttribute('aria-pressed', String(picked));
      const name = el('td');
      name.append(pick);
      row.append(name, el('td', 'num', shown(s.induction)), el('td', 'num', shown(s.previousToken)));
      table.tBodies[0].append(row);
    }
    this.#host.replaceChildren(table);
  }
}
