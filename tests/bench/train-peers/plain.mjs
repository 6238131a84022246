// The training benchmark's plain-JavaScript peer: the standard transformer's forward, a
// hand-written backward and AdamW with Float32Array loops, as a tutorial would write them
// (after llm.c's train_gpt2.c; no tricks). Also used by tests/js/train-peers.test.mjs.

// ---- forward and backward of each op -----------------------------------------------------------

// out = inp · wᵀ + bias. inp [N, Cin], w [Cout, Cin] (PyTorch layout), bias [Cout] or null.
function matmulForward(inp, w, bias, N, Cin, Cout, Float) {
  const out = new Float(N * Cout);
  for (let n = 0; n < N; n++) {
    for (let o = 0; o < Cout; o++) {
      let sum = bias ? bias[o] : 0;
      for (let i = 0; i < Cin; i++) sum += inp[n * Cin + i] * w[o * Cin + i];
      out[n * Cout + o] = sum;
    }
  }
  return out;
}

// Accumulates dw [Cout, Cin] and dbias [Cout]; returns dinp [N, Cin].
function matmulBackward(dout, inp, w, dw, dbias, N, Cin, Cout, Float) {
  const dinp = new Float(N * Cin);
  for (let n = 0; n < N; n++) {
    for (let o = 0; o < Cout; o++) {
      const d = dout[n * Cout + o];
      for (let i = 0; i < Cin; i++) {
        dinp[n * Cin + i] += w[o * Cin + i] * d;
        dw[o * Cin + i] += inp[n * Cin + i] * d;
      }
      if (dbias) dbias[o] += d;
    }
  }
  return dinp;
}

// LayerNorm over the last axis of x [N, C]; keeps mean and 1/std [N] for the backward.
function layernormForward(x, w, b, N, C, eps, Float) {
  const out = new Float(N * C);
  const mean = new Float(N);
  const rstd = new Float(N);
  for (let n = 0; n < N; n++) {
    let m = 0;
    for (let c = 0; c < C; c++) m += x[n * C + c];
    m /= C;
    let v = 0;
    for (let c = 0; c < C; c++) v += (x[n * C + c] - m) ** 2;
    v /= C;
    const s = 1 / Math.sqrt(v + eps);
    for (let c = 0; c < C; c++) out[n * C + c] = (x[n * C + c] - m) * s * w[c] + b[c];
    mean[n] = m;
    rstd[n] = s;
  }
  return { out, mean, rstd };
}

// Accumulates dw, db [C]; returns dx [N, C].
function layernormBackward(dout, x, mean, rstd, w, dw, db, N, C, Float) {
  const dx = new Float(N * C);
  for (let n = 0; n < N; n++) {
    // dnorm = dout · w; dx = (dnorm − mean(dnorm) − norm · mean(dnorm · norm)) · rstd
    let dnormMean = 0;
    let dnormNormMean = 0;
    for (let c = 0; c < C; c++) {
      const norm = (x[n * C + c] - mean[n]) * rstd[n];
      const dnorm = dout[n * C + c] * w[c];
      dnormMean += dnorm;
      dnormNormMean += dnorm * norm;
    }
    dnormMean /= C;
    dnormNormMean /= C;
    for (let c = 0; c < C; c++) {
      const norm = (x[n * C + c] - mean[n]) * rstd[n];
      const dnorm = dout[n * C + c] * w[c];
      dx[n * C + c] = (dnorm - dnormMean - norm * dnormNormMean) * rstd[n];
      dw[c] += dout[n * C + c] * norm;
      db[c] += dout[n * C + c];
    }
  }
  return dx;
}

// Causal multi-head attention. qkv [B, T, 3C] (q, k, v side by side; head h at columns h·hs);
// returns y [B, T, C] (heads concatenated) and the softmax weights att [B, H, T, T].
function attentionForward(qkv, B, T, C, H, Float) {
  const hs = C / H;
  const scale = 1 / Math.sqrt(hs);
  const y = new Float(B * T * C);
  const att = new Float(B * H * T * T);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let h = 0; h < H; h++) {
        const q = (b * T + t) * 3 * C + h * hs;
        const a = ((b * H + h) * T + t) * T;
        // scores q·k / √hs for the keys t2 <= t, then a stable softmax
        let max = -Infinity;
        for (let t2 = 0; t2 <= t; t2++) {
          const k = (b * T + t2) * 3 * C + C + h * hs;
          let dot = 0;
          for (let i = 0; i < hs; i++) dot += qkv[q + i] * qkv[k + i];
          att[a + t2] = dot * scale;
          if (att[a + t2] > max) max = att[a + t2];
        }
        let sum = 0;
        for (let t2 = 0; t2 <= t; t2++) {
          att[a + t2] = Math.exp(att[a + t2] - max);
          sum += att[a + t2];
        }
        for (let t2 = 0; t2 <= t; t2++) att[a + t2] /= sum; // keys after t stay 0
        // y = att · v
        const out = (b * T + t) * C + h * hs;
        for (let t2 = 0; t2 <= t; t2++) {
          const v = (b * T + t2) * 3 * C + 2 * C + h * hs;
          for (let i = 0; i < hs; i++) y[out + i] += att[a + t2] * qkv[v + i];
        }
      }
    }
  }
  return { y, att };
}

// Returns dqkv [B, T, 3C] from dy [B, T, C].
function attentionBackward(dy, qkv, att, B, T, C, H, Float) {
  const hs = C / H;
  const scale = 1 / Math.sqrt(hs);
  const dqkv = new Float(B * T * 3 * C);
  const datt = new Float(T);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let h = 0; h < H; h++) {
        const q = (b * T + t) * 3 * C + h * hs;
        const a = ((b * H + h) * T + t) * T;
        const out = (b * T + t) * C + h * hs;
        // through y = att · v
        for (let t2 = 0; t2 <= t; t2++) {
          const v = (b * T + t2) * 3 * C + 2 * C + h * hs;
          let d = 0;
          for (let i = 0; i < hs; i++) {
            d += qkv[v + i] * dy[out + i];
            dqkv[v + i] += att[a + t2] * dy[out + i];
          }
          datt[t2] = d;
        }
        // through the softmax: dscore = att · (datt − Σ att · datt)
        let dot = 0;
        for (let t2 = 0; t2 <= t; t2++) dot += att[a + t2] * datt[t2];
        // through score = q·k · scale
        for (let t2 = 0; t2 <= t; t2++) {
          const k = (b * T + t2) * 3 * C + C + h * hs;
          const dscore = att[a + t2] * (datt[t2] - dot) * scale;
          for (let i = 0; i < hs; i++) {
            dqkv[q + i] += qkv[k + i] * dscore;
            dqkv[k + i] += qkv[q + i] * dscore;
          }
        }
      }
    }
  }
  return dqkv;
}

// Softmax cross-entropy of logits [N, V] against targets [N] (< 0: ignored), averaged over the
// targets kept. Returns the loss and dlogits [N, V].
function crossEntropy(logits, targets, N, V, Float) {
  let count = 0;
  for (let n = 0; n < N; n++) if (targets[n] >= 0) count++;
  let loss = 0;
  const dlogits = new Float(N * V);
  for (let n = 0; n < N; n++) {
    if (targets[n] < 0) continue;
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, logits[n * V + v]);
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(logits[n * V + v] - max);
    loss += Math.log(sum) + max - logits[n * V + targets[n]];
    for (let v = 0; v < V; v++) {
      const p = Math.exp(logits[n * V + v] - max) / sum;
      dlogits[n * V + v] = (p - (v === targets[n] ? 1 : 0)) / count;
    }
  }
  return { loss: loss / count, dlogits };
}

// ---- the model ---------------------------------------------------------------------------------

/**
 * The loss and the gradient of every parameter (same names as `params`) for one batch.
 * ids, targets: Int32Array [batch * context]; config as setup.mjs's CONFIG (layerNorm, learned
 * positions, biases, untied, no MLP). `Float` is the array type (Float64Array for the
 * finite-difference test).
 */
export function lossAndGradients(params, config, ids, targets, { Float = Float32Array, lnEps = 1e-5 } = {}) {
  const { dModel: C, heads: H, layers: L, vocab: V } = config;
  const B = ids.length / config.context;
  const T = config.context;
  const N = B * T;
  const p = (name) => params[name];
  const grads = Object.fromEntries(Object.entries(params).map(([name, w]) => [name, new Float(w.length)]));

  // forward: x = embed[ids] + pos[t]
  const x0 = new Float(N * C);
  for (let n = 0; n < N; n++) {
    for (let c = 0; c < C; c++) x0[n * C + c] = p('embed.weight')[ids[n] * C + c] + p('pos.weight')[(n % T) * C + c];
  }
  const xs = [x0];
  const saved = [];
  for (let l = 0; l < L; l++) {
    const pre = `layers.${l}.`;
    const x = xs[l];
    const ln = layernormForward(x, p(`${pre}ln1.weight`), p(`${pre}ln1.bias`), N, C, lnEps, Float);
    const qkv = matmulForward(ln.out, p(`${pre}attn.in_proj_weight`), p(`${pre}attn.in_proj_bias`), N, C, 3 * C, Float);
    const { y, att } = attentionForward(qkv, B, T, C, H, Float);
    const o = matmulForward(y, p(`${pre}attn.out_proj.weight`), p(`${pre}attn.out_proj.bias`), N, C, C, Float);
    const next = new Float(N * C);
    for (let i = 0; i < N * C; i++) next[i] = x[i] + o[i]; // the residual
    xs.push(next);
    saved.push({ ln, qkv, y, att });
  }
  const lnf = layernormForward(xs[L], p('ln_f.weight'), p('ln_f.bias'), N, C, lnEps, Float);
  const logits = matmulForward(lnf.out, p('unembed.weight'), null, N, C, V, Float);
  const { loss, dlogits } = crossEntropy(logits, targets, N, V, Float);

  // backward
  const dlnf = matmulBackward(dlogits, lnf.out, p('unembed.weight'), grads['unembed.weight'], null, N, C, V, Float);
  let dx = layernormBackward(dlnf, xs[L], lnf.mean, lnf.rstd, p('ln_f.weight'), grads['ln_f.weight'], grads['ln_f.bias'], N, C, Float);
  for (let l = L - 1; l >= 0; l--) {
    const pre = `layers.${l}.`;
    const { ln, qkv, y, att } = saved[l];
    // x_{l+1} = x_l + out_proj(attn(ln1(x_l))): dx flows to x_l directly and through the block
    const dy = matmulBackward(dx, y, p(`${pre}attn.out_proj.weight`), grads[`${pre}attn.out_proj.weight`], grads[`${pre}attn.out_proj.bias`], N, C, C, Float);
    const dqkv = attentionBackward(dy, qkv, att, B, T, C, H, Float);
    const dln = matmulBackward(dqkv, ln.out, p(`${pre}attn.in_proj_weight`), grads[`${pre}attn.in_proj_weight`], grads[`${pre}attn.in_proj_bias`], N, C, 3 * C, Float);
    const dxBlock = layernormBackward(dln, xs[l], ln.mean, ln.rstd, p(`${pre}ln1.weight`), grads[`${pre}ln1.weight`], grads[`${pre}ln1.bias`], N, C, Float);
    const dprev = new Float(N * C);
    for (let i = 0; i < N * C; i++) dprev[i] = dx[i] + dxBlock[i];
    dx = dprev;
  }
  for (let n = 0; n < N; n++) {
    for (let c = 0; c < C; c++) {
      grads['embed.weight'][ids[n] * C + c] += dx[n * C + c];
      grads['pos.weight'][(n % T) * C + c] += dx[n * C + c];
    }
  }
  return { loss, grads };
}

// ---- AdamW with global-norm clipping ----------------------------------------------------------

/** Optimizer state for `params`: { step, m, v } (m and v zero, one array per parameter). */
export function adamwState(params, Float = Float32Array) {
  const zeros = () => Object.fromEntries(Object.entries(params).map(([name, w]) => [name, new Float(w.length)]));
  return { step: 0, m: zeros(), v: zeros() };
}

/**
 * Scales all gradients so that their global L2 norm is at most `clip` (as torch's
 * clip_grad_norm_), then one AdamW step on `params` in place (as torch.optim.AdamW: decoupled
 * weight decay on every parameter, bias-corrected moments). Returns the norm before clipping.
 */
export function adamwStep(params, grads, state, { lr, beta1, beta2, eps, weightDecay, clip }) {
  let sumSquares = 0;
  for (const g of Object.values(grads)) for (let i = 0; i < g.length; i++) sumSquares += g[i] * g[i];
  const norm = Math.sqrt(sumSquares);
  const factor = Math.min(1, clip / (norm + 1e-6));
  state.step++;
  const correction1 = 1 - beta1 ** state.step;
  const correction2 = 1 - beta2 ** state.step;
  for (const [name, w] of Object.entries(params)) {
    const g = grads[name];
    const m = state.m[name];
    const v = state.v[name];
    for (let i = 0; i < w.length; i++) {
      const gi = g[i] * factor;
      w[i] *= 1 - lr * weightDecay;
      m[i] = beta1 * m[i] + (1 - beta1) * gi;
      v[i] = beta2 * v[i] + (1 - beta2) * gi * gi;
      w[i] -= (lr / correction1) * m[i] / (Math.sqrt(v[i] / correction2) + eps);
    }
  }
  return norm;
}

// ---- the peer -------------------------------------------------------------------------------------

/**
 * The benchmark peer: a copy of the initial parameters trained in place.
 * step({ ids, targets }) runs one training step and returns the loss before its update.
 */
export function createPlainPeer(setup) {
  const params = Object.fromEntries(Object.entries(setup.params).map(([name, w]) => [name, Float32Array.from(w)]));
  const state = adamwState(params);
  return {
    name: 'plain JS',
    step({ ids, targets }) {
      const { loss, grads } = lossAndGradients(params, setup.config, ids, targets);
      adamwStep(params, grads, state, setup.optimizer);
      return loss;
    },
    dispose() {},
  };
}
