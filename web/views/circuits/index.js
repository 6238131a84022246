// The "Circuits" view: what a head does, on the model the page's model session has loaded (the one
// Your model loaded; the shipped english model when none is): two prompts (clean, corrupted) with
// their tokens aligned, two answer tokens (each prompt's most likely next token unless typed), and
// one analysis at a time computed by the core through the session's worker (docs/API.md, "Analysis:
// what a head does"): activation patching over heads, the residual stream or whole sublayers (only
// for prompts of the same length; it may take seconds, the page stays responsive), direct logit
// attribution, the logit lens and attention rollout; a head clicked opens its pattern and from there
// the walkthrough. Presets: IOI and factual recall (a checkpoint with a word-level vocabulary) and
// induction on repeated random tokens (any model). The prompts, answers, analysis and rollout layer
// live in the URL (settings circuitClean, circuitCorrupt, circuitA, circuitB, circuitShow,
// circuitLayer). This file is the controller; prompts.js, draw.js and head-pattern.js draw.
import { $ } from '../../shared/dom.js';
import { embedSource, openEmbed, weightsFileFacts } from '../../shared/embed-dialog.js';
import { modelProvenance, PROJECT_VERSION } from '../../shared/exporting.js';
import { makeCircuitsSnapshot, snapshotProvenance } from '../../api/snapshot.js';
import { openLayer } from '../../shared/opened-layers.js';
import { countPageState, setPageState } from '../../shared/page-state.js';
import { CIRCUIT_ANALYSES, DEFAULTS } from '../../shared/state.js';
import { displayToken } from '../../shared/labels.js';
import { setFooter } from '../../page-settings.js';
import { CircuitsDrawing, EXPLAIN } from './draw.js';
import { headPattern } from './head-pattern.js';
import { FACTUAL, INDUCTION_SHOW, IOI, presetRefused, WORD_PRESETS, wordPresetsRefused } from './presets.js';
import { drawAnswer, drawModel, drawPresetRefusals, drawPrompts } from './prompts.js';

const PATCHING = new Set(['heads', 'residual', 'layers']);
/** Analyses cheap enough (a forward or two) to run again at each keystroke. */
const CHEAP = new Set(['lens', 'rollout', 'attribution']);
/** The seed of the induction preset's random tokens. */
const INDUCTION_SEED = 1;

class CircuitsController {
  #store;
  #session;
  #startModel;
  #active = false;
  #dirty = true; // the inputs changed while the view was hidden
  #seq = 0; // the inputs' reads (prompts, answers)
  #runSeq = 0; // the analyses
  #reading = null; // the read in flight
  #readAgain = null; // { explicit }: asked again while one ran
  #prompts = null; // the session's { clean, corrupted }
  #gate = { patchable: false, why: '', clean: false };
  #answers = [null, null]; // [{ id, text } | { error } | null]
  #shownKey = ''; // the analysis drawn: its inputs
  #typed = false; // the settings change came from typing here
  #openedOnInduction = ''; // the model whose untouched default prompts were swapped for the induction preset
  #fit = null; // { model, refusals: Promise<{ ioi, factual }> }: why each word preset cannot run on the loaded model
  #fitSeq = 0;
  #drawing;
  #head;
  #headDrawn = {}; // the head pattern's provenance: the model and clean prompt it was computed on

  constructor({ store, session, startModel }) {
    this.#store = store;
    this.#session = session;
    this.#startModel = startModel;
    this.#drawing = new CircuitsDrawing({ onHead: (layer, head) => this.#showHead(layer, head) });
    this.#head = headPattern({ onWalkthrough: (layer, head) => this.#openInWalkthrough(layer, head),
      provenance: () => ({ ...this.#headDrawn }) });
    this.#wire();
  }

  #settings() {
    return this.#store.get().settings;
  }

  #model() {
    const { model, loading } = this.#store.get().yourModel;
    return loading ? null : model;
  }

  /** A patch of the page's settings (the URL follows); whether anything changed. */
  #setSettings(patch, { typed = false } = {}) {
    const now = this.#settings();
    if (Object.entries(patch).every(([k, v]) => now[k] === v)) return false;
    this.#typed = typed;
    this.#store.update(({ settings }) => ({ settings: { ...settings, ...patch } }));
    this.#typed = false;
    return true;
  }

  /** The settings into the fields (a link, a preset), leaving the field being typed in alone. */
  #fieldsFromSettings() {
    const s = this.#settings();
    const fields = { 'circuits-clean': s.circuitClean, 'circuits-corrupt': s.circuitCorrupt, 'circuits-answer-a': s.circuitA,
      'circuits-answer-b': s.circuitB };
    for (const [id, value] of Object.entries(fields)) if ($(id).value !== value) $(id).value = value;
    for (const radio of document.querySelectorAll('input[name="circuits-show"]')) radio.checked = radio.value === s.circuitShow;
    $('circuits-explain').textContent = EXPLAIN[s.circuitShow] ?? '';
  }

  /** The view shown: the model session started (its first model loaded by Your model), the inputs read. */
  activate() {
    this.#active = true;
    this.#fieldsFromSettings();
    this.#startModel();
    this.#drawModelLine();
    if (this.#dirty) this.#read({ explicit: true });
  }

  /** Theme or size changed. */
  render() {
    this.#drawing.redraw();
    this.#head.redraw();
  }

  #drawModelLine() {
    const { model, loading, lastRun } = this.#store.get().yourModel;
    drawModel(model, loading, lastRun?.ablated ?? []);
    const mine = ++this.#fitSeq;
    if (!model || loading) {
      const wait = loading ? 'The presets wait for the model loading in Your model.' : 'The presets need a model: loading the shipped english model.';
      drawPresetRefusals({ ioi: wait, induction: wait, factual: wait });
      return;
    }
    this.#wordPresets(model).then((refusals) => {
      if (mine !== this.#fitSeq) return;
      drawPresetRefusals({ ...refusals, induction: null });
      setPageState({ circuitsPresets: this.#modelKey(model) });
    });
  }

  /** A model as 'source:name' (the page's circuitsPresets fact, the induction preset's once-per-model). */
  #modelKey(model) {
    return `${model.source}:${model.name ?? model.id ?? model.fileName}`;
  }

  /**
   * Why each word preset cannot run on `model` ({ ioi, factual }: text, or null when it runs): a
   * character model at once, a checkpoint from how its tokenizer reads the preset (the session's
   * circuitPresetFit, asked once per model).
   */
  #wordPresets(model) {
    if (this.#fit?.model === model) return this.#fit.refusals;
    const refused = wordPresetsRefused(model);
    const presets = Object.fromEntries(Object.entries(WORD_PRESETS).map(([name, { clean, corrupted, answers }]) => [name, { clean, corrupted, answers }]));
    const refusals = refused ? Promise.resolve({ ioi: refused, factual: refused })
      : this.#session.call('circuitPresetFit', { presets }).then((spelled) => Object.fromEntries(Object.entries(WORD_PRESETS)
        .map(([name, preset]) => [name, presetRefused(preset.title, spelled[name])])), () => {
        this.#fit = null; // asked again next time
        return { ioi: null, factual: null }; // the analyses will say what fails
      });
    this.#fit = { model, refusals };
    return refusals;
  }

  #status(text, error = false) {
    $('circuits-status').textContent = error ? '' : text;
    $('circuits-error').hidden = !error;
    $('circuits-error').textContent = error ? text : '';
  }

  /**
   * The prompts and answers read by the model (one read at a time: asked again while one runs, the
   * newest inputs are read once it ends); then the analysis, when `explicit` (a preset, a link, the
   * view shown, the analysis chosen) or cheap.
   */
  #read({ explicit = false } = {}) {
    if (this.#reading) {
      this.#readAgain = { explicit: explicit || (this.#readAgain?.explicit ?? false) };
      return this.#reading;
    }
    this.#reading = this.#readNow(explicit).finally(() => {
      this.#reading = null;
      const again = this.#readAgain;
      this.#readAgain = null;
      if (again) this.#read(again);
    });
    return this.#reading;
  }

  async #readNow(explicit) {
    if (!this.#active) {
      this.#dirty = true;
      return;
    }
    const model = this.#model();
    if (!model) {
      this.#drawing.clear(this.#store.get().yourModel.loading ? 'Waiting for the model to load…' : 'Waiting for a model…');
      return;
    }
    this.#dirty = false;
    const mine = ++this.#seq;
    const s = this.#settings();
    // A model that cannot read the IOI default (a character vocabulary: both prompts' next token is
    // the same, so the answers would be one token) opens on the induction preset, which any model
    // reads — unless the prompts or answers were typed or came from a link.
    const untouched = ['circuitClean', 'circuitCorrupt', 'circuitA', 'circuitB'].every((key) => s[key] === DEFAULTS[key]);
    const key = this.#modelKey(model);
    if (untouched && wordPresetsRefused(model) && this.#openedOnInduction !== key) {
      this.#openedOnInduction = key;
      this.#preset('induction', { keepShow: true });
      return;
    }
    let prompts;
    try {
      prompts = await this.#session.call('circuitPrompts', { clean: s.circuitClean, corrupted: s.circuitCorrupt });
    } catch (error) {
      if (mine === this.#seq) this.#status(error.message, true);
      return;
    }
    if (mine !== this.#seq) return;
    this.#prompts = prompts;
    this.#gate = drawPrompts(prompts);
    await this.#resolveAnswers(mine);
    if (mine !== this.#seq) return;
    countPageState('circuitsReads');
    const kind = this.#settings().circuitShow;
    if (this.#key(kind) === this.#shownKey && !explicit) return; // drawn already
    if (explicit || CHEAP.has(kind)) await this.#analyse();
    else {
      this.#drawing.clear('The inputs changed: press Analyse to patch again (it runs the model hundreds of times).');
      this.#shownKey = '';
      this.#status('');
    }
  }

  /** Each answer box's text, or its prompt's suggested next token, as one token id. */
  async #resolveAnswers(mine) {
    const s = this.#settings();
    const { clean, corrupted } = this.#prompts;
    const suggested = [clean.next ?? null, corrupted.next ?? null];
    const typed = [s.circuitA, s.circuitB];
    const texts = typed.map((t, i) => t || suggested[i]?.text || '');
    let resolved = [null, null];
    if (texts.some(Boolean)) {
      try {
        resolved = await this.#session.call('circuitAnswers', { answers: texts });
      } catch (error) {
        resolved = texts.map(() => ({ error: error.message }));
      }
    }
    if (mine !== this.#seq) return;
    this.#answers = resolved.map((r, i) => (texts[i] ? r : null));
    ['a', 'b'].forEach((which, i) => drawAnswer(which, this.#answers[i], { typed: Boolean(typed[i]), suggested: suggested[i],
      prompt: i === 0 ? 'clean' : 'corrupted' }));
  }

  /** The inputs an analysis of `kind` reads (a drawn analysis with the same key needs no rerun). */
  #key(kind) {
    const s = this.#settings();
    const { model, lastRun } = this.#store.get().yourModel;
    return JSON.stringify([kind, model?.source, model?.name ?? model?.id ?? model?.fileName, lastRun?.ablated ?? [], s.circuitClean,
      PATCHING.has(kind) ? s.circuitCorrupt : '', this.#answers.map((a) => a?.id ?? null)]);
  }

  /** The analysis the settings choose, on the inputs read; why not, when it cannot run. */
  async #analyse() {
    const kind = this.#settings().circuitShow;
    const mine = ++this.#runSeq;
    const s = this.#settings();
    const model = this.#model();
    const fail = (message) => {
      this.#drawing.clear();
      this.#shownKey = '';
      this.#status(message, true);
      setPageState({ circuitsRunning: false, circuitsError: kind });
    };
    if (!model || !this.#prompts) return fail('Waiting for the model.');
    if (!this.#gate.clean) return fail(this.#gate.why);
    if (PATCHING.has(kind) && !this.#gate.patchable) return fail(this.#gate.why);
    const [a, b] = this.#answers;
    const needsAnswers = kind !== 'lens' && kind !== 'rollout';
    if (needsAnswers) {
      if (!a || a.error || !b || b.error) return fail(`${kind === 'attribution' ? 'Attribution' : 'Patching'} needs two answers of one token each (see the answer boxes).`);
      if (a.id === b.id) return fail(`Answers a and b are the same token (“${displayToken(a.text)}”): logit[a] − logit[b] is always 0. Type another answer.`);
    }
    const key = this.#key(kind);
    const { config } = model;
    const n = this.#prompts.clean.n;
    const what = { heads: `Patching ${config.layers * config.heads} heads…`, residual: `Patching the residual stream at ${config.layers * n} sites…`,
      layers: `Patching ${2 * config.layers} sublayers…`, attribution: 'Attributing the logit difference…', lens: 'Reading every layer…',
      rollout: 'Rolling out attention…' }[kind];
    this.#status(what);
    $('circuits-run').disabled = true;
    setPageState({ circuitsRunning: true });
    const answers = [a?.id, b?.id];
    let result;
    try {
      result = await this.#session.call('circuit', { kind, text: s.circuitClean, clean: s.circuitClean, corrupted: s.circuitCorrupt,
        answers: needsAnswers ? answers : undefined, token: a && !a.error ? a.id : undefined });
    } catch (error) {
      if (mine === this.#runSeq) {
        $('circuits-run').disabled = false;
        fail(error.message);
      }
      return;
    }
    if (mine !== this.#runSeq) return;
    $('circuits-run').disabled = false;
    this.#shownKey = key;
    this.#drawing.draw(result, config, { model: this.#modelName(model), source: modelProvenance(model), clean: s.circuitClean, corrupted: s.circuitCorrupt,
      answers: [a, b].map((x) => (x && !x.error ? { text: x.text, id: x.id } : null)), layer: s.circuitLayer });
    const seconds = result.computeMs / 1000;
    this.#status(`${kind === 'heads' || kind === 'residual' || kind === 'layers' ? 'Patched' : 'Computed'} in ${seconds < 0.1
      ? `${result.computeMs.toFixed(0)} ms` : `${seconds.toFixed(2)} s`} in the model worker.`);
    setFooter(this.#store, 'circuits', `${this.#modelName(model)}: ${kind} on ${n} tokens in ${result.computeMs.toFixed(0)} ms in the model worker`);
    setPageState({ circuitsRunning: false, circuitsError: '', circuitsShown: kind });
    countPageState('circuitsDrawn');
  }

  /** The analysis drawn as a snapshot (api/snapshot.js) with the model's provenance; for the Embed dialog. */
  async snapshot() {
    const shown = this.#drawing.shown;
    const model = this.#model();
    if (!shown || !model) throw new Error('run an analysis first.');
    const { result, context, config } = shown;
    const files = model.source === 'files' ? await weightsFileFacts(model.weightsFiles) : undefined;
    const settings = { view: 'circuits', analysis: result.kind, ...(result.kind === 'rollout' ? { layer: context.layer + 1 } : {}),
      ...(result.ablated?.length ? { knockedOut: result.ablated.map((h) => `L${h.layer + 1}H${h.head + 1}`).join(' ') } : {}) };
    const snapshot = makeCircuitsSnapshot({ result, config, context,
      provenance: snapshotProvenance(model, { files, text: context.clean, settings, version: PROJECT_VERSION }) });
    return { snapshot, fileName: `circuits-${result.kind}.json`, what: `${result.kind === 'heads' ? 'patching every head'
      : result.kind === 'residual' ? 'patching the residual stream' : result.kind === 'layers' ? 'patching every sublayer'
        : result.kind === 'attribution' ? 'direct logit attribution' : result.kind === 'lens' ? 'the logit lens' : 'attention rollout'} of ${config.layers} layers` };
  }

  #modelName(model) {
    return model.source === 'shipped' ? model.name : model.source === 'hub' ? model.id : model.fileName;
  }

  async #showHead(layer, head) {
    const text = this.#settings().circuitClean;
    const drawn = { view: 'circuits', model: modelProvenance(this.#model()), clean: text };
    try {
      this.#head.show(await this.#session.call('circuit', { kind: 'head', text, layer, head }));
      this.#headDrawn = drawn;
    } catch (error) {
      this.#head.error(error.message);
    }
  }

  /** A head into the walkthrough on the clean prompt, as the Your model view opens one. */
  async #openInWalkthrough(layer, head) {
    const model = this.#model();
    if (!model) return;
    const text = this.#settings().circuitClean;
    if (model.source === 'shipped') {
      this.#store.update(({ settings }) => ({ openedLayer: null,
        settings: { ...settings, model: model.name, layer, head, text, tab: 'walkthrough' } }));
      return;
    }
    try {
      const { family, config } = model;
      const opened = openLayer(await this.#session.call('layer', { layer, text }), { source: 'checkpoint', layer, head, family,
        modelConfig: { layers: config.layers, positional: config.positional, norm: config.norm } });
      this.#store.update(({ settings }) => ({ openedLayer: opened, settings: { ...settings, tab: 'walkthrough', head }, pinned: null }));
    } catch (error) {
      this.#head.error(error.message);
    }
  }

  /** A preset's prompts and answers (and its analysis, unless `keepShow`: the one shown stays). */
  async #preset(which, { keepShow = false } = {}) {
    const model = this.#model();
    const note = $('circuits-preset-note');
    note.dataset.said = '1';
    if (which === 'induction') {
      try {
        const p = await this.#session.call('circuitInduction', { seed: INDUCTION_SEED });
        note.textContent = 'Induction: seeded random tokens, then the same again (clean) or other ' +
          'random tokens (corrupted); a = the token that came next the first time, b = the corrupted stream\u2019s.';
        if (!this.#setSettings({ circuitClean: p.clean, circuitCorrupt: p.corrupted, circuitA: p.answers[0], circuitB: p.answers[1],
          circuitShow: keepShow ? this.#settings().circuitShow : INDUCTION_SHOW })) this.#read({ explicit: true });
      } catch (error) {
        note.textContent = `Induction: ${error.message}`;
      }
      return;
    }
    const refused = model ? (await this.#wordPresets(model))[which] : wordPresetsRefused(model);
    if (refused) {
      note.textContent = refused;
      return;
    }
    const p = which === 'ioi' ? IOI : FACTUAL;
    note.textContent = which === 'ioi'
      ? 'Indirect object identification (Wang et al. 2022): which heads move the right name to the end?'
      : 'Factual recall: where, over positions and layers, does the subject\u2019s fact enter the residual stream?';
    if (!this.#setSettings({ circuitClean: p.clean, circuitCorrupt: p.corrupted, circuitA: p.answers[0], circuitB: p.answers[1],
      circuitShow: p.show })) this.#read({ explicit: true });
  }

  #wire() {
    embedSource('circuits', () => this.snapshot());
    $('circuits-embed').addEventListener('click', () => openEmbed(() => this.snapshot()));
    $('circuits-to-model').addEventListener('click', () => this.#store.update(({ settings }) => ({ settings: { ...settings, tab: 'model' } })));
    $('circuits-clean').addEventListener('input', () => this.#setSettings({ circuitClean: $('circuits-clean').value }, { typed: true }));
    $('circuits-corrupt').addEventListener('input', () => this.#setSettings({ circuitCorrupt: $('circuits-corrupt').value }, { typed: true }));
    $('circuits-answer-a').addEventListener('input', () => this.#setSettings({ circuitA: $('circuits-answer-a').value }, { typed: true }));
    $('circuits-answer-b').addEventListener('input', () => this.#setSettings({ circuitB: $('circuits-answer-b').value }, { typed: true }));
    $('circuits-show').addEventListener('change', (e) => {
      if (CIRCUIT_ANALYSES.includes(e.target.value)) this.#setSettings({ circuitShow: e.target.value });
    });
    $('circuits-run').addEventListener('click', () => this.#read({ explicit: true }));
    $('circuits-rollout-layer').addEventListener('input', () => this.#setSettings({ circuitLayer: Number($('circuits-rollout-layer').value) }));
    $('circuits-preset-ioi').addEventListener('click', () => this.#preset('ioi'));
    $('circuits-preset-factual').addEventListener('click', () => this.#preset('factual'));
    $('circuits-preset-induction').addEventListener('click', () => this.#preset('induction'));
    this.#store.subscribe((now, before) => {
      const m = now.yourModel;
      const b = before.yourModel;
      const modelChanged = m.model !== b.model || m.loading !== b.loading;
      const ablationChanged = JSON.stringify(m.lastRun?.ablated ?? []) !== JSON.stringify(b.lastRun?.ablated ?? []);
      if (modelChanged || ablationChanged) {
        this.#drawModelLine();
        if (m.model !== b.model) {
          this.#head.hide();
          this.#shownKey = '';
        }
        if (!m.loading) this.#read({ explicit: true });
      }
      if (now.settings === before.settings) return;
      const s = now.settings;
      const p = before.settings;
      const typed = this.#typed;
      const shown = s.circuitShow !== p.circuitShow;
      const inputs = ['circuitClean', 'circuitCorrupt', 'circuitA', 'circuitB'].some((k) => s[k] !== p[k]);
      if (shown || (inputs && !typed)) this.#fieldsFromSettings();
      if (shown || inputs) this.#read({ explicit: shown || !typed });
      else if (s.circuitLayer !== p.circuitLayer) this.#drawing.setLayer(s.circuitLayer);
    });
  }

}

/**
 * @param {{store: object, session: import('../../shared/model-session/session-client.js').ModelSession,
 *   startModel: () => void}} context startModel: the Your model view's first load (its shipped model) when none is loaded yet
 * @returns {{render: () => void, activate: () => void}}
 */
export function mountCircuits(context) {
  const controller = new CircuitsController(context);
  setPageState({ circuitsMounted: true });
  return {
    render: () => controller.render(),
    activate: () => controller.activate(),
  };
}
