// The JS API's shared pieces: type-only argument checks (every value check lives in the C++
// core), describe() for messages, unwrap() of the core's results, the handle finalizer.
// A module of the JS API (web/api/attention-lens-api.js is its entry; scripts/bundle-api.mjs
// bundles them into dist/attention-lens.mjs).

/**
 * Throws unless this build binds the trainer, gradients, head scores and the checkpoint import:
 * the <attention-lens> element's module (attention-lens.embed.mjs, inlined in
 * attention-lens-element.js) is built without them (ATTN_BINDINGS_FULL_API=0 in embind.cpp).
 */
export function needTraining(bound, what) {
  if (typeof bound !== 'function') {
    throw new Error(`${what} is not in this build: the <attention-lens> element's module leaves out training ` +
      'and checkpoints; import attention-lens (or attention-lens/single-file) for them');
  }
}

// Layers not disposed are freed when garbage-collected; dispose() frees them at once.
export const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((handle) => handle.delete())
  : null;

/** Frees `owner`'s handle now (no finalizer left for it); returns null for the owner to keep. */
export function freeHandle(owner, handle) {
  finalizer?.unregister(owner);
  handle.delete();
  return null;
}

export const SIZE_MAX = 0xffffffff;

// Node (not a browser, not a worker).
export const isNode =
  typeof process === 'object' && process?.versions?.node != null && typeof window === 'undefined';

// The keys of a sequence's shape and of a probe (model.js and the probe options below).
export const SEQUENCE_KEYS = ['n', 'batch'];
const PROBE_KEYS = ['ids', 'targets', 'n', 'batch'];

// ---- argument checks: types only; every value check lives in the C++ core ----------------

export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (value instanceof DataView) return `a DataView of ${value.byteLength} bytes`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of length ${value.length}`;
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

// `options` must be a plain object whose keys are among `allowed`.
export function checkOptions(what, options, allowed) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new Error(`${what} options must be an object, got ${describe(options)}`);
  }
  checkKeys(`${what} options`, options, allowed);
}

export function checkKeys(what, object, allowed) {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) {
      throw new Error(`unknown ${what} key '${key}'; expected one of: ${allowed.join(', ')}`);
    }
  }
}

export function integerIn(name, value, min, max) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

export function numberOption(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new Error(`${name} must be a number, got ${describe(value)}`);
  return value;
}

export function booleanOption(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new Error(`${name} must be true or false, got ${describe(value)}`);
  return value;
}

export function stringOption(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new Error(`${name} must be a string, got ${describe(value)}`);
  return value;
}

/**
 * An options object checked against its fields as the core lists them (lens.catalog.fields.*:
 * { name, kind, min, max, note, fields }): every key known, every value of its kind, the defaults
 * (lens.catalog.defaults.*) filled in. The core checks the values themselves.
 */
export function fieldOptions(what, options, fields, defaults) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new Error(`${what} expects an options object, got ${describe(options)}`);
  }
  checkKeys(`${what} options`, options, fields.map((f) => f.name));
  return fieldValues(options, fields, defaults, '');
}

function fieldValues(options, fields, defaults, prefix) {
  const out = {};
  for (const field of fields) out[field.name] = fieldValue(`${prefix}${field.name}`, options[field.name], field, defaults[field.name]);
  return out;
}

function fieldValue(name, value, field, fallback) {
  switch (field.kind) {
    case 'count':
      return integerIn(name, value ?? fallback, field.min, field.max);
    case 'number':
      return numberOption(name, value, fallback);
    case 'boolean':
      return booleanOption(name, value, fallback);
    case 'choice':
      return stringOption(name, value, fallback);
    case 'optionalBoolean':
      return value === undefined || value === null ? fallback : booleanOption(name, value, fallback);
    case 'numbers':
      if (value === undefined) return fallback;
      if (value === null) return null;
      if (!(Array.isArray(value) || ArrayBuffer.isView(value))) {
        throw new Error(`${name} must be an array of numbers (${field.note}) or null, got ${describe(value)}`);
      }
      return Array.from(value, Number);
    case 'object': {
      if (value === undefined || value === null) return { ...fallback };
      if (typeof value !== 'object' || Array.isArray(value)) {
        const shape = field.fields.map((f) => (f.kind === 'numbers' || f.kind === 'optionalBoolean' ? `${f.name}?` : f.name));
        throw new Error(`${name} must be { ${shape.join(', ')} }, got ${describe(value)}`);
      }
      checkKeys(name, value, field.fields.map((f) => f.name));
      return fieldValues(value, field.fields, fallback, `${name}.`);
    }
    default:
      throw new Error(`${name}: the core lists a field of an unknown kind '${field.kind}'`);
  }
}

// A typed array or array of numbers, passed through; undefined when absent and optional.
export function numbers(name, value, required = false) {
  if (value === undefined || value === null) {
    if (required) throw new Error(`${name} is required (a Float32Array)`);
    return undefined;
  }
  const bigInts = value instanceof BigInt64Array || value instanceof BigUint64Array;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView) && !bigInts) return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'number')) return value;
  throw new Error(`${name} must be a Float32Array or an array of numbers, got ${describe(value)}`);
}

// Token ids (or targets): an Int32Array, or an array / typed array of integers, as Int32Array.
export function tokenIds(name, value) {
  if (value instanceof Int32Array) return value;
  if (Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView))) {
    const ids = Int32Array.from(value, (v, i) => {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) {
        throw new Error(`${name}[${i}] must be an integer token id, got ${describe(v)}`);
      }
      return v;
    });
    return ids;
  }
  throw new Error(`${name} must be an Int32Array or an array of integers, got ${describe(value)}`);
}

// { n, batch } of `options` for `count` tokens: batch defaults to 1, n to count / batch.
export function sequenceShape(what, options, keys, count) {
  checkOptions(what, options, keys);
  const batch = integerIn('batch', options.batch ?? 1, 0, SIZE_MAX);
  const n = integerIn('n', options.n ?? (batch > 0 ? Math.floor(count / batch) : 0), 0, SIZE_MAX);
  return { n, batch };
}

// A probe from options { ids, targets?, n, batch }, or { ids: undefined } for the default one.
export function probeOptions(what, options, withTargets) {
  const keys = withTargets ? PROBE_KEYS : PROBE_KEYS.filter((key) => key !== 'targets');
  checkOptions(what, options, keys);
  if (options.ids === undefined) {
    if (Object.keys(options).some((key) => options[key] !== undefined)) {
      throw new Error(`${what}: n, batch and targets describe your own probe; pass its ids too`);
    }
    return { ids: undefined, targets: undefined, n: 0, batch: 0 };
  }
  const ids = tokenIds('ids', options.ids);
  const targets = options.targets === undefined ? undefined : tokenIds('targets', options.targets);
  return { ids, targets, ...sequenceShape(what, { n: options.n, batch: options.batch }, SEQUENCE_KEYS, ids.length) };
}

// A head score, or null when the probe could not measure it (the core's NaN).
export function measured(score) {
  return Number.isNaN(score) ? null : score;
}

// 0/1 flags (Uint8Array, array of numbers or booleans) as a Uint8Array.
export function flags(name, value) {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    return Uint8Array.from(value, (v) => (v ? 1 : 0));
  }
  throw new Error(`${name} must be a Uint8Array or an array of 0/1 flags, got ${describe(value)}`);
}

export function byteArray(name, value) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new Error(`${name} expects a Uint8Array or ArrayBuffer, got ${describe(value)}`);
}

// Every fallible binding returns its result or { error: message } (see cpp/bindings/common.hpp).
export function unwrap(result) {
  if (result !== null && typeof result === 'object' && typeof result.error === 'string') {
    throw new Error(result.error);
  }
  return result;
}

export function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze(value[key]);
    Object.freeze(value);
  }
  return value;
}
