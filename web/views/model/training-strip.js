// The Your model view's "Across training" strip: for a loaded Pythia Hub model (a listed entry
// with training checkpoints as revisions, hub-models.js), the head finder's scores of every head
// at the checkpoints the reader ticks, read one revision at a time in a model session of the strip's
// own (a second worker, session.another(): the view's loaded model is never touched), with
// the download's progress, Cancel (the session's Hub load aborted through its AbortSignal; the
// checkpoints read so far stay) and the browser's kept files (a rerun reads them: no request).
// Drawn as one small layers × heads heatmap per checkpoint (induction or previous-token score; each
// with its screen-reader table) and one head's score over the checkpoints as a line; JSON / CSV
// export. Each checkpoint gets a session of its own, closed once its scores are read: at most one
// checkpoint is in memory beside the view's model. Every number is model.headScores' in that
// session; training-data.js holds the DOM-free parts.
import { $, el } from '../../shared/dom.js';
import { csvText, download, exportButtons, svgElementFigure } from '../../shared/exporting.js';
import { gridSvg } from '../../shared/svg-figure.js';
import { formatNumber } from '../../shared/format.js';
import { Heatmap, probabilityLegend } from '../../shared/heatmap.js';
import { setPageState } from '../../shared/page-state.js';
import { hubEntry } from '../../shared/hub-models.js';
import { bestHead, defaultRevisions, headName, progressLine, scoreMatrix, stepOf, trainingJson, trainingOrder, trainingRows,
  TRAINING_SCORES } from './training-data.js';

const SVG = 'http://www.w3.org/2000/svg';
const TILE_WIDTH = 112; // px: a checkpoint's heatmap (its cells whole pixels, 6 … 14 px)

/** A loaded model's listed entry with training checkpoints, and the Hub request that reads it: { entry, hub, endpoint } or null. */
export function trainingSource(model) {
  if (model?.source !== 'hub') return null;
  const url = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(model.id) ? new URL(model.id) : null; // a repo's URL: its origin is the endpoint
  const entry = hubEntry(url ? url.pathname.replace(/^\/+|\/+$/g, '') : model.id);
  if (!entry?.revisions) return null;
  return { entry, hub: model.id, endpoint: url ? undefined : model.endpoint ?? undefined };
}

/** '143k', '2k', '512', '0': a step on the line's axis. */
const stepLabel = (revision) => {
  const step = stepOf(revision);
  if (step === null) return revision;
  return step >= 1000 && step % 1000 === 0 ? `${step / 1000}k` : String(step);
};

const svg = (tag, attributes = {}, text) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
};

export class TrainingStrip {
  #session; // the page's model session: the strip's own is another() of it
  #source = null; // trainingSource of the loaded model
  #run = null; // the run in flight: { session, cancelled }
  #results = []; // [{ revision, scores, config }] in training order
  #probeLength = 0;
  #key = 'induction';
  #picked = null; // { layer, head } clicked in a heatmap; null: the best head
  #maps = []; // the heatmaps drawn, one per result

  #onRunEnded;

  /**
   * @param {{session: import('../../shared/model-session/session-client.js').ModelSession, onRunEnded?: () => void}} context
   *   onRunEnded: after each run (the Hub files the browser keeps may have changed)
   */
  constructor({ session, onRunEnded = () => {} }) {
    this.#session = session;
    this.#onRunEnded = onRunEnded;
    $('model-training-run').addEventListener('click', () => this.#start());
    $('model-training-cancel').addEventListener('click', () => this.#cancel());
    for (const id of ['model-training-induction', 'model-training-previous']) {
      $(id).addEventListener('click', () => {
        this.#key = $(id).dataset.key;
        this.#draw();
      });
    }
    $('model-training-json').addEventListener('click', () => this.#export('json'));
    $('model-training-csv').addEventListener('click', () => this.#export('csv'));
    probabilityLegend($('model-training-legend'));
    // The bar's colours are those of attention weights; a score is a mean of them, 0 … 1.
    $('model-training-legend').querySelector('.legend-name').textContent = 'score: a mean attention weight, 0 … 1';
  }

  /** A model was loaded in the view: the strip shown for a listed Pythia (its checkpoints offered), else hidden; a run for another model ends. */
  modelLoaded(model) {
    const source = trainingSource(model);
    const same = source && this.#source && source.entry.id === this.#source.entry.id && source.endpoint === this.#source.endpoint;
    if (!same) {
      this.#cancel();
      this.#results = [];
      this.#picked = null;
      $('model-training-result').hidden = true;
      this.#status('');
      this.#error(null);
    }
    this.#source = source;
    $('model-training').hidden = !source;
    if (source && !same) this.#drawChecks(source.entry);
  }

  /** The checkpoints' boxes: the default spread ticked, the entry's others under "More checkpoints". */
  #drawChecks(entry) {
    const ticked = defaultRevisions(entry.revisions);
    const box = (revision, checked) => {
      const label = el('label', 'model-training-check');
      const input = el('input');
      Object.assign(input, { type: 'checkbox', name: 'model-training-revision', value: revision, checked });
      label.append(input, document.createTextNode(` ${revision}`));
      return label;
    };
    $('model-training-checks').replaceChildren(...ticked.map((r) => box(r, true)));
    const others = entry.revisions.filter((r) => !ticked.includes(r));
    $('model-training-others').replaceChildren(...others.map((r) => box(r, false)));
    $('model-training-more-summary').textContent = `More checkpoints (${others.length})`;
    $('model-training-more').hidden = others.length === 0;
  }

  #ticked() {
    return trainingOrder([...document.querySelectorAll('#model-training input[name="model-training-revision"]:checked')].map((i) => i.value));
  }

  #status(text) {
    $('model-training-status').textContent = text;
  }

  #error(message) {
    $('model-training-error').hidden = !message;
    $('model-training-error').textContent = message ?? '';
  }

  #busy(running) {
    $('model-training-run').disabled = running;
    $('model-training-cancel').hidden = !running;
    $('model-training-cancel').disabled = false;
    $('model-training-progress-row').hidden = !running;
    for (const input of document.querySelectorAll('#model-training input[name="model-training-revision"]')) input.disabled = running;
  }

  /**
   * Run: the ticked checkpoints in training order, each in a model session of its own (another
   * worker: loaded, its head scores read and drawn at once, then closed, so at most one checkpoint
   * is in memory beside the view's model), its progress on the status line and bar.
   */
  async #start() {
    if (this.#run || !this.#source) return;
    const revisions = this.#ticked();
    this.#error(null);
    if (!revisions.length) {
      this.#error('Tick at least one checkpoint to read.');
      return;
    }
    const { hub, endpoint, entry } = this.#source;
    const run = { session: null, cancelled: false };
    this.#run = run;
    this.#results = [];
    this.#picked = null;
    this.#busy(true);
    setPageState({ trainingRun: 'running', trainingDone: 0 });
    let current = '';
    let downloaded = false;
    let fromCache = 0;
    const onProgress = (update) => {
      if (update.progress === undefined) return;
      if (update.phase === 'download') downloaded = true;
      $('model-training-progress').value = update.progress;
      this.#status(`${progressLine(current, update)} · checkpoint ${this.#results.length + 1} of ${revisions.length}`);
    };
    let failed = null;
    try {
      for (const revision of revisions) {
        if (run.cancelled) break;
        current = revision;
        downloaded = false;
        $('model-training-progress').value = 0;
        this.#status(`${revision}: asking ${entry.name}'s files · checkpoint ${this.#results.length + 1} of ${revisions.length}`);
        run.session = this.#session.another();
        run.session.onUpdate(onProgress);
        try {
          const loaded = await run.session.call('hub', { hub, ...(endpoint ? { endpoint } : {}), revision });
          if (run.cancelled) break;
          this.#status(`${revision}: the head finder's probe · checkpoint ${this.#results.length + 1} of ${revisions.length}`);
          const { scores, probeLength } = await run.session.call('scores');
          if (!downloaded) fromCache += 1;
          this.#probeLength = probeLength;
          this.#results.push({ revision, scores, config: loaded.config });
        } finally {
          run.session.close();
        }
        this.#draw();
        setPageState({ trainingDone: this.#results.length });
      }
    } catch (error) {
      if (!run.cancelled) failed = `Could not read ${current}: ${error.message}`;
    } finally {
      this.#run = null;
      const focused = document.activeElement;
      this.#busy(false);
      // Cancel hid itself: the focus it had goes back to Run.
      if (focused === $('model-training-cancel') || focused === document.body || !focused) $('model-training-run').focus();
    }
    const done = this.#results.length;
    const kept = fromCache ? ` (${fromCache === done ? 'all' : fromCache} from the browser's kept files)` : '';
    if (failed) this.#error(`${failed}. The ${done} checkpoint${done === 1 ? '' : 's'} read before it stay drawn.`);
    this.#status(run.cancelled ? `Cancelled: ${done} of ${revisions.length} checkpoints read${kept}.`
      : failed ? '' : `${done} checkpoint${done === 1 ? '' : 's'} read${kept}.`);
    this.#onRunEnded();
    setPageState({ trainingRun: run.cancelled ? 'cancelled' : failed ? 'failed' : 'done' });
  }

  /** Cancel: the load in flight aborted (the strip's session passes it to the Hub loader's AbortSignal); no further checkpoint is asked. */
  #cancel() {
    const run = this.#run;
    if (!run || run.cancelled) return;
    run.cancelled = true;
    $('model-training-cancel').disabled = true;
    this.#status('Cancelling…');
    run.session?.call('cancel').catch(() => {}); // a closed session: nothing left to cancel
  }

  /** The score's name shown ('Induction'). */
  #label() {
    return TRAINING_SCORES.find(([key]) => key === this.#key)[1];
  }

  /** The strip (a heatmap per checkpoint read) and the line of the picked or best head. */
  #draw() {
    const results = this.#results;
    $('model-training-result').hidden = results.length === 0;
    for (const id of ['model-training-induction', 'model-training-previous']) {
      $(id).setAttribute('aria-pressed', String($(id).dataset.key === this.#key));
    }
    if (!results.length) return;
    const label = this.#label();
    const { layers, heads } = results[0].config;
    $('model-training-strip-info').textContent = `Each head's ${label.toLowerCase()} score (model.headScores on ${this.#probeLength / 2} ` +
      'seeded random tokens repeated once, as the head finder) at each checkpoint read: rows are layers, columns heads. ' +
      'Hover a cell to read it; click one to follow that head in the line below.';
    const host = $('model-training-strip');
    // Tiles of TILE_WIDTH, or three to a row where the strip is narrower (a phone).
    const room = host.clientWidth || 2 * TILE_WIDTH;
    const tile = room < 4 * TILE_WIDTH ? Math.min(TILE_WIDTH, Math.floor((room - 2 * 12) / 3)) : TILE_WIDTH;
    const cell = Math.max(4, Math.min(14, Math.floor(tile / heads)));
    // One tile per checkpoint, kept across redraws (a new checkpoint appends one).
    while (host.children.length > results.length) host.lastElementChild.remove();
    this.#maps.length = Math.min(this.#maps.length, results.length);
    results.forEach(({ revision, scores, config }, i) => {
      let box = host.children[i];
      if (!box || box.dataset.revision !== revision) {
        box = el('div', 'model-training-tile');
        box.dataset.revision = revision;
        const map = el('div', 'model-training-map');
        box.append(el('p', 'model-training-step', revision), map);
        if (host.children[i]) host.children[i].replaceWith(box);
        else host.append(box);
        this.#maps[i] = new Heatmap(map, { labels: false, legend: false, caption: false, compact: true, maxCell: 14,
          onHover: (at) => this.#hover(revision, at), onActivate: (at) => this.#pick(at) });
      }
      const matrix = scoreMatrix(scores, this.#key, config);
      this.#maps[i].render({ ...matrix, rowLabels: Array.from({ length: layers }, (_, l) => `L${l + 1}`),
        colLabels: Array.from({ length: heads }, (_, h) => `H${h + 1}`), rowAxis: 'layer', colAxis: 'head',
        title: `${label} score of every head at ${revision}`, scale: 'probability', missing: 'not measured' }, { width: cell * heads });
    });
    this.#drawLine();
    this.#figureExports();
  }

  // SVG / PNG / Copy figure of the checkpoints' maps (one figure, svg-figure.js's gridSvg) and of the line.
  #figureExports() {
    if ($('model-training-exports').childElementCount) return; // built once: what they export is read at click time
    const provenance = () => ({ view: 'your model: across training', model: this.#source?.entry.id, score: this.#key,
      probeTokens: this.#probeLength, revisions: this.#results.map((r) => r.revision) });
    const json = () => trainingJson({ id: this.#source.entry.id, probeLength: this.#probeLength, results: this.#results });
    const maps = { toSvg: (facts) => {
      const drawn = this.#maps.map((map, i) => ({ map, revision: this.#results[i]?.revision })).filter(({ map, revision }) => map?.matrix && revision);
      if (!drawn.length) return '';
      const { scale, colorScale, logFloor, style } = drawn[0].map;
      const title = `${this.#label()} score of every head at each checkpoint (rows: layers, columns: heads)`;
      const perRow = 6;
      return gridSvg({ title, scale, colorScale, logFloor, style, tile: 80, provenance: { title, ...facts },
        tiles: drawn.map(({ map, revision }, i) => ({ label: revision, row: Math.floor(i / perRow), col: i % perRow,
          positions: map.colorData, rows: map.matrix.rows, cols: map.matrix.cols })),
        description: `${drawn.length} checkpoints, a layer × head heatmap each` });
    } };
    const line = { toSvg: (facts) => {
      const chart = $('model-training-line').querySelector('svg');
      return chart ? svgElementFigure(chart, { title: $('model-training-line-title').textContent,
        note: $('model-training-line').querySelector('.model-training-key')?.textContent ?? '', provenance: facts }) : '';
    } };
    exportButtons($('model-training-exports'), [
      { id: 'across-training-maps', label: 'every head', title: 'Every head at each checkpoint', map: maps, provenance, json },
      { id: 'across-training-line', label: 'the line', title: 'The head\'s score across training', map: line, provenance, json },
    ]);
  }

  #hover(revision, at) {
    if (!at) {
      $('model-training-hover').textContent = '';
      return;
    }
    const s = this.#results.find((r) => r.revision === revision)?.scores.find((x) => x.layer === at.row && x.head === at.col);
    const v = s?.[this.#key];
    $('model-training-hover').textContent = `${revision} · ${headName(at.row, at.col)} · ${this.#label().toLowerCase()} ` +
      `${v === null || v === undefined ? 'not measured' : formatNumber(v, 3)}`;
  }

  #pick(at) {
    this.#picked = this.#picked?.layer === at.row && this.#picked?.head === at.col ? null : { layer: at.row, head: at.col };
    this.#drawLine();
  }

  /**
   * The picked head's (else the best head's: the highest score at the latest checkpoint read)
   * score at each checkpoint as a line, and the highest of any head as a dashed one; the x axis
   * the checkpoints in training order, evenly spaced (the default spread is about log-spaced).
   */
  #drawLine() {
    const results = this.#results;
    const key = this.#key;
    const label = this.#label().toLowerCase();
    const best = bestHead(results, key);
    const head = this.#picked ?? best;
    const host = $('model-training-line');
    if (!head) {
      $('model-training-line-title').textContent = `No head's ${label} score could be measured.`;
      host.replaceChildren();
      return;
    }
    const values = results.map(({ scores }) => scores.find((s) => s.layer === head.layer && s.head === head.head)?.[key] ?? null);
    const highest = results.map(({ scores }) => scores.reduce((m, s) => (s[key] !== null && s[key] > m ? s[key] : m), -Infinity));
    const name = headName(head.layer, head.head);
    $('model-training-line-title').textContent = this.#picked ? `${name}'s ${label} score across training (the head clicked)`
      : `${name}'s ${label} score across training (the highest at ${results.at(-1).revision})`;
    const width = Math.max(280, Math.min(640, host.clientWidth || 640));
    const height = 200;
    const m = { left: 54, right: 16, top: 10, bottom: 48 };
    const w = width - m.left - m.right;
    const h = height - m.top - m.bottom;
    const x = (i) => m.left + (results.length === 1 ? w / 2 : (i * w) / (results.length - 1));
    const y = (v) => m.top + (1 - v) * h;
    const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', class: 'model-training-chart' });
    chart.setAttribute('aria-label', `${name}'s ${label} score at each checkpoint: ` +
      `${results.map((r, i) => `${r.revision} ${values[i] === null ? 'not measured' : formatNumber(values[i], 3)}`).join(', ')}`);
    for (const t of [0, 0.25, 0.5, 0.75, 1]) {
      chart.append(svg('line', { x1: m.left, x2: m.left + w, y1: y(t), y2: y(t), class: 'model-training-grid' }),
        svg('text', { x: m.left - 6, y: y(t) + 4, 'text-anchor': 'end', class: 'model-training-tick' }, String(t)));
    }
    const every = Math.max(1, Math.ceil(results.length / Math.floor(w / 34)));
    results.forEach((r, i) => {
      if (i % every === 0 || i === results.length - 1) {
        chart.append(svg('text', { x: x(i), y: m.top + h + 16, 'text-anchor': 'middle', class: 'model-training-tick' }, stepLabel(r.revision)));
      }
    });
    chart.append(svg('text', { x: m.left + w / 2, y: height - 8, 'text-anchor': 'middle', class: 'axis-name' },
      'training step (checkpoints evenly spaced)'));
    chart.append(svg('text', { x: 12, y: m.top + h / 2, 'text-anchor': 'middle', class: 'axis-name', transform: `rotate(-90 12 ${m.top + h / 2})` },
      `${label} score`));
    const path = (vs) => vs.map((v, i) => (v === null || !Number.isFinite(v) ? null : `${x(i)},${y(v)}`)).filter(Boolean);
    const most = path(highest);
    if (most.length > 1) chart.append(svg('polyline', { points: most.join(' '), class: 'model-training-highest' }));
    const own = path(values);
    if (own.length > 1) chart.append(svg('polyline', { points: own.join(' '), class: 'model-training-head' }));
    values.forEach((v, i) => {
      if (v === null) return;
      const dot = svg('circle', { cx: x(i), cy: y(v), r: 3.5, class: 'model-training-dot' });
      dot.append(svg('title', {}, `${results[i].revision}: ${formatNumber(v, 3)}`));
      chart.append(dot);
    });
    const legend = el('p', 'muted small model-training-key', `Solid line: ${name}. Dashed: the highest ${label} score of any head at each checkpoint.`);
    host.replaceChildren(chart, legend);
  }

  /** The scores read as JSON or CSV (every checkpoint, head and both scores). */
  #export(kind) {
    if (!this.#results.length) return;
    const { entry } = this.#source;
    const stem = `${entry.name}-across-training`;
    if (kind === 'json') {
      download(new Blob([trainingJson({ id: entry.id, probeLength: this.#probeLength, results: this.#results })], { type: 'application/json' }),
        `${stem}.json`);
    } else {
      download(new Blob([csvText(trainingRows(this.#results))], { type: 'text/csv' }), `${stem}.csv`);
    }
  }

  /** Redraws at the page's new size or theme. */
  redraw() {
    if (this.#results.length && !$('model-training-result').hidden) this.#draw();
  }
}
