// Test posts made from the built example post (dist/blog-example.html, its snapshots written at build
// time): a long post of 5 snapshot elements and 1 live one (does anything scroll the host page?), and
// the example post with its script tag pointing at another element script (the snapshot-only one);
// and the wait for a post's elements to finish drawing (playwright).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The example post's snapshot elements, as written at build time: [model, patching, gpt2-shaped]. */
export function exampleSnapshots(dist) {
  const html = readFileSync(join(dist, 'blog-example.html'), 'utf8');
  const found = html.match(/<attention-lens snapshot><script type="application\/json">[\s\S]*?<\/script><\/attention-lens>/g) ?? [];
  if (found.length !== 3) throw new Error(`dist/blog-example.html has ${found.length} inline snapshots, not 3`);
  return found;
}

const FILLER = 'A paragraph of the post between two figures, long enough to push the next one down the page. ' +
  'Readers scroll at their own pace; a figure must never move the page for them. ';

/**
 * A long post: a live element first, then 5 snapshots (the example's 3, and its model and GPT-2-shaped
 * ones again at another layer and head), each after a few paragraphs. `head`: extra head markup (a
 * probe), `script`: the element script's src.
 */
export function longPostHtml(dist, { head = '', script = 'attention-lens-element.js' } = {}) {
  const [model, patching, gpt2] = exampleSnapshots(dist);
  const at = (element, layer, headNumber) => element.replace('<attention-lens snapshot>', `<attention-lens snapshot layer="${layer}" head="${headNumber}">`);
  const paragraphs = (n) => Array.from({ length: n }, () => `<p>${FILLER.repeat(3)}</p>`).join('\n');
  const figures = [
    '<attention-lens text="The bank will not loan money" mask="causal"></attention-lens>',
    model, patching, gpt2, at(model, 1, 2), at(gpt2, 12, 12),
  ];
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>a long post</title>${head}<script src="${script}" defer></script></head>
<body><main><h1>A long post</h1>
${figures.map((figure) => `${paragraphs(3)}\n${figure}`).join('\n')}
${paragraphs(3)}</main></body></html>`;
}

/** dist/blog-example.html with its one script tag pointing at `script` instead of attention-lens-element.js. */
export function exampleWithScript(dist, script) {
  const html = readFileSync(join(dist, 'blog-example.html'), 'utf8');
  const tag = '<script src="attention-lens-element.js" defer></script>';
  if (html.split(tag).length !== 2) throw new Error('dist/blog-example.html does not load attention-lens-element.js once');
  return html.replace(tag, `<script src="${script}" defer></script>`);
}

/** Waits until `count` <attention-lens> elements have finished (ready or error), and their screen-reader tables (built when the browser is idle) exist. */
export async function settled(page, count) {
  await page.waitForFunction((n) => {
    const all = [...document.querySelectorAll('attention-lens')];
    return all.length === n && all.every((e) => ['ready', 'error'].includes(e.shadowRoot?.querySelector('.lens')?.dataset.status) &&
      [...e.shadowRoot.querySelectorAll('figure')].every((f) => f.dataset.table !== 'pending'));
  }, count, { timeout: 30000 });
}
