// The page's link (web/page-settings.js): a model from files named by name, size and SHA-256 in
// `files`; knocked-out heads a model lacks said to be ignored; Copy link's sentence says what the
// link restores and what it cannot hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filesCodec, filesNeededText, linkHeads, linkSummary, sameFiles } from '../../web/page-settings.js';
import { DEFAULTS } from '../../web/shared/state.js';

const SHA = 'ab'.repeat(32);

test('files: name:bytes:sha256 entries, names URI-encoded; anything else refused', () => {
  const files = [{ name: 'model.safetensors', bytes: 9_600_000, sha256: SHA }, { name: 'a, b:c.gguf', bytes: 12, sha256: '' }];
  const printed = filesCodec.print(files);
  assert.equal(printed, `model.safetensors:9600000:${SHA},a%2C%20b%3Ac.gguf:12:`);
  assert.deepEqual(filesCodec.parse(printed), files);
  assert.deepEqual(filesCodec.parse(''), []);
  for (const bad of ['model.safetensors', 'x:1:zz', `x:-1:${SHA}`, `%E0%A4%A:1:${SHA}`, 'a%2Fb:1:', Array(65).fill('a:1:').join(',')]) {
    assert.equal(filesCodec.parse(bad), undefined, bad);
  }
});

test('sameFiles: by SHA-256 when both are hashed, else by name and size', () => {
  const a = { name: 'model.safetensors', bytes: 10, sha256: SHA };
  assert.ok(sameFiles([a], [{ ...a, name: 'renamed.safetensors' }]), 'the same bytes under another name');
  assert.ok(!sameFiles([a], [{ ...a, sha256: 'cd'.repeat(32) }]), 'other bytes of the same size and name');
  assert.ok(sameFiles([{ ...a, sha256: '' }], [a]), 'not hashed: name and size');
  assert.ok(!sameFiles([a], []));
});

test('linkHeads: the heads the model has are kept, the rest said', () => {
  const { kept, notice } = linkHeads([{ layer: 1, head: 9 }, { layer: 0, head: 2 }], { layers: 2, heads: 4 }, 'the english model');
  assert.deepEqual(kept, [{ layer: 0, head: 2 }]);
  assert.equal(notice, 'Ignored in the link: knock L2 H10 (the english model has 2 layers × 4 heads).');
  assert.equal(linkHeads([{ layer: 0, head: 0 }], { layers: 1, heads: 1 }, 'x').notice, '');
});

test('the sentences: the files a link needs; what Copy link restores, never "this exact view" when it cannot', () => {
  const files = [{ name: 'model.safetensors', bytes: 9_600_000, sha256: SHA }];
  assert.match(filesNeededText(files, [{ layer: 0, head: 3 }]),
    /^This link was made with model\.safetensors \(9\.6 MB, sha256 abababab…\) loaded from files: drop it .* \(L1 H4 knocked out\)\./);
  const settings = { ...DEFAULTS, model: 'english', tab: 'model', files, knock: [{ layer: 0, head: 3 }] };
  const fromFiles = linkSummary({ settings, yourModel: { model: { source: 'files', fileName: 'model.safetensors' } } });
  assert.match(fromFiles, /^It restores Your model's text and sampling settings and names model\.safetensors \(9\.6 MB, sha256 abababab…\): a reader who drops that file gets this view, with L1 H4 knocked out \(a link cannot hold the file itself/);
  assert.equal(linkSummary({ settings: { ...settings, tab: 'circuits', files: [] }, yourModel: { model: { source: 'shipped', name: 'english' } } }),
    'It restores the Circuits prompts, answers and analysis on the shipped english model, with L1 H4 knocked out.');
  const opened = linkSummary({ settings: { ...settings, tab: 'walkthrough' }, openedLayer: { source: 'checkpoint' } });
  assert.match(opened, /^A link cannot hold the layer opened from Your model: it opens .* on the shipped english model \(layer 1\) instead\.$/);
  assert.match(linkSummary({ settings: { ...settings, tab: 'walkthrough' } }), /^It restores the walkthrough's text, settings, stage and head/);
});
