// An independent .safetensors reader (every tensor copied into its own aligned typed array) and a
// tiny writer for crafting files: shared by the tests (tests/js/support.mjs) and scripts/measure/.
import { readFileSync } from 'node:fs';

const DTYPES = {
  F32: Float32Array,
  F64: Float64Array,
  U8: Uint8Array,
};

/**
 * Parses .safetensors bytes: an 8-byte little-endian header length, a JSON header, then the
 * tensor data. Every tensor is copied into its own (aligned) typed array.
 * @returns {{tensors: Record<string, {dtype: string, shape: number[], data: Float32Array|Float64Array|Uint8Array}>, metadata: Record<string, string>}}
 */
export function parseSafetensors(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (u8.length < 8) throw new Error(`safetensors: ${u8.length} bytes, too short for a header`);
  const headerLength = Number(new DataView(u8.buffer, u8.byteOffset, 8).getBigUint64(0, true));
  if (8 + headerLength > u8.length) throw new Error('safetensors: header runs past the end');
  const header = JSON.parse(new TextDecoder('utf-8', { fatal: true })
    .decode(u8.subarray(8, 8 + headerLength)));
  const dataStart = 8 + headerLength;
  const tensors = {};
  let metadata = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = info;
      continue;
    }
    const Type = DTYPES[info.dtype];
    if (!Type) throw new Error(`safetensors: unsupported dtype ${info.dtype} for ${name}`);
    const [begin, end] = info.data_offsets;
    const count = info.shape.reduce((a, b) => a * b, 1);
    if (end - begin !== count * Type.BYTES_PER_ELEMENT || dataStart + end > u8.length) {
      throw new Error(`safetensors: bad data_offsets for ${name}`);
    }
    // A copy into a fresh ArrayBuffer, so the typed array is aligned (Uint8Array's slice, not
    // Buffer's, which would return a view into Node's shared pool).
    const copy = Uint8Array.prototype.slice.call(u8, dataStart + begin, dataStart + end);
    tensors[name] = { dtype: info.dtype, shape: info.shape, data: new Type(copy.buffer) };
  }
  return { tensors, metadata };
}

/** readSafetensors(path): parseSafetensors of a file's bytes. */
export function readSafetensors(path) {
  return parseSafetensors(readFileSync(path));
}

/**
 * Minimal writer, for crafting files the tests need (extra or missing tensors).
 * tensors: {name: {dtype: 'F32'|'F64'|'U8', shape, data}}.
 */
export function writeSafetensors(tensors, metadata = undefined) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  const parts = [];
  for (const [name, t] of Object.entries(tensors)) {
    const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
    parts.push(bytes);
    offset += bytes.length;
  }
  return assembleSafetensors(header, parts);
}

// A file from its header object and its tensors' bytes in order: the header's length, the JSON
// (padded to 8 bytes), the data.
function assembleSafetensors(header, parts) {
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8 !== 0) json += ' ';
  const jsonBytes = new TextEncoder().encode(json);
  const size = parts.reduce((sum, p) => sum + p.length, 0);
  const out = new Uint8Array(8 + jsonBytes.length + size);
  new DataView(out.buffer).setBigUint64(0, BigInt(jsonBytes.length), true);
  out.set(jsonBytes, 8);
  let at = 8 + jsonBytes.length;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A file's tensors split into shards as a sharded Hub repo stores them: `shardOf(name)` (0-based)
 * says which shard holds each tensor; the bytes are copied as stored (any dtype). Returns the
 * shards' bytes and model.safetensors.index.json's object ({ metadata, weight_map }) for files
 * named `names[i]`.
 */
export function splitSafetensors(bytes, shardOf, names) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const headerLength = Number(new DataView(u8.buffer, u8.byteOffset, 8).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(u8.subarray(8, 8 + headerLength)));
  const dataStart = 8 + headerLength;
  const shards = names.map(() => ({ header: {}, parts: [], size: 0 }));
  const weightMap = {};
  let total = 0;
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const shard = shards[shardOf(name)];
    const [a, b] = info.data_offsets;
    shard.header[name] = { dtype: info.dtype, shape: info.shape, data_offsets: [shard.size, shard.size + b - a] };
    shard.parts.push(u8.subarray(dataStart + a, dataStart + b));
    shard.size += b - a;
    total += b - a;
    weightMap[name] = names[shardOf(name)];
  }
  const files = shards.map(({ header: h, parts }) => assembleSafetensors({ __metadata__: { format: 'pt' }, ...h }, parts));
  return { files, index: { metadata: { total_size: total }, weight_map: weightMap } };
}
