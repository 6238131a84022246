// Random BF16 checkpoints in the shapes of real Llama-family models (their config.json's sizes),
// for measurements of memory and time: the weights are random, the numbers are not of text.

export const SHAPES = {
  'SmolLM2-135M': { hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9,
    num_key_value_heads: 3, vocab_size: 49152, tie_word_embeddings: true, rope_theta: 100000 },
  'SmolLM2-360M': { hidden_size: 960, intermediate_size: 2560, num_hidden_layers: 32, num_attention_heads: 15,
    num_key_value_heads: 5, vocab_size: 49152, tie_word_embeddings: true, rope_theta: 100000 },
  'Qwen2.5-0.5B': { model_type: 'qwen2', hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24,
    num_attention_heads: 14, num_key_value_heads: 2, vocab_size: 151936, tie_word_embeddings: true, rope_theta: 1e6 },
  'TinyLlama-1.1B': { hidden_size: 2048, intermediate_size: 5632, num_hidden_layers: 22, num_attention_heads: 32,
    num_key_value_heads: 4, vocab_size: 32000, tie_word_embeddings: false, rope_theta: 10000 },
};

// A file of the model's tensors, BF16 values of magnitude ~0.02 drawn from a small table.
export function checkpoint(shape) {
  const c = { model_type: 'llama', max_position_embeddings: 2048, rms_norm_eps: 1e-5, hidden_act: 'silu', ...shape };
  const d = c.hidden_size, kv = (d / c.num_attention_heads) * c.num_key_value_heads, w = c.intermediate_size;
  const qwen = c.model_type === 'qwen2';
  const tensors = [['model.embed_tokens.weight', [c.vocab_size, d]]];
  for (let l = 0; l < c.num_hidden_layers; ++l) {
    const p = `model.layers.${l}.`;
    tensors.push([`${p}input_layernorm.weight`, [d]], [`${p}self_attn.q_proj.weight`, [d, d]],
      [`${p}self_attn.k_proj.weight`, [kv, d]], [`${p}self_attn.v_proj.weight`, [kv, d]],
      [`${p}self_attn.o_proj.weight`, [d, d]], [`${p}post_attention_layernorm.weight`, [d]],
      [`${p}mlp.gate_proj.weight`, [w, d]], [`${p}mlp.up_proj.weight`, [w, d]], [`${p}mlp.down_proj.weight`, [d, w]]);
    if (qwen) tensors.push([`${p}self_attn.q_proj.bias`, [d]], [`${p}self_attn.k_proj.bias`, [kv]], [`${p}self_attn.v_proj.bias`, [kv]]);
  }
  tensors.push(['model.norm.weight', [d]]);
  if (!c.tie_word_embeddings) tensors.push(['lm_head.weight', [c.vocab_size, d]]);
  const header = {};
  let offset = 0;
  for (const [name, dims] of tensors) {
    const bytes = 2 * dims.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'BF16', shape: dims, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8) json += ' ';
  const text = new TextEncoder().encode(json);
  const file = new Uint8Array(8 + text.length + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(text.length), true);
  file.set(text, 8);
  const values = new Uint16Array(file.buffer, 8 + text.length, offset / 2);
  const table = Uint16Array.from({ length: 4096 }, (_, i) => ((i * 2654435761) >>> 20) % 2 ? 0x3ca3 + (i % 64) : 0xbca3 + (i % 64));
  for (let i = 0; i < values.length; i += table.length) values.set(table.subarray(0, Math.min(table.length, values.length - i)), i);
  for (const [name, dims] of tensors) { // norms at 1
    if (dims.length === 1 && name.endsWith('norm.weight')) new Uint16Array(file.buffer, 8 + text.length + header[name].data_offsets[0], dims[0]).fill(0x3f80);
  }
  return { file, config: c };
}
