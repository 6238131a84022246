// A GGUF fixture of tests/data/gguf with a tokenizer of its own in its metadata, as a real GGUF file
// holds one (the fixtures have none: scripts/data/make-gguf-golden.py writes weights only): the
// page's tests (the session in node, the Your model view in the browsers) load it as a user's
// .gguf file, with no config and no tokenizer file beside it. The tokenizer is a byte-level BPE
// (tokenizer.ggml.model 'gpt2', pre-tokenizer 'gpt-2') over printable ASCII — GPT-2's byte
// characters for bytes 32…126 ('Ġ' for the space) and one merge, 'Ġ t' — filling the fixture's
// vocabulary of 96 tokens exactly.
import { readFileSync } from 'node:fs';

import { concatArrays } from '../../scripts/lib/bytes.mjs';
import { DATA_DIR } from './support.mjs';

const STRING = 8;
const I32 = 5;
const ARRAY = 9;
const ALIGNMENT = 32; // the fixtures' general.alignment (GGUF's default)

/** The tokens by id: bytes 32…126 as GGUF's byte-level BPE spells them, then the one merge's token. */
export const ASCII_TOKENS = Object.freeze([...Array.from({ length: 95 }, (_, i) => (i === 0 ? 'Ġ' : String.fromCharCode(32 + i))), 'Ġt']);

const encoder = new TextEncoder();

/** Little-endian bytes of one metadata entry (key, then its typed value). */
function entry(key, type, value) {
  const parts = [];
  const u32 = (v) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v, true);
    parts.push(b);
  };
  const u64 = (v) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
    parts.push(b);
  };
  const string = (s) => {
    const b = encoder.encode(s);
    u64(b.length);
    parts.push(b);
  };
  string(key);
  if (Array.isArray(type)) {
    u32(ARRAY);
    u32(type[1]);
    u64(value.length);
    for (const item of value) {
      if (type[1] === STRING) string(item);
      else u32(item >>> 0);
    }
  } else {
    u32(type);
    string(value);
  }
  return parts;
}


/**
 * `gguf` (a GGUF file's bytes) with the ASCII tokenizer's metadata put first, a description string
 * sized so the header grows by a whole number of alignment units (every tensor's offset stays valid).
 */
export function withAsciiTokenizer(gguf) {
  const entries = [
    ...entry('tokenizer.ggml.model', STRING, 'gpt2'),
    ...entry('tokenizer.ggml.pre', STRING, 'gpt-2'),
    ...entry('tokenizer.ggml.tokens', [ARRAY, STRING], ASCII_TOKENS),
    ...entry('tokenizer.ggml.token_type', [ARRAY, I32], ASCII_TOKENS.map(() => 1)),
    ...entry('tokenizer.ggml.merges', [ARRAY, STRING], ['Ġ t']),
  ];
  let size = entries.reduce((n, p) => n + p.length, 0);
  const key = 'general.description';
  const fixed = 8 + key.length + 4 + 8; // the description's key and type and length
  let text = 0;
  while ((size + fixed + text) % ALIGNMENT !== 0) ++text;
  entries.push(...entry(key, STRING, 'x'.repeat(text)));
  size += fixed + text;
  const added = concatArrays(entries);
  const out = new Uint8Array(gguf.length + added.length);
  out.set(gguf.subarray(0, 24));
  out.set(added, 24);
  out.set(gguf.subarray(24), 24 + added.length);
  const counts = new DataView(out.buffer);
  counts.setBigUint64(16, counts.getBigUint64(16, true) + 6n, true); // the metadata count: 5 tokenizer keys and the description
  return out;
}

/** tests/data/gguf/llama-q8_0.gguf (a tiny Llama, vocabulary 96, Q8_0) with the ASCII tokenizer. */
export const llamaQ8WithTokenizer = () => withAsciiTokenizer(new Uint8Array(readFileSync(`${DATA_DIR}gguf/llama-q8_0.gguf`)));
