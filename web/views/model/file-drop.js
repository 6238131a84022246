// How a model's files come into the Your model tab: dropped anywhere on it (an overlay says so while
// files are dragged over the tab) or picked with the file input of "Your own files", which the
// "Open files…" button beside Load opens too. Each load's line goes beside where its files came in.
import { $, el } from '../../shared/dom.js';

/** Whether a drag carries files (not text or a link dragged within the page). */
const carriesFiles = (e) => Array.from(e.dataTransfer?.types ?? []).includes('Files');

/**
 * Files dropped on `view` (the tab) or picked go to `onFiles(files, near)`: `near` the element the
 * load's line follows (the drop zone of "Your own files", or the Hub form that holds Open files…).
 */
export function wireFileDrop(view, onFiles) {
  const zone = $('model-drop');
  const picker = $('model-files');
  const open = $('model-open-files');
  const overlay = el('div', 'file-drop-overlay');
  overlay.hidden = true;
  overlay.setAttribute('aria-hidden', 'true');
  overlay.append(el('p', '', 'Drop to load: model.safetensors with config.json (and its tokenizer files), or one .gguf file'));
  view.append(overlay);

  // dragenter and dragleave come in pairs for every element crossed: the tab is left when they even out.
  let depth = 0;
  const show = (on) => {
    overlay.hidden = !on;
  };
  view.addEventListener('dragenter', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    depth += 1;
    show(true);
  });
  view.addEventListener('dragover', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault(); // a drop is taken here
    e.dataTransfer.dropEffect = 'copy';
  });
  view.addEventListener('dragleave', (e) => {
    if (!carriesFiles(e)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) show(false);
  });
  view.addEventListener('drop', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    depth = 0;
    show(false);
    onFiles(Array.from(e.dataTransfer.files), zone.contains(e.target) ? zone : open.closest('form'));
  });

  let pickedFrom = zone; // where the picker was opened
  picker.addEventListener('click', () => {
    pickedFrom = zone;
  });
  open.addEventListener('click', () => {
    picker.click();
    pickedFrom = open.closest('form');
  });
  picker.addEventListener('change', () => {
    const files = Array.from(picker.files);
    Promise.resolve(onFiles(files, pickedFrom)).finally(() => {
      picker.value = '';
    });
  });
}
