// The head picker: "Head: 1 2 3 4", one pressed button per head, used by the page's walkthrough
// and the <attention-lens> element (whose snapshots also pick a layer with it). Rebuilt only when the heads, the pressed head or whether it
// shows changed (typing redraws the numbers, not the picker).
import { button, el } from './dom.js';

export class HeadPicker {
  #host;
  #options;
  #shown = null; // what the buttons show: `${visible}|${heads}|${head}`

  /**
   * @param {HTMLElement} host
   * @param {{label: string, labelClass: string, buttonClass?: string, hide?: boolean,
   *   itemName?: string, onPick: (head: number) => void}} options  hide: set host.hidden when there is nothing to pick;
   *   itemName: what a button picks, in its aria-label ('head' by default; the element's snapshots also pick a 'layer')
   */
  constructor(host, options) {
    this.#host = host;
    this.#options = options;
  }

  /** Buttons for `heads` heads with `head` pressed; none unless `visible`. */
  render({ heads, head, visible }) {
    const shown = `${visible}|${heads}|${head}`;
    if (shown === this.#shown) return;
    this.#shown = shown;
    const { label, labelClass, buttonClass = '', hide = false, itemName = 'head', onPick } = this.#options;
    if (hide) this.#host.hidden = !visible;
    if (!visible) {
      this.#host.replaceChildren();
      return;
    }
    this.#host.replaceChildren(el('span', labelClass, label), ...Array.from({ length: heads }, (_, h) => {
      const b = button(buttonClass, String(h + 1), () => onPick(h));
      b.setAttribute('aria-pressed', String(h === head));
      b.setAttribute('aria-label', `${itemName} ${h + 1}`);
      return b;
    }));
  }

  /** Moves the keyboard focus to head h's button. */
  focus(h) {
    this.#host.querySelectorAll('button')[h]?.focus();
  }
}
