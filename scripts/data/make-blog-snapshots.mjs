// Writes the example post's snapshots (no hand-written numbers): the shipped induction model's every
// head on repeated letters (the Your model view's snapshot) and its heads patched on the induction
// preset's prompts (the Circuits view's), both through the page's own model session and snapshot
// writer; and every head of a GPT-2-small-shaped model through the API's m.snapshot. Puts each inline in dist/blog-example.html where a comment
// `<!-- snapshot:NAME -->` sits inside an <attention-lens>, and as dist/snapshots/NAME.json for the
// snapshot="…" form. Run by scripts/build.sh after the page and the module are in dist/:
//   node scripts/data/make-blog-snapshots.mjs [dist]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SessionModel } from '../../web/shared/model-session/session-model.js';
import { makeCircuitsSnapshot, makeModelSnapshot, scriptSafeJson, sha256Hex, snapshotJson, snapshotProvenance } from '../../web/api/snapshot.js';
import { gpt2SizedCheckpoint } from '../lib/gpt2-checkpoint.mjs';

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

// A GPT-2-small-shaped model (12 layers × 12 heads, GPT-2's own tokenizer and 50 257 ids; seeded
// random weights, d_model 96 so the build stays light) on 32 tokens, every head, written by the
// API's m.snapshot: what a post that shows every head of GPT-2 small carries (about 125 KB).
const lens = await loadAttentionLens();
const GPT2_SHAPE = { layers: 12, heads: 12, d: 96, vocab: 50257, context: 32 };
const { weights, config: gpt2Config } = gpt2SizedCheckpoint(GPT2_SHAPE);
const gpt2 = await lens.loadCheckpoint({ weights, config: gpt2Config,
  tokenizer: { vocab: readFileSync(join(dist, 'gpt2-encoder.json'), 'utf8'), merges: readFileSync(join(dist, 'gpt2-vocab.bpe'), 'utf8') } });
const GPT2_TEXT = 'Mr and Mrs Dursley, of number four, Privet Drive, were proud to say that they were perfectly normal, ' +
  'thank you very much. They were the last people you would expect to be involved in anything strange.';
const gpt2Ids = gpt2.tokenize(GPT2_TEXT).ids.subarray(0, GPT2_SHAPE.context);
if (gpt2Ids.length !== GPT2_SHAPE.context) throw new Error(`the GPT-2 text is ${gpt2Ids.length} tokens, not ${GPT2_SHAPE.context}`);
const gpt2Snapshot = gpt2.snapshot({ ids: gpt2Ids, layer: 5, head: 1,
  source: { source: 'files', fileName: 'model.safetensors (GPT-2-small-shaped, seeded random weights, d_model 96)',
    files: [{ name: 'model.safetensors', bytes: weights.length, sha256: await sha256Hex(weights) }] },
  settings: { view: 'm.snapshot', note: 'random weights: the shape and size of a GPT-2 small snapshot, not a finding' } });
gpt2.dispose();

const snapshots = { 'induction-model': modelSnapshot, 'induction-patching': patchingSnapshot, 'gpt2-small-shaped': gpt2Snapshot };
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
