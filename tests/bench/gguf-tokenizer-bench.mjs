// Node 20: what reading a GGUF file's SentencePiece tokenizer (tokenizer.ggml.model 'llama': its
// merges generated from the scores, the tokenizer.json written and read back) adds to
// lens.loadCheckpoint, at Llama 2's 32 000 pieces and Gemma's 262 144. The vocabularies are
// synthetic, grown as BPE grows one (characters, then pieces joining two earlier ones, '▁'-led
// pieces among them, up to 16 characters; seeded), beside a tiny llama (d 8) of that vocabulary;
// the same file without tokenizer metadata is the baseline. Medians of 3 loads each. A timing,
// never a test (tests/js/gguf-tokenizer.test.mjs checks the ids).
//
//   bash scripts/build.sh && node tests/bench/gguf-tokenizer-bench.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mulberry32 } from '../js/support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { loadAttentionLens } = await import(pathToFileURL(path.join(root, 'dist/attention-lens.mjs')).href);
const lens = await loadAttentionLens({ wasmBinary: fs.readFileSync(path.join(root, 'dist/attention-lens.wasm')) });


/** A SentencePiece-shaped vocabulary of `size` pieces: tokens, scores (float32), token types. */
function vocabulary(size, seed) {
  const next = mulberry32(seed);
  const bytes = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  const chars = ['▁'];
  for (let cp = 0x21; cp < 0x7f; ++cp) chars.push(String.fromCodePoint(cp));
  for (let cp = 0xc0; cp < 0x250; ++cp) chars.push(String.fromCodePoint(cp));
  for (let cp = 0x4e00; chars.length < Math.min(4000, size / 8); ++cp) chars.push(String.fromCodePoint(cp));
  const tokens = ['<unk>', '<s>', '</s>', ...bytes];
  const seen = new Set(tokens);
  const grown = [];
  const pick = () => {
    const pool = grown.length > 0 && next() < 0.7 ? grown : chars;
    return pool[Math.floor(next() ** 2 * pool.length)]; // the earlier (frequent) ones more often
  };
  while (grown.length + chars.length + tokens.length < size) {
    let left = pick();
    if (next() < 0.4 && !left.startsWith('▁')) left = `▁${left}`;
    const piece = left + pick();
    if ([...piece].length > 16 || seen.has(piece)) continue;
    seen.add(piece);
    grown.push(piece);
  }
  const all = [...tokens, ...grown, ...chars.filter((c) => !seen.has(c))];
  const scores = all.map((t, id) => (id < tokens.length ? 0 : Math.fround(-(id - tokens.length))));
  const types = all.map((t, id) => (id === 0 ? 2 : id < 3 ? 3 : id < tokens.length ? 6 : 1));
  return { tokens: all, scores, types };
}

// ---- a GGUF v3 writer (alignment 32): metadata [key, type, value], F32 tensors ------------------
const [U32, I32, F32, STRING, ARRAY] = [4, 5, 6, 8, 9];
function writeGguf(metadata, tensors) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v >>> 0); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const string = (s) => { const b = Buffer.from(s, 'utf8'); u64(b.length); parts.push(b); };
  const f32 = (v) => { const b = Buffer.alloc(4); b.writeFloatLE(v); parts.push(b); };
  const value = (type, v) => (type === STRING ? string(v) : type === F32 ? f32(v) : u32(v));
  parts.push(Buffer.from('GGUF'));
  u32(3);
  u64(tensors.length);
  u64(metadata.length);
  for (const [key, type, v] of metadata) {
    string(key);
    if (Array.isArray(type)) {
      u32(ARRAY);
      u32(type[1]);
      u64(v.length);
      for (const item of v) value(type[1], item);
    } else {
      u32(type);
      value(type, v);
    }
  }
  let offset = 0;
  for (const [name, shape, data] of tensors) {
    string(name);
    u32(shape.length);
    for (const dim of [...shape].reverse()) u64(dim);
    u32(0);
    u64(offset);
    offset += Math.ceil(data.byteLength / 32) * 32;
  }
  const pad = () => { const size = parts.reduce((n, p) => n + p.length, 0); parts.push(Buffer.alloc((32 - (size % 32)) % 32)); };
  pad();
  for (const [, , data] of tensors) {
    parts.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    pad();
  }
  return new Uint8Array(Buffer.concat(parts));
}

function llamaGguf(vocab, tokenizer) {
  const next = mulberry32(1);
  const t = (name, shape) => [name, shape, Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (next() - 0.5) * 0.1)];
  return writeGguf([
    ['general.architecture', STRING, 'llama'], ['llama.block_count', U32, 1], ['llama.context_length', U32, 64],
    ['llama.embedding_length', U32, 8], ['llama.feed_forward_length', U32, 16], ['llama.attention.head_count', U32, 2],
    ['llama.attention.head_count_kv', U32, 2], ...tokenizer,
  ], [
    t('token_embd.weight', [vocab, 8]), t('blk.0.attn_norm.weight', [8]), t('blk.0.attn_q.weight', [8, 8]),
    t('blk.0.attn_k.weight', [8, 8]), t('blk.0.attn_v.weight', [8, 8]), t('blk.0.attn_output.weight', [8, 8]),
    t('blk.0.ffn_norm.weight', [8]), t('blk.0.ffn_gate.weight', [16, 8]), t('blk.0.ffn_up.weight', [16, 8]),
    t('blk.0.ffn_down.weight', [8, 16]), t('output_norm.weight', [8]),
  ]);
}

async function medianLoad(bytes, check) {
  const times = [];
  for (let i = 0; i < 3; ++i) {
    const started = performance.now();
    const m = await lens.loadCheckpoint({ weights: bytes });
    times.push(performance.now() - started);
    check(m);
    m.dispose();
  }
  return times.sort((a, b) => a - b)[1];
}

for (const size of [32000, 262144]) {
  const v = vocabulary(size, size);
  const longest = v.tokens.reduce((n, t) => Math.max(n, Buffer.byteLength(t)), 0);
  const splitBytes = v.tokens.reduce((n, t) => n + Buffer.byteLength(t) ** 2, 0);
  const metadata = [
    ['tokenizer.ggml.model', STRING, 'llama'], ['tokenizer.ggml.tokens', [ARRAY, STRING], v.tokens],
    ['tokenizer.ggml.scores', [ARRAY, F32], v.scores], ['tokenizer.ggml.token_type', [ARRAY, I32], v.types],
  ];
  const withTokenizer = llamaGguf(v.tokens.length, metadata);
  const without = llamaGguf(v.tokens.length, []);
  const base = await medianLoad(without, (m) => { if (m.hasTokenizer) throw new Error('a tokenizer without metadata'); });
  let ids = 0;
  const full = await medianLoad(withTokenizer, (m) => { ids = m.tokenize('The quick brown fox jumps over the lazy dog. 中文').ids.length; });
  console.log(`${size} pieces (longest ${longest} bytes, Σ bytes² ${(splitBytes / 1e6).toFixed(1)} M; file ${(withTokenizer.length / 1e6).toFixed(1)} MB): `
    + `load ${full.toFixed(0)} ms with the tokenizer, ${base.toFixed(0)} ms without: the tokenizer adds ${(full - base).toFixed(0)} ms (${ids} ids for the test sentence)`);
}
