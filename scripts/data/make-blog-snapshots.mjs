// Writes the example post's snapshots from a shipped trained model (no hand-written numbers): the
// induction model's every head on repeated letters (the Your model view's snapshot) and its heads
// patched on the induction preset's prompts (the Circuits view's), both through the page's own
// model session and snapshot writer. Puts each inline in dist/blog-example.html where a comment
// `<!-- snapshot:NAME -->` sits inside an <attention-lens>, and as dist/snapshots/NAME.json for the
// snapshot="…" form. Run by scripts/build.sh after the page and the module are in dist/:
//   node scripts/data/make-blog-snapshots.mjs [dist]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SessionModel } from '../../web/shared/model-session/session-model.js';
import { makeCircuitsSnapshot, makeModelSnapshot, scriptSafeJson, snapshotJson, snapshotProvenance } from '../../web/api/snapshot.js';

const dist = resolve(process.argv[2] ?? 'dist');
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const { loadAttentionLens } = await import(pathToFileURL(join(dist, 'attention-lens.mjs')).href);
const session = new SessionModel(await loadAttentionLens(), () => {});
const model = await session.trained({ name: 'induction' });
const config = model.config;

// Every head of the induction model on ten letters typed twice: layer 2's induction heads look one
// letter after the earlier copy of the current one.
const TEXT = 'qwertyuiopqwertyuiop';
const run = session.run({ text: TEXT });
const view = { layer: 1, head: 3 };
const modelSnapshot = makeModelSnapshot({ run, config, view,
  provenance: snapshotProvenance(model, { text: TEXT, version, settings: { view: 'your model', layer: view.layer + 1, head: view.head + 1 } }) });

// Its heads patched: the induction preset's repeated random letters, clean against corrupted.
const preset = session.circuitInduction({ seed: 1 });
const answers = session.circuitAnswers({ answers: preset.answers });
const result = session.circuit({ kind: 'heads', clean: preset.clean, corrupted: preset.corrupted, answers: answers.map((a) => a.id) });
const context = { clean: preset.clean, corrupted: preset.corrupted, answers, layer: 0 };
const patchingSnapshot = makeCircuitsSnapshot({ result, config, context,
  provenance: snapshotProvenance(model, { text: preset.clean, version, settings: { view: 'circuits', analysis: 'heads' } }) });

const snapshots = { 'induction-model': modelSnapshot, 'induction-patching': patchingSnapshot };
mkdirSync(join(dist, 'snapshots'), { recursive: true });
let page = readFileSync(join(dist, 'blog-example.html'), 'utf8');
for (const [name, snapshot] of Object.entries(snapshots)) {
  writeFileSync(join(dist, 'snapshots', `${name}.json`), snapshotJson(snapshot));
  const marker = `<!-- snapshot:${name} -->`;
  if (!page.includes(marker)) throw new Error(`dist/blog-example.html has no ${marker}`);
  page = page.replace(marker, () => `<script type="application/json">${scriptSafeJson(snapshot)}</script>`);
  console.log(`[blog snapshots] ${name}: ${snapshotJson(snapshot).length} bytes`);
}
writeFileSync(join(dist, 'blog-example.html'), page);
