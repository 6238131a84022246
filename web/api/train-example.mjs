// A runnable Node example of the model and trainer API (docs/javascript-api.md shows this file):
// `node web/api/train-example.mjs` after `npm run build`. Trains a small transformer on the copy
// task, then reads its head scores and ablation, and saves a PyTorch-style checkpoint.
import { loadAttentionLens } from '../../dist/attention-lens.mjs';

const lens = await loadAttentionLens();
const model = lens.createModel({ vocab: 28, context: 12, dModel: 32, heads: 4, layers: 2, seed: 3 });
const trainer = lens.createTrainer(model, { task: 'copy', lr: 3e-3, batch: 16, seed: 5 });

for (let i = 0; i < 4; ++i) {
  const { step, loss, heldOutLoss, accuracy } = trainer.step(25);
  console.log(`step ${step}: loss ${loss.toFixed(3)}, held-out ${heldOutLoss.toFixed(3)}, accuracy ${accuracy.toFixed(2)}`);
}

const ids = trainer.encode('cab|cab.....'); // tokens are the task's characters
const { logits, attention } = model.forward(ids, { n: ids.length });
console.log('logits', logits.length, 'attention per layer', attention.map((a) => a.length));

// Head ablation on the task's held-out set: how much the loss rises without each head.
const { ids: heldIds, targets, n, batch } = trainer.heldOut();
const ablation = model.headAblation({ ids: heldIds, targets, n, batch });
for (const { layer, head, delta } of ablation.heads) {
  console.log(`layer ${layer} head ${head}: loss ${delta >= 0 ? '+' : ''}${delta.toFixed(3)} without it`);
}
console.log(model.headScores()[0]); // { layer, head, previousToken, induction, sameToken, firstToken }

const checkpoint = model.saveSafetensors(); // python3 scripts/data/torch-checkpoint.py FILE 2,0,1 reruns it
console.log('checkpoint', checkpoint.length, 'bytes');
trainer.dispose();
model.dispose();
