// The Your model view's Hub picker data (web/views/model/hub-models.js), the page's hubEndpoint
// hash parameter (web/page-settings.js) and the strict CSP's Hub origins (scripts/lib/csp.mjs).
// No request is made: every id is checked by the API with an already-aborted signal.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { HUB_MODELS, SUPPORTED_FAMILIES, hubModelLine, hubRequest, isSupported } from '../../web/views/model/hub-models.js';
import { hubEndpointCodec, pageDefaults, pageSchema } from '../../web/page-settings.js';
import { hashToState, stateToHash } from '../../web/shared/state.js';
import { catalogOf } from '../../web/shared/catalog.js';
import { HUB_ORIGINS, STRICT_CSP, cspWithConnect, strictCspAlso } from '../../scripts/lib/csp.mjs';
import { loadLens } from './support.mjs';

const lens = await loadLens();

test('the Hub list: the known-good models, their sizes and families; only the GPT-2 family enabled', async () => {
  assert.deepEqual(HUB_MODELS.map((m) => [m.id, m.size, m.family]), [
    ['openai-community/gpt2', '548 MB', 'GPT-2'],
    ['distilbert/distilgpt2', '353 MB', 'GPT-2'],
    ['HuggingFaceTB/SmolLM2-135M', '269 MB', 'Llama'],
    ['HuggingFaceTB/SmolLM2-360M', '724 MB', 'Llama'],
    ['Qwen/Qwen2.5-0.5B', '988 MB', 'Qwen2'],
    ['TinyLlama/TinyLlama-1.1B-Chat-v1.0', '2.2 GB', 'Llama'],
  ]);
  assert.deepEqual(SUPPORTED_FAMILIES, ['GPT-2']);
  assert.deepEqual(HUB_MODELS.filter(isSupported).map((m) => m.name), ['gpt2', 'distilgpt2']);
  assert.equal(hubModelLine(HUB_MODELS[0]), 'openai-community/gpt2 · 548 MB · GPT-2');
  assert.equal(hubModelLine(HUB_MODELS[2]), 'HuggingFaceTB/SmolLM2-135M · 269 MB · Llama · not supported yet');
  assert.equal(hubModelLine(HUB_MODELS[5]), 'TinyLlama/TinyLlama-1.1B-Chat-v1.0 · 2.2 GB · Llama · not supported yet · too large for most tabs');
  assert.equal(new Set(HUB_MODELS.map((m) => m.name)).size, HUB_MODELS.length, 'names are unique');
  assert.ok(Object.isFrozen(HUB_MODELS) && HUB_MODELS.every(Object.isFrozen));
  for (const m of HUB_MODELS) {
    assert.ok(Math.abs(m.bytes - Number.parseFloat(m.size) * (m.size.endsWith('GB') ? 1e9 : 1e6)) < 1, m.id);
    // A valid id for lens.loadCheckpoint: refused only because the load is already cancelled.
    await assert.rejects(lens.loadCheckpoint({ hub: m.id, signal: AbortSignal.abort() }), new RegExp(`^Error: the load of '${m.id}' was cancelled$`));
  }
});

test('the id box: an id gets the page\'s endpoint, a repo URL its own; empty text is refused', () => {
  assert.deepEqual(hubRequest('  org/name ', 'http://127.0.0.1:9'), { hub: 'org/name', endpoint: 'http://127.0.0.1:9' });
  assert.deepEqual(hubRequest('org/name', ''), { hub: 'org/name' });
  assert.deepEqual(hubRequest('org/name', undefined), { hub: 'org/name' });
  assert.deepEqual(hubRequest('https://huggingface.co/openai-community/gpt2', 'http://127.0.0.1:9'),
    { hub: 'https://huggingface.co/openai-community/gpt2' });
  assert.deepEqual(hubRequest('   ', undefined), { error: "type a Hugging Face id (org/name) or a repo's URL" });
  assert.deepEqual(hubRequest(undefined, undefined).error, "type a Hugging Face id (org/name) or a repo's URL");
  // '<img src=x onerror=…>' is passed on as text: the API refuses it by name (shown with textContent).
  assert.deepEqual(hubRequest('<img src=x>/a', ''), { hub: '<img src=x>/a' });
});

test('hubEndpoint: an http(s) mirror from the link, anything else ignored; absent links are unchanged', () => {
  const schema = pageSchema(catalogOf(lens));
  const parse = (hash) => hashToState(hash, schema, pageDefaults);
  const given = parse('#tab=model&hubEndpoint=http%3A%2F%2F127.0.0.1%3A8123');
  assert.deepEqual(given.ignored, []);
  assert.equal(given.state.hubEndpoint, 'http://127.0.0.1:8123');
  assert.equal(given.state.tab, 'model');
  assert.equal(stateToHash(given.state, schema, pageDefaults), '#tab=model&hubEndpoint=http%3A%2F%2F127.0.0.1%3A8123');
  assert.equal(parse('#hubEndpoint=https://mirror.example/hf/').state.hubEndpoint, 'https://mirror.example/hf');
  for (const bad of ['javascript:alert(1)', 'ftp://mirror', 'mirror.example', 'https://user:pw@mirror.example', 'https://mirror.example/?x=1',
    'https://mirror.example/#x', 'data:text/html,x', `https://${'a'.repeat(200)}.example`, 'http://']) {
    const { state, ignored } = parse(`#hubEndpoint=${encodeURIComponent(bad)}`);
    assert.deepEqual(ignored, ['hubEndpoint'], bad);
    assert.equal(state.hubEndpoint, undefined, bad);
  }
  assert.equal(hubEndpointCodec.parse(''), '');
  // Without it the page's links are as before: nothing added, nothing in the state.
  const bare = parse('');
  assert.equal('hubEndpoint' in bare.state, false);
  assert.equal(stateToHash(bare.state, schema, pageDefaults), '');
  assert.equal(stateToHash({ ...bare.state, hubEndpoint: '' }, schema, pageDefaults), '');
});

test('the strict CSP: connect-src is the page\'s origin and exactly the Hub\'s; tests add theirs', () => {
  const connect = (policy) => policy.split('; ').find((d) => d.startsWith('connect-src ')).split(' ').slice(1);
  assert.deepEqual(connect(STRICT_CSP), ["'self'", 'https://huggingface.co', 'https://cdn-lfs.huggingface.co',
    'https://cdn-lfs-us-1.huggingface.co', 'https://cdn-lfs-eu-1.huggingface.co', 'https://cas-bridge.xethub.hf.co']);
  assert.deepEqual(HUB_ORIGINS, connect(STRICT_CSP).slice(1));
  assert.equal(STRICT_CSP, cspWithConnect(HUB_ORIGINS));
  assert.deepEqual(connect(strictCspAlso(['http://127.0.0.1:9'])), [...connect(STRICT_CSP), 'http://127.0.0.1:9']);
  for (const directive of ["default-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", "worker-src 'self'", "object-src 'none'"]) {
    assert.ok(STRICT_CSP.split('; ').includes(directive), directive);
  }
});
