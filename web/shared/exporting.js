// Downloads every view shares: a figure as SVG (its toSvg, svg-figure.js for heatmaps) or as PNG at
// 1×, 2× or 3× (that SVG rasterised by the browser), "Copy figure" (the SVG on the clipboard), its
// matrix as JSON or CSV, and the row of buttons for them. Labels come from user text, so CSV cells
// that a spreadsheet would run as a formula are neutralised. Nothing here computes the numbers it writes.
import { button, el } from './dom.js';
import { escapeXml, FIGURE_PAD, FIGURE_TITLE, svgDocument } from './svg-figure.js';

/** The project's version (package.json's, put in by the build; 'dev' when run unbuilt), for figures' provenance. */
export const PROJECT_VERSION = typeof __ATTN_VERSION__ === 'string' ? __ATTN_VERSION__ : 'dev'; // eslint-disable-line no-undef

/** A loaded model (model-session's description) as a figure's provenance: shipped name, Hub id and revision, or file name. */
export function modelProvenance(model) {
  if (!model) return null;
  if (model.source === 'shipped') return { source: 'shipped', name: model.name, title: model.title };
  if (model.source === 'hub') return { source: 'hub', id: model.id, revision: model.revision ?? 'main', family: model.family };
  return { source: model.source ?? 'file', fileName: model.fileName, family: model.family };
}

/**
 * A loaded model's run as its figures record it (the Your model and Circuits views): `view`, the
 * model that ran, the text the run read and the heads knocked out in it — all from the run drawn,
 * never from the fields as they are now.
 */
export function runProvenance(view, model, run) {
  return { view, model: modelProvenance(model), text: run?.text ?? '', ...knockedOutFacts(run?.ablated) };
}

/** Heads knocked out in a run ([{ layer, head }]) as a figure records them: { knockedOut: ['L1H2', …] }, or nothing. */
export const knockedOutFacts = (heads) => (heads?.length ? { knockedOut: heads.map((h) => `L${h.layer + 1}H${h.head + 1}`) } : {});

/** The PNG scales offered: device pixels per CSS pixel of the figure. */
export const PNG_SCALES = [1, 2, 3];

/** What a figure records of where it came from: the project and its version, then the view's own facts. */
export const figureProvenance = (own = {}) => ({ generator: 'Attention Lens', version: PROJECT_VERSION, ...own,
  exported: new Date().toISOString() });

/** Downloads `blob` as `filename` (a link clicked, its object URL revoked after). */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = el('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** One CSV cell: a leading =, +, -, @, tab or CR that is not a number neutralised with ', quoted when it holds , " or a line break. */
export function csvCell(text) {
  let value = String(text);
  if (/^[=+\-@\t\r]/.test(value) && !/^-?\d/.test(value) && value !== '-inf') value = `'${value}`;
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Rows of cells as CSV text, one line each, ending with a line break. */
export const csvText = (rows) => `${rows.map((cells) => cells.map(csvCell).join(',')).join('\n')}\n`;

/** A matrix as CSV: a header row of column labels, then one row per row label (NaN: an empty cell). */
export function matrixCsv(matrix) {
  const lines = [[`${matrix.rowAxis} \\ ${matrix.colAxis}`, ...matrix.colLabels].map(csvCell).join(',')];
  for (let r = 0; r < matrix.rows; ++r) {
    const cells = [matrix.rowLabels[r]];
    for (let c = 0; c < matrix.cols; ++c) {
      const v = matrix.data[r * matrix.cols + c];
      cells.push(v === -Infinity ? '-inf' : Number.isNaN(v) ? '' : String(v));
    }
    lines.push(cells.map(csvCell).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** A matrix's rows as arrays (a value that is not finite as null). */
export function matrixRows(matrix) {
  return Array.from({ length: matrix.rows }, (_, r) => Array.from({ length: matrix.cols }, (_, c) => {
    const v = matrix.data[r * matrix.cols + c];
    return Number.isFinite(v) ? v : null;
  }));
}

/** The theme's font and colours around `element`, as svg-figure.js's figures take them. */
export function figureStyle(element) {
  const style = getComputedStyle(element);
  const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return { family: style.fontFamily || 'system-ui, sans-serif', '--surface': read('--surface', '#fff'), '--ink': read('--ink', '#111'),
    '--muted': read('--muted', '#666'), '--masked': read('--masked', '#9a9a9a') };
}

// What an SVG drawn in the page takes from its style sheet: copied onto each element of a figure made of it.
const PAINT = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-dasharray', 'stroke-opacity', 'opacity', 'font-size',
  'font-family', 'font-style', 'font-weight'];

/**
 * An <svg> the page drew (styled by classes) as a standalone figure: a copy with each element's
 * computed paint and font written on it as attributes (classes dropped), serialised by the browser
 * (XMLSerializer escapes every text), under `title`, with `note` (a sentence) below it and the
 * provenance in <metadata> (svg-figure.js's svgDocument).
 */
export function svgElementFigure(chart, { title, note = '', provenance = {} }) {
  const copy = chart.cloneNode(true);
  const originals = [chart, ...chart.querySelectorAll('*')];
  [copy, ...copy.querySelectorAll('*')].forEach((node, i) => {
    const computed = getComputedStyle(originals[i]);
    for (const name of PAINT) {
      const value = computed.getPropertyValue(name);
      if (value) node.setAttribute(name, value);
    }
    node.removeAttribute('class');
  });
  const width = Number(chart.getAttribute('width'));
  const height = Number(chart.getAttribute('height'));
  copy.setAttribute('x', String(FIGURE_PAD));
  copy.setAttribute('y', String(FIGURE_PAD + FIGURE_TITLE));
  const style = figureStyle(chart);
  const below = note ? `<text x="${FIGURE_PAD}" y="${FIGURE_PAD + FIGURE_TITLE + height + 16}" font-size="11" fill="${escapeXml(style['--muted'])}">` +
    `${escapeXml(note)}</text>` : '';
  return svgDocument({ width: width + 2 * FIGURE_PAD, height: FIGURE_PAD + FIGURE_TITLE + height + (note ? 24 : 0) + FIGURE_PAD, title,
    description: chart.getAttribute('aria-label') ?? title, provenance: { title, ...provenance }, style },
  new XMLSerializer().serializeToString(copy) + below);
}

/**
 * An SVG document drawn to a PNG blob at `scale` device pixels per SVG pixel: the browser
 * rasterises the same file the SVG download holds (an image from a blob: URL, which the page's
 * Content-Security-Policy allows in img-src).
 */
export async function svgToPng(svg, scale = 2) {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = el('canvas');
    canvas.width = Math.round(image.naturalWidth * scale);
    canvas.height = Math.round(image.naturalHeight * scale);
    canvas.getContext('2d').drawImage(image, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve, reject) => canvas.toBlob((blob) => (blob ? resolve(blob)
      : reject(new Error('The browser could not encode the figure as PNG.'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/**
 * Puts an SVG document on the clipboard: as image/svg+xml (with the markup as text/plain beside it)
 * where the browser's clipboard takes SVG, else as text. Returns 'svg' or 'text'; throws when the
 * browser refuses both (no permission, no clipboard, the page not focused).
 */
export async function copySvg(svg) {
  const clipboard = navigator.clipboard;
  if (!clipboard) throw new Error('this browser gives the page no clipboard (it needs https or localhost)');
  if (clipboard.write && typeof ClipboardItem === 'function' && ClipboardItem.supports?.('image/svg+xml')) {
    try {
      await clipboard.write([new ClipboardItem({ 'image/svg+xml': new Blob([svg], { type: 'image/svg+xml' }),
        'text/plain': new Blob([svg], { type: 'text/plain' }) })]);
      return 'svg';
    } catch { /* some browsers list the type but refuse it: the markup as text below */ }
  }
  await clipboard.writeText(svg);
  return 'text';
}

/** An error's message as a sentence: one final full stop. */
const sentence = (error) => `${String(error?.message ?? error).replace(/\.+$/, '')}.`;

/**
 * Export buttons into `host`, one group per entry { id (the files' stem), key (the buttons'
 * data-export prefix; id by default), label, title, map (a Heatmap, or anything with
 * toSvg(provenance) → SVG markup), provenance: () => object (the view's facts: model, text,
 * settings), json: () => object or JSON text, matrix: () => the drawn matrix (the CSV; no CSV
 * without it) }: one compact row "Download: SVG · PNG [scale 1× 2× 3×] · JSON · CSV · Copy figure" (with
 * the entry's label when there are several; a group labelled by the figure's title; the scale a small
 * labelled menu beside PNG; only the formats the figure has).
 * Everything is read at click time.
 */
export function exportButtons(host, entries) {
  host.replaceChildren(...entries.map((entry) => {
    const key = entry.key ?? entry.id;
    const group = el('div', 'export-group');
    group.setAttribute('role', 'group');
    group.setAttribute('aria-label', `Download ${entry.title}`);
    // One figure: its caption is just above ("Download:"); several: which one each row is ("q (head 1):").
    group.append(el('span', 'muted small export-label', entries.length > 1 ? `${entry.label ?? entry.id}:` : 'Download:'));
    const svg = () => {
      const markup = entry.map.toSvg(figureProvenance(entry.provenance?.() ?? {}));
      if (!markup) throw new Error('nothing is drawn yet');
      return markup;
    };
    const status = el('span', 'export-status small');
    status.setAttribute('role', 'status');
    const scale = el('select', 'small-select');
    scale.dataset.export = `${key}-png-scale`;
    scale.setAttribute('aria-label', `PNG scale for ${entry.title}`);
    scale.title = 'PNG scale: pixels per pixel of the figure';
    for (const k of PNG_SCALES) scale.append(new Option(`${k}×`, String(k), k === 2, k === 2));
    // The scale's visible label, beside the PNG button it sets.
    const scaleLabel = el('label', 'export-scale small', 'scale');
    scaleLabel.append(scale);
    const copy = async () => {
      try {
        const how = await copySvg(svg());
        status.textContent = how === 'svg' ? 'Copied (SVG image and its text).' : 'Copied as SVG text.';
        status.classList.remove('export-failed');
      } catch (error) {
        status.textContent = `Copy failed: ${sentence(error)} Use the SVG download instead.`;
        status.classList.add('export-failed');
      }
    };
    const json = () => {
      const value = entry.json();
      return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    };
    const actions = [
      ['SVG', `Download ${entry.title} as SVG`, () => download(new Blob([svg()], { type: 'image/svg+xml' }), `${entry.id}.svg`)],
      ['PNG', `Download ${entry.title} as PNG`, async () => {
        const k = Number(scale.value);
        download(await svgToPng(svg(), k), `${entry.id}${k === 1 ? '' : `@${k}x`}.png`);
      }],
      ['JSON', `Download ${entry.title} as JSON`, () => download(new Blob([json()], { type: 'application/json' }), `${entry.id}.json`)],
      ...(entry.matrix ? [['CSV', `Download ${entry.title} as CSV`,
        () => download(new Blob([matrixCsv(entry.matrix())], { type: 'text/csv' }), `${entry.id}.csv`)]] : []),
      ['Copy figure', `Copy figure: ${entry.title}, to the clipboard as SVG`, copy],
    ];
    const said = (label, action) => async () => {
      status.textContent = ''; // a message of the last action goes
      status.classList.remove('export-failed');
      try {
        await action();
      } catch (error) {
        status.textContent = `${label} failed: ${sentence(error)}`;
        status.classList.add('export-failed');
      }
    };
    for (const [label, name, action] of actions) {
      const b = button('small-button', label, said(label, action));
      b.dataset.export = `${key}-${label === 'Copy figure' ? 'copy' : label.toLowerCase()}`;
      b.setAttribute('aria-label', name);
      group.append(b);
      if (label === 'PNG') group.append(scaleLabel);
    }
    group.append(status);
    return group;
  }));
}
