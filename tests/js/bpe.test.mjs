// GPT-2's byte-level BPE in the core (through a loaded checkpoint's tokenize) against the reference
// tokenizer gpt-tokenizer (r50k_base, GPT-2's encoding) on a seeded mix of strings: contractions,
// runs of spaces and newlines, digits, punctuation, accents, CJK, emoji, Unicode spaces, random
// code points, lone surrogates, and invalid UTF-8 bytes (compared with the reference on
// new TextDecoder().decode(bytes): each invalid sequence is U+FFFD, as the core decodes it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode as referenceEncode } from 'gpt-tokenizer/encoding/r50k_base';

import { loadLens, mulberry32, randomCodePoints } from './support.mjs';
import { gpt2SizedCheckpoint } from './checkpoint-support.mjs';

const lens = await loadLens();
const gpt = await lens.loadCheckpoint(gpt2SizedCheckpoint());

const PIECES = [
  "I'm", "you're", "they've", "we'll", "it's", "don't", "he'd", "'s", "'S", "''s", "'t", "'re",
  "'ve", "'m", "'ll", "'d", "O'Neil's", "rock'n'roll", ' ', '  ', '   ', '\n', '\n\n', ' \n ',
  '\t', '\r\n', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028', '\u0085', '0', '7', '42', '2024',
  '3.14159', '1,000,000', '١٢٣', '½', 'Ⅻ', '!', '?', '...', '—', '–', '"', '(', ')', '[', ']',
  '{', '}', '<', '>', '<|', '|>', '@', '#', '$', '%', '^', '&', '*', '_', '-', '+', '=', '/',
  '\\', '`', '~', ';', ':', ',', '.', 'café', 'naïve', 'résumé', 'Ångström', 'e\u0301', 'ß',
  'Ελληνικά', 'Русский', 'עברית', 'العربية', 'हिन्दी', 'ไทย', '中文', '日本語の文章', '한국어',
  '漢字かなカナ', '👍', '👍🏽', '👨‍👩‍👧', '🇫🇷', '🎉🎉', '❤️', '∑', '∞', '≠', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  'Hello', 'world', 'the', ' the', 'The', 'GPT', 'attention', 'Transformer', 'x', 'A', 'z',
  'http://example.com/a?b=c', 'user@example.org', 'snake_case', 'camelCase', 'C++', '#include',
  '\ud800', '\udfff', '\ud83d', 'a\ud800b',
];

function randomString(next) {
  const kind = next();
  if (kind < 0.6) {  // words and pieces with separators
    const count = 1 + Math.floor(next() * 8);
    let text = '';
    for (let i = 0; i < count; ++i) {
      text += PIECES[Math.floor(next() * PIECES.length)];
      const sep = next();
      if (sep < 0.4) text += ' ';
      else if (sep < 0.5) text += '  ';
      else if (sep < 0.55) text += '\n';
    }
    return text;
  }
  return randomCodePoints(next);
}

function strings() {
  const next = mulberry32(14);
  const list = [...PIECES, "Hello world's  \n\n  123", ' \n', 'a  ', 'a \n b', '   x', ''];
  while (list.length < 1500) list.push(randomString(next));
  return list.filter((s) => !s.includes('<|endoftext|>'));
}

test('the core BPE gives gpt-tokenizer r50k_base ids on 1500 strings', () => {
  const list = strings();
  assert.ok(list.length >= 1000);
  let tokens = 0;
  for (const text of list) {
    const ours = gpt.tokenize(text);
    const expected = referenceEncode(text);
    assert.deepEqual(Array.from(ours.ids), expected, `ids of ${JSON.stringify(text)}`);
    assert.ok(ours.ids instanceof Int32Array);
    assert.equal(ours.tokens.length, expected.length);
    tokens += expected.length;
  }
  assert.ok(tokens > 10000, `${tokens} tokens compared`);
});

test('invalid UTF-8 bytes tokenize as their TextDecoder string does', () => {
  const next = mulberry32(99);
  const fixed = [
    [0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80],
    [0xe2, 0x82], [0x61, 0xe2, 0x82, 0x20, 0x62], [0xf0, 0x9f, 0x98], [0x80, 0x80, 0x41],
    [0xc3, 0x28], [0xf8, 0x88, 0x80, 0x80, 0x80],
  ].map((b) => Uint8Array.from(b));
  const random = [];
  for (let i = 0; i < 300; ++i) {
    const bytes = new Uint8Array(1 + Math.floor(next() * 24));
    for (let j = 0; j < bytes.length; ++j) {
      bytes[j] = next() < 0.5 ? 0x20 + Math.floor(next() * 0x5f) : Math.floor(next() * 256);
    }
    random.push(bytes);
  }
  for (const bytes of [...fixed, ...random]) {
    const text = new TextDecoder().decode(bytes);
    if (text.includes('<|endoftext|>')) continue;
    assert.deepEqual(Array.from(gpt.tokenize(bytes).ids), referenceEncode(text),
      `ids of bytes ${Array.from(bytes, (b) => b.toString(16)).join(' ')}`);
  }
});

test('tokens are the pieces of the text, and tokenize refuses non-text', () => {
  const { tokens, ids } = gpt.tokenize("Hello world's naïve café");
  assert.deepEqual(tokens.slice(0, 3), ['Hello', ' world', "'s"]);
  assert.equal(tokens.join(''), "Hello world's naïve café");
  assert.deepEqual(Array.from(ids), referenceEncode("Hello world's naïve café"));
  assert.throws(() => gpt.tokenize(42), /tokenize expects a string or a Uint8Array, got 42/);
  assert.deepEqual(Array.from(gpt.tokenize('').ids), []);
});
