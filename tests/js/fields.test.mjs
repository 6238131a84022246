// The options objects' one field list (the core's visit_fields, lens.catalog.fields) against the
// hand-written types (web/api/attention-lens.d.ts and its parts) and the defaults: a field the core reads but the
// types do not declare (or the reverse) fails here, as does a default of the wrong kind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { loadLens } from './support.mjs';

const lens = await loadLens();
const { fields, defaults } = lens.catalog;
// The declarations: attention-lens.d.ts and the parts it re-exports.
const dts = ['', '-layer', '-model', '-checkpoint']
  .map((part) => readFileSync(new URL(`../../web/api/attention-lens${part}.d.ts`, import.meta.url), 'utf8')).join('\n');

/** The property names of `interface name { … }` in the .d.ts (its own lines, in order). */
function declared(name) {
  const start = dts.indexOf(`export interface ${name} {`);
  assert.ok(start >= 0, `attention-lens.d.ts declares interface ${name}`);
  let depth = 0;
  let end = start;
  for (let i = dts.indexOf('{', start); i < dts.length; ++i) {
    if (dts[i] === '{') depth += 1;
    if (dts[i] === '}' && --depth === 0) {
      end = i;
      break;
    }
  }
  const body = dts.slice(dts.indexOf('{', start) + 1, end).replace(/\/\*[\s\S]*?\*\//g, '');
  return [...body.matchAll(/^ {2}(?:readonly )?([A-Za-z]\w*)\??:/gm)].map((m) => m[1]);
}

const kindOf = (value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
const KINDS = { count: ['number'], number: ['number'], boolean: ['boolean'], choice: ['string'],
  optionalBoolean: ['boolean', 'null'], numbers: ['array', 'null'], object: ['object'] };

function checkDefaults(list, values, path) {
  assert.deepEqual(Object.keys(values), list.map((f) => f.name), `${path}: the defaults name every field, in order`);
  for (const field of list) {
    const value = values[field.name];
    assert.ok(KINDS[field.kind].includes(kindOf(value)), `${path}.${field.name}: a ${field.kind} field's default is ${kindOf(value)}`);
    if (field.kind === 'count') assert.ok(Number.isInteger(value) && value >= field.min && value <= field.max, `${path}.${field.name} within its bounds`);
    if (field.kind === 'choice') assert.ok(field.names.includes(value), `${path}.${field.name}: '${value}' is one of ${field.names}`);
    if (field.kind === 'object') checkDefaults(field.fields, value, `${path}.${field.name}`);
  }
}

for (const [key, type, extra] of [['layer', 'LayerConfig', []], ['model', 'ModelConfig', []], ['trainer', 'TrainerOptions', []],
  ['forward', 'ForwardOptions', ['n', 'kv', 'kvN', 'keyPadding', 'cellMask']]]) {
  test(`${type}: the .d.ts declares exactly the core's fields of ${key} options`, () => {
    const names = fields[key].map((f) => f.name);
    assert.deepEqual([...declared(type)].sort(), [...names, ...extra].sort());
    checkDefaults(fields[key], defaults[key], `defaults.${key}`);
  });
}

test("a nested object's fields: createLayer's rope", () => {
  const rope = fields.layer.find((f) => f.name === 'rope');
  assert.equal(rope.kind, 'object');
  assert.deepEqual([...declared('RopeOptions')].sort(), rope.fields.map((f) => f.name).sort());
  assert.deepEqual(rope.fields.find((f) => f.name === 'pairing').names, ['interleaved', 'rotate-half']);
});

test("each choice field's names are the catalog's list of them", () => {
  const choice = (list, name) => list.find((f) => f.name === name).names;
  assert.deepEqual(choice(fields.layer, 'positional'), lens.catalog.positional);
  assert.deepEqual(choice(fields.model, 'gelu'), lens.catalog.gelu);
  assert.deepEqual(choice(fields.trainer, 'task'), lens.catalog.tasks);
  assert.deepEqual(choice(fields.forward, 'mask'), lens.catalog.masks);
});
