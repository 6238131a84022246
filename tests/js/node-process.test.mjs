// The module leaves its user's node process alone: a program that loaded it (single-threaded or
// threaded) and then fails on its own (an unhandled promise rejection, an uncaught exception) gets
// node's own short report of its own error and exit status. Emscripten's node glue once installed
// process.on('unhandledRejection' / 'uncaughtException', throw) handlers (built now with
// -sNODEJS_CATCH_REJECTION=0 -sNODEJS_CATCH_EXIT=0), and node printed the threaded module's whole
// minified source line (~100 KB) before the error. Each case runs in a child node process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

import { MODULE_URL } from './support.mjs';

const THREADS_MODULE_URL = new URL('attention-lens-threads.mjs', MODULE_URL);
const MARKER = 'the program\'s own error, not the module\'s';

// A report of one error is a few lines of the program's code and a stack trace; the module's
// source is one line of ~100 KB.
const MAX_REPORT_CHARS = 4096;
const MAX_LINE_CHARS = 1000;

const MODULES = [
  { name: 'dist/attention-lens.mjs', url: MODULE_URL, options: {}, threads: 1 },
  { name: 'dist/attention-lens.mjs with threads: 2', url: MODULE_URL, options: { threads: 2 }, threads: 2 },
  { name: 'dist/attention-lens-threads.mjs', url: THREADS_MODULE_URL, options: { threads: 2 }, threads: 2 },
];
const FAILURES = {
  'an unhandled promise rejection': `Promise.reject(new Error(${JSON.stringify(MARKER)}));`,
  'an uncaught exception': `setTimeout(() => { throw new Error(${JSON.stringify(MARKER)}); }, 0);`,
};

/** Runs a node program that loads `module`, uses it, then fails with `failure`. */
function runProgram(module, failure) {
  const program = `
const { loadAttentionLens } = await import(${JSON.stringify(module.url.href)});
const lens = await loadAttentionLens(${JSON.stringify(module.options)});
const layer = lens.createLayer({ dModel: 4, heads: 2, seed: 1 });
const { output } = layer.forward(new Float32Array(12).fill(0.5), { n: 3 });
console.log('threads', lens.threads, 'output', output.length);
${failure}
`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8', timeout: 60_000 });
}

for (const module of MODULES) {
  for (const [failure, code] of Object.entries(FAILURES)) {
    test(`${module.name}: ${failure} in the program is reported by node, short, with the program's error`, () => {
      const run = runProgram(module, code);
      assert.equal(run.signal, null, `the program did not end by itself:\n${run.stderr.slice(0, 2000)}`);
      assert.match(run.stdout, new RegExp(`^threads ${module.threads} output 12$`, 'm'),
        `the program did not load and use the module:\n${run.stdout}\n${run.stderr.slice(0, 2000)}`);
      assert.equal(run.status, 1, `node exits with 1 on ${failure}`);
      assert.ok(run.stderr.includes(MARKER), `stderr names the program's error:\n${run.stderr.slice(0, 2000)}`);
      const longest = Math.max(...run.stderr.split('\n').map((line) => line.length));
      assert.ok(run.stderr.length <= MAX_REPORT_CHARS && longest <= MAX_LINE_CHARS,
        `stderr is ${run.stderr.length} characters (longest line ${longest}), more than one error's report: ` +
        `${run.stderr.slice(0, 300)}…`);
    });
  }
}
