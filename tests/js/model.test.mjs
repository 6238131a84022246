// lens.createModel through the API (README "Models and training"): config errors, forward
// shapes and causal attention, batches, traced steps, the loss and its gradients against
// references computed here, checkpoints (and PyTorch reproducing a saved one), head scores and
// ablation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { assertClose, assertThrowsMessage, loadLens } from './support.mjs';

const lens = await loadLens();
const SMALL = { vocab: 13, context: 10, dModel: 16, heads: 4, layers: 2, mlp: true, seed: 7 };
const ids = Int32Array.from([3, 1, 4, 1, 5, 9, 2, 6]);
const n = ids.length;

function product(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

// Mean cross-entropy in float64 of logits [rows, vocab] against targets (< 0 ignored).
function meanCrossEntropy(logits, targets, vocab) {
  let sum = 0;
  let count = 0;
  for (let r = 0; r < targets.length; ++r) {
    if (targets[r] < 0) continue;
    const row = logits.subarray(r * vocab, (r + 1) * vocab);
    const max = Math.max(...row);
    let z = 0;
    for (const v of row) z += Math.exp(v - max);
    sum += Math.log(z) + max - row[targets[r]];
    ++count;
  }
  return sum / count;
}

// Zeroes head h's d_k input columns of layer l's out_proj.weight [d, d].
function zeroHeadOutput(model, l, h) {
  const name = `layers.${l}.attn.out_proj.weight`;
  const w = model.parameters()[name];
  const d = model.config.dModel;
  const dk = d / model.config.heads;
  for (let row = 0; row < d; ++row) w.fill(0, row * d + h * dk, row * d + (h + 1) * dk);
  model.setParameters({ [name]: w });
}

test('createModel: the config is normalized and frozen, the parameters named as docs/API.md', () => {
  const model = lens.createModel({ vocab: 32, context: 64, dModel: 64, heads: 4, layers: 2,
    positional: 'learned', layerNorm: true, mlp: false, tied: false, seed: 1 });
  assert.deepEqual(model.config, { ...lens.catalog.defaults.model, seed: 1 });
  assert.ok(Object.isFrozen(model.config));
  assert.deepEqual(model.parameterNames, ['embed.weight', 'pos.weight',
    ...[0, 1].flatMap((l) => ['ln1.weight', 'ln1.bias', 'attn.in_proj_weight', 'attn.in_proj_bias',
      'attn.out_proj.weight', 'attn.out_proj.bias'].map((p) => `layers.${l}.${p}`)),
    'ln_f.weight', 'ln_f.bias', 'unembed.weight']);
  assert.deepEqual(model.parameterShapes['layers.1.attn.in_proj_weight'], [192, 64]);
  const params = model.parameters();
  for (const name of model.parameterNames) {
    assert.equal(params[name].length, product(model.parameterShapes[name]), name);
  }
  params['embed.weight'][0] = 1234; // a copy: the model is unchanged
  assert.notEqual(model.parameters()['embed.weight'][0], 1234);
  model.dispose();
});

test('createModel errors: out of bounds, unknown keys and wrong types, each readable', () => {
  const cases = [
    [{ vocab: 600 }, /vocab must be between 2 and 512, got 600/],
    [{ layers: 5 }, /layers must be between 1 and 4, got 5/],
    [{ dModel: 16, heads: 3 }, /d_model 16 is not divisible by heads 3/],
    [{ positional: 'alibi' }, /positional must be 'none', 'sinusoidal', 'learned' or 'rope'/],
    [{ gelu: 'relu' }, /unknown gelu 'relu': expected 'erf' or 'tanh'/],
    [{ dmodel: 8 }, /unknown createModel options key 'dmodel'; expected one of: vocab, context, dModel/],
    [{ layerNorm: 'yes' }, /layerNorm must be true or false, got "yes"/],
    [{ heads: 2.5 }, /heads must be an integer/],
    [{ context: -1 }, /context must be an integer from 0/],
  ];
  for (const [config, pattern] of cases) assertThrowsMessage(() => lens.createModel(config), pattern);
  assertThrowsMessage(() => lens.createModel(null), /createModel expects an options object, got null/);
  const model = lens.createModel(SMALL); // still usable
  assert.equal(model.forward(ids).logits.length, n * SMALL.vocab);
  model.dispose();
});

test('forward: logits and causal attention per layer; rows sum to 1, zero above the diagonal', () => {
  const model = lens.createModel(SMALL);
  const f = model.forward(ids, { n, batch: 1 });
  assert.ok(f.logits instanceof Float32Array);
  assert.equal(f.logits.length, n * SMALL.vocab);
  assert.ok(f.logits.every(Number.isFinite));
  assert.equal(f.attention.length, SMALL.layers);
  assert.equal(f.steps, undefined);
  for (const [l, a] of f.attention.entries()) {
    assert.equal(a.length, SMALL.heads * n * n);
    for (let h = 0; h < SMALL.heads; ++h) {
      for (let i = 0; i < n; ++i) {
        const row = a.subarray((h * n + i) * n, (h * n + i + 1) * n);
        let sum = 0;
        for (let j = 0; j < n; ++j) {
          if (j > i) assert.equal(row[j], 0, `layer ${l} head ${h}: ${i},${j} above the diagonal`);
          sum += row[j];
        }
        assert.ok(Math.abs(sum - 1) < 1e-5, `layer ${l} head ${h} row ${i} sums to ${sum}`);
      }
    }
  }
  assertThrowsMessage(() => model.forward(Int32Array.from([1, 13])), /id 13 at index 1 is out of range/);
  assertThrowsMessage(() => model.forward([1, 2.5]), /ids\[1\] must be an integer token id/);
  assertThrowsMessage(() => model.forward(new Int32Array(11)), /n|context/);
  assertThrowsMessage(() => model.forward(ids, { trace: true, batch: 2, n: 4 }), /batch must be 1, got 2/);
  assertThrowsMessage(() => model.forward(ids, { heads: 2 }), /unknown forward options key 'heads'/);
  model.dispose();
});

test('a batch of sequences equals running each sequence alone', () => {
  const model = lens.createModel({ ...SMALL, positional: 'rope' });
  const second = Int32Array.from([7, 7, 0, 12, 3, 3, 8, 1]);
  const both = Int32Array.from([...ids, ...second]);
  const f = model.forward(both, { n, batch: 2 });
  const V = SMALL.vocab;
  const per = SMALL.heads * n * n;
  for (const [b, seq] of [ids, second].entries()) {
    const alone = model.forward(seq, { n });
    assertClose(f.logits.subarray(b * n * V, (b + 1) * n * V), alone.logits, { atol: 1e-6, what: `logits ${b}` });
    for (let l = 0; l < SMALL.layers; ++l) {
      assertClose(f.attention[l].subarray(b * per, (b + 1) * per), alone.attention[l],
        { atol: 1e-6, what: `attention ${b} layer ${l}` });
    }
  }
  model.dispose();
});

test('trace: one array of steps per layer, whose weights equal the forward attention', () => {
  const model = lens.createModel(SMALL);
  const f = model.forward(ids, { n, trace: true });
  assert.equal(f.steps.length, SMALL.layers);
  for (const [l, steps] of f.steps.entries()) {
    for (const step of steps) {
      assert.deepEqual(Object.keys(step).sort(),
        ['cols', 'data', 'equation', 'head', 'id', 'rows', 'shape', 'title']);
      assert.ok(step.data instanceof Float32Array);
      assert.equal(step.data.length, product(step.shape));
    }
    const weights = steps.filter((s) => s.id === 'weights');
    assert.deepEqual(weights.map((s) => s.head), [0, 1, 2, 3]);
    for (const s of weights) {
      assertClose(s.data, f.attention[l].subarray(s.head * n * n, (s.head + 1) * n * n),
        { atol: 1e-6, what: `layer ${l} head ${s.head} weights` });
    }
  }
  model.dispose();
});

test('lossAndGradients: the loss is the mean cross-entropy of the logits; gradients named as the table', () => {
  const model = lens.createModel(SMALL);
  const targets = Int32Array.from([1, 4, -1, 5, 9, 2, -1, 3]);
  const g = model.lossAndGradients(ids, targets, { n, batch: 1 });
  const reference = meanCrossEntropy(model.forward(ids).logits, targets, SMALL.vocab);
  assert.ok(Math.abs(g.loss - reference) <= 1e-5 * reference, `loss ${g.loss} vs ${reference}`);
  assert.deepEqual(Object.keys(g.gradients), model.parameterNames);
  for (const name of model.parameterNames) {
    assert.ok(g.gradients[name] instanceof Float32Array);
    assert.equal(g.gradients[name].length, product(model.parameterShapes[name]), name);
  }
  assertThrowsMessage(() => model.lossAndGradients(ids, new Int32Array(8).fill(-1), { n }),
    /every target is ignored/);
  assertThrowsMessage(() => model.lossAndGradients(ids, Int32Array.from([13, 0, 0, 0, 0, 0, 0, 0]), { n }),
    /target 13 at index 0 is out of range/);
  model.dispose();
});

test('gradients agree with central finite differences of the loss', () => {
  const model = lens.createModel({ ...SMALL, seed: 3 });
  const targets = Int32Array.from([1, 4, 1, 5, 9, 2, 6, 5]);
  const { gradients } = model.lossAndGradients(ids, targets, { n });
  const loss = () => meanCrossEntropy(model.forward(ids).logits, targets, SMALL.vocab);
  const h = 1e-2;
  for (const name of ['unembed.weight', 'embed.weight', 'layers.1.attn.in_proj_weight',
    'layers.0.mlp.fc.weight', 'ln_f.weight']) {
    const g = gradients[name];
    let at = 0;
    for (let i = 1; i < g.length; ++i) if (Math.abs(g[i]) > Math.abs(g[at])) at = i;
    const original = model.parameters()[name];
    const nudged = (delta) => {
      const w = original.slice();
      w[at] += delta;
      model.setParameters({ [name]: w });
      return loss();
    };
    const fd = (nudged(h) - nudged(-h)) / (2 * h);
    model.setParameters({ [name]: original });
    assert.ok(Math.abs(fd - g[at]) <= 2e-4 + 0.03 * Math.abs(g[at]),
      `${name}[${at}]: gradient ${g[at]}, finite difference ${fd}`);
  }
  model.dispose();
});

test('checkpoints: save and load into a fresh model; another config is an error naming the tensor', () => {
  const model = lens.createModel(SMALL);
  const bytes = model.saveSafetensors();
  const fresh = lens.createModel({ ...SMALL, seed: 99 });
  assert.notDeepEqual(fresh.forward(ids).logits, model.forward(ids).logits);
  fresh.loadSafetensors(bytes);
  assert.deepEqual(fresh.forward(ids), model.forward(ids));
  const other = lens.createModel({ ...SMALL, dModel: 8 });
  const before = other.forward(ids);
  assertThrowsMessage(() => other.loadSafetensors(bytes), /'embed\.weight' has shape \[13, 16\], this model needs \[13, 8\]/);
  const noMlp = lens.createModel({ ...SMALL, mlp: false });
  assertThrowsMessage(() => noMlp.loadSafetensors(bytes), /tensor 'layers\.0\.ln2\.weight' .*is not a parameter/);
  assert.deepEqual(other.forward(ids), before, 'weights unchanged after a failed load');
  for (const m of [model, fresh, other, noMlp]) m.dispose();
});

test('PyTorch reproduces a saved checkpoint as accurately as its own float32', () => {
  const script = fileURLToPath(new URL('../../scripts/data/torch-checkpoint.py', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'attn-ckpt-'));
  try {
    for (const config of [SMALL, { ...SMALL, positional: 'rope', tied: true, bias: false, layers: 3 },
      { ...SMALL, positional: 'sinusoidal', layerNorm: false, gelu: 'tanh', heads: 2 }]) {
      const model = lens.createModel(config);
      // Larger weights than the init's, so attention is far from uniform and errors show.
      const params = model.parameters();
      for (const name of model.parameterNames) {
        if (name.includes('in_proj_weight')) model.setParameters({ [name]: params[name].map((v) => v * 20) });
      }
      const file = join(dir, 'model.safetensors');
      writeFileSync(file, model.saveSafetensors());
      const run = (...extra) => {
        const r = spawnSync('/usr/bin/python3', [script, file, Array.from(ids).join(','), ...extra],
          { encoding: 'utf8', maxBuffer: 1 << 26 });
        assert.equal(r.status, 0, `torch-checkpoint.py failed: ${r.stderr}`);
        return JSON.parse(r.stdout);
      };
      const t32 = run();
      const t64 = run('--float64');
      const ours = model.forward(ids);
      const check = (got, f32, f64, what) => {
        for (let i = 0; i < got.length; ++i) {
          const bound = Math.max(4 * Math.abs(f32[i] - f64[i]), 1e-6);
          assert.ok(Math.abs(got[i] - f64[i]) <= bound,
            `${what}[${i}]: ours ${got[i]}, torch64 ${f64[i]}, torch32 ${f32[i]} (bound ${bound})`);
        }
      };
      check(ours.logits, t32.logits.flat(), t64.logits.flat(), `${JSON.stringify(config)} logits`);
      for (let l = 0; l < config.layers; ++l) {
        check(ours.attention[l], t32.attention[l].flat(2), t64.attention[l].flat(2), `attention ${l}`);
      }
      model.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('head scores: one entry per layer and head, each in [0, 1] or null when not measured', () => {
  const model = lens.createModel({ ...SMALL, context: 64 });
  const scores = model.headScores();
  assert.deepEqual(scores.map((s) => [s.layer, s.head]),
    [0, 1].flatMap((l) => [0, 1, 2, 3].map((h) => [l, h])));
  for (const s of scores) {
    for (const key of ['previousToken', 'induction', 'sameToken', 'firstToken']) {
      assert.ok(s[key] >= 0 && s[key] <= 1, `${key} = ${s[key]}`);
    }
  }
  assert.deepEqual(model.headScores(), scores, 'the default probe is fixed');
  // Own probe without a repeated token: induction and same-token cannot be measured.
  const own = model.headScores({ ids: Int32Array.from([0, 1, 2, 3, 4, 5]), n: 6 });
  assert.ok(own.every((s) => s.induction === null && s.sameToken === null && s.previousToken >= 0));
  assertThrowsMessage(() => model.headScores({ n: 6 }), /pass its ids too/);
  assertThrowsMessage(() => model.headScores({ ids: [1, 2, 3], n: 2 }), /3 tokens, expected batch \* n = 2/);
  model.dispose();
});

test('head ablation: finite deltas; a head whose output projection is zero has delta 0', () => {
  const model = lens.createModel({ ...SMALL, layers: 1 });
  zeroHeadOutput(model, 0, 2);
  const result = model.headAblation();
  assert.ok(Number.isFinite(result.loss));
  assert.equal(result.heads.length, 4);
  for (const head of result.heads) {
    assert.ok(Number.isFinite(head.loss) && Number.isFinite(head.delta));
    assert.equal(head.delta, head.loss - result.loss);
  }
  assert.ok(Math.abs(result.heads[2].delta) <= 1e-6, `delta ${result.heads[2].delta}`);
  assert.ok(result.heads.some((h) => Math.abs(h.delta) > 1e-6), 'the other heads matter');
  const own = model.headAblation({ ids: Int32Array.from([1, 2, 3, 1, 2, 3]), targets: Int32Array.from([-1, -1, 1, 2, 3, -1]) });
  assert.equal(own.heads.length, 4);
  assert.ok(Math.abs(own.heads[2].delta) <= 1e-6);
  model.dispose();
});

test('dispose: a disposed model throws a clear Error; double dispose is fine', () => {
  const model = lens.createModel(SMALL);
  model.dispose();
  model.dispose();
  assertThrowsMessage(() => model.forward(ids), /this model was disposed/);
  assertThrowsMessage(() => model.parameters(), /this model was disposed/);
});
