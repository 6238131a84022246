// The Train view's controls: the run's settings (task, layers, heads, d_model, context, learning
// rate, batch, seed) and the probe field, kept in step with the page's settings (the URL).
import { $ } from '../../shared/dom.js';

const FIELDS = [
  { id: 'train-task', key: 'task', read: (v) => v },
  { id: 'train-layers', key: 'layers', read: Number },
  { id: 'train-heads', key: 'trainHeads', read: (v) => v },
  { id: 'train-dmodel', key: 'trainDModel', read: (v) => v },
  { id: 'train-context', key: 'context', read: (v) => integerIn(v, 8, 128) },
  { id: 'train-lr', key: 'lr', read: (v) => (/^\s*[\d.]+(e-?\d+)?\s*$/i.test(v) && Number(v) > 0 && Number(v) <= 1e6 ? Number(v) : undefined) },
  { id: 'train-batch', key: 'batch', read: (v) => integerIn(v, 1, 256) },
  { id: 'train-seed', key: 'trainSeed', read: (v) => integerIn(v, 0, 4294967295) },
];

function integerIn(v, min, max) {
  const n = Number(v);
  return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

/** Fills the task menu from the catalog. */
export function buildTrainMenus(tasks) {
  $('train-task').replaceChildren(...tasks.map((t) => new Option(t, t)));
}

/** Shows `settings` in the controls (the probe field only while it is not being typed in). */
export function syncTrainControls(settings, probeText) {
  for (const f of FIELDS) {
    const value = String(settings[f.key]);
    if ($(f.id).value !== value) $(f.id).value = value;
  }
  const probe = $('train-probe');
  if (document.activeElement !== probe && probe.value !== probeText) probe.value = probeText;
}

/** Wires the controls to `setSettings(patch)`; an invalid number goes back to the setting. */
export function wireTrainControls(store, setSettings) {
  for (const f of FIELDS) {
    $(f.id).addEventListener('change', () => {
      const value = f.read($(f.id).value);
      if (value === undefined) {
        $(f.id).value = String(store.get().settings[f.key]);
        return;
      }
      // Another task's vocabulary cannot encode the old probe: back to the task's example.
      setSettings(f.key === 'task' ? { task: value, probe: '' } : { [f.key]: value });
    });
  }
  $('train-probe').addEventListener('input', (e) => setSettings({ probe: e.target.value }, e.timeStamp));
}
