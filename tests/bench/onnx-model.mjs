// Builds the benchmark's ONNX models in memory (bench.mjs feeds them to onnxruntime-web): a
// hand-written protobuf encoder for the few ONNX messages needed, and two graphs of the same
// multi-head self-attention (no biases), weights stored as graph constants:
//   'matmul': MatMul / Reshape / Transpose / MatMul / Softmax / MatMul … (opset 17, plain ops)
//   'mha':    MatMul ×3 → com.microsoft MultiHeadAttention (fused scores + softmax + A·V) → MatMul
// Field numbers are those of onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto, …).

// ---- protobuf wire format ---------------------------------------------------------------------

function varint(value) {
  // Non-negative integers below 2^53 (all we need: sizes, enums, field keys).
  const out = [];
  let v = BigInt(value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}
const key = (field, wire) => varint(field * 8 + wire);
const utf8 = (s) => [...new TextEncoder().encode(s)];

/** A message: an array of encoded fields (byte arrays / Uint8Arrays), concatenated on output. */
class Message {
  constructor() {
    this.parts = [];
    this.size = 0;
  }
  #push(bytes) {
    this.parts.push(bytes);
    this.size += bytes.length;
    return this;
  }
  int(field, value) {
    return this.#push(Uint8Array.from([...key(field, 0), ...varint(value)]));
  }
  float(field, value) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    return this.#push(Uint8Array.from([...key(field, 5), ...b]));
  }
  bytes(field, data) {
    this.#push(Uint8Array.from([...key(field, 2), ...varint(data.length)]));
    return this.#push(data instanceof Uint8Array ? data : Uint8Array.from(data));
  }
  string(field, text) {
    return this.bytes(field, utf8(text));
  }
  message(field, msg) {
    return this.bytes(field, msg.encode());
  }
  encode() {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

// ---- ONNX messages ------------------------------------------------------------------------------

const FLOAT = 1; // TensorProto.DataType
const INT64 = 7;

function tensor(name, dims, data) {
  const t = new Message();
  for (const d of dims) t.int(1, d); // dims
  const isInt = data instanceof BigInt64Array;
  t.int(2, isInt ? INT64 : FLOAT); // data_type
  t.string(8, name); // name
  t.bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength)); // raw_data
  return t;
}

function valueInfo(name, dims) {
  const shape = new Message();
  for (const d of dims) shape.message(1, new Message().int(1, d)); // dim { dim_value }
  const tensorType = new Message().int(1, FLOAT).message(2, shape); // elem_type, shape
  const type = new Message().message(1, tensorType); // tensor_type
  return new Message().string(1, name).message(2, type);
}

// attrs: { name: number (int) | { f: number } | number[] (ints) }
function node(opType, inputs, outputs, attrs = {}, domain = '') {
  const n = new Message();
  for (const i of inputs) n.string(1, i);
  for (const o of outputs) n.string(2, o);
  n.string(3, `${opType}_${outputs[0]}`);
  n.string(4, opType);
  for (const [name, value] of Object.entries(attrs)) {
    const a = new Message().string(1, name);
    if (Array.isArray(value)) {
      for (const v of value) a.int(8, v); // ints (non-negative here)
      a.int(20, 7); // INTS
    } else if (typeof value === 'object') {
      a.float(2, value.f).int(20, 1); // FLOAT
    } else {
      a.int(3, value).int(20, 2); // INT
    }
    n.message(5, a);
  }
  if (domain) n.string(7, domain);
  return n;
}

function model(nodes, initializers, inputs, outputs, opsets) {
  const graph = new Message();
  for (const n of nodes) graph.message(1, n);
  graph.string(2, 'attention');
  for (const t of initializers) graph.message(5, t);
  for (const [name, dims] of inputs) graph.message(11, valueInfo(name, dims));
  for (const [name, dims] of outputs) graph.message(12, valueInfo(name, dims));
  const m = new Message().int(1, 8); // ir_version 8
  m.string(2, 'attention-lens-bench');
  m.message(7, graph);
  for (const [domain, version] of opsets) m.message(8, new Message().string(1, domain).int(2, version));
  return m.encode();
}

// W [rows, cols] row-major (PyTorch layout, y = x·Wᵀ) -> Wᵀ [cols, rows], optionally scaled.
function transposed(w, rows, cols, first = 0, factor = 1) {
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) t[c * rows + r] = w[(first + r) * cols + c] * factor;
  }
  return t;
}

/**
 * The ONNX bytes of multi-head self-attention without biases for input 'x' [1, n, d] -> 'y'.
 * kind: 'matmul' (plain ops) or 'mha' (com.microsoft MultiHeadAttention). The 1/√d_k scale is
 * folded into the W_q constant for 'matmul' (its fastest form); 'mha' scales itself. causal
 * adds a constant [n, n] bias of 0 / -inf (the MHA op takes it as attention_bias [1, 1, n, n]).
 */
export function attentionModel({ kind, n, d, heads, inProjWeight, outProjWeight, causal }) {
  const dk = d / heads;
  const scale = 1 / Math.sqrt(dk);
  const init = [];
  const nodes = [];
  const bias = new Float32Array(n * n);
  if (causal) {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) bias[i * n + j] = -Infinity;
  }
  const wo = transposed(outProjWeight, d, d);
  init.push(tensor('wo', [d, d], wo));
  if (kind === 'matmul') {
    init.push(tensor('wq', [d, d], transposed(inProjWeight, d, d, 0, scale)));
    init.push(tensor('wk', [d, d], transposed(inProjWeight, d, d, d)));
    init.push(tensor('wv', [d, d], transposed(inProjWeight, d, d, 2 * d)));
    init.push(tensor('heads_shape', [3], new BigInt64Array([BigInt(n), BigInt(heads), BigInt(dk)])));
    init.push(tensor('out_shape', [3], new BigInt64Array([1n, BigInt(n), BigInt(d)])));
    for (const m of ['q', 'k', 'v']) {
      nodes.push(node('MatMul', ['x', `w${m}`], [`${m}_proj`]));
      nodes.push(node('Reshape', [`${m}_proj`, 'heads_shape'], [`${m}_heads`]));
    }
    nodes.push(node('Transpose', ['q_heads'], ['q_t'], { perm: [1, 0, 2] })); // [h, n, dk]
    nodes.push(node('Transpose', ['k_heads'], ['k_t'], { perm: [1, 2, 0] })); // [h, dk, n]
    nodes.push(node('Transpose', ['v_heads'], ['v_t'], { perm: [1, 0, 2] })); // [h, n, dk]
    nodes.push(node('MatMul', ['q_t', 'k_t'], ['scores'])); // [h, n, n], already scaled
    let logits = 'scores';
    if (causal) {
      init.push(tensor('causal_bias', [n, n], bias));
      nodes.push(node('Add', ['scores', 'causal_bias'], ['masked']));
      logits = 'masked';
    }
    nodes.push(node('Softmax', [logits], ['weights'], { axis: 2 }));
    nodes.push(node('MatMul', ['weights', 'v_t'], ['context'])); // [h, n, dk]
    nodes.push(node('Transpose', ['context'], ['context_t'], { perm: [1, 0, 2] })); // [n, h, dk]
    nodes.push(node('Reshape', ['context_t', 'out_shape'], ['concat'])); // [1, n, d]
    nodes.push(node('MatMul', ['concat', 'wo'], ['y']));
    return model(nodes, init, [['x', [1, n, d]]], [['y', [1, n, d]]], [['', 17]]);
  }
  if (kind === 'mha') {
    init.push(tensor('wq', [d, d], transposed(inProjWeight, d, d, 0)));
    init.push(tensor('wk', [d, d], transposed(inProjWeight, d, d, d)));
    init.push(tensor('wv', [d, d], transposed(inProjWeight, d, d, 2 * d)));
    for (const m of ['q', 'k', 'v']) nodes.push(node('MatMul', ['x', `w${m}`], [`${m}_proj`]));
    const inputs = ['q_proj', 'k_proj', 'v_proj'];
    if (causal) {
      init.push(tensor('causal_bias', [1, 1, n, n], bias));
      inputs.push('', '', 'causal_bias'); // bias, key_padding_mask, attention_bias
    }
    nodes.push(node('MultiHeadAttention', inputs, ['concat'], { num_heads: heads, scale: { f: scale } },
      'com.microsoft'));
    nodes.push(node('MatMul', ['concat', 'wo'], ['y']));
    return model(nodes, init, [['x', [1, n, d]]], [['y', [1, n, d]]], [['', 17], ['com.microsoft', 1]]);
  }
  throw new Error(`unknown ONNX model kind '${kind}'`);
}
