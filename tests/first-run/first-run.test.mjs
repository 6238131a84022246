// The first run on a fresh machine: the repo's own scripts (build.sh, start.sh, test.sh, bench.sh,
// env.sh) run in a temporary copy of the repo where scripts/setup.sh is a stub that "installs"
// emscripten as apt would (emcc appears on PATH, Debian's node modules folder appears), and every
// tool that would compile or serve is a stub that records the environment it was called in. The
// first run must give the emcc-calling steps the same environment as the second run: NODE_PATH
// holding Debian's node modules (else emcc's optimizer fails with "Cannot find module 'acorn'")
// and emcc found on PATH. CI machines already have everything, so only a simulation can see this.
//
// ATTN_FIRST_RUN_SCRIPTS=DIR runs the scripts from DIR instead of scripts/ (e.g. an old version
// from `git archive`, to check that this test fails against the pre-fix logic).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const scriptsFrom = process.env.ATTN_FIRST_RUN_SCRIPTS ?? join(repo, 'scripts');

const SYSTEM_TOOLS = ['bash', 'basename', 'cat', 'chmod', 'cp', 'cut', 'date', 'dirname', 'env',
  'gzip', 'grep', 'head', 'ls', 'mkdir', 'mktemp', 'mv', 'rm', 'sed', 'awk', 'tail', 'tee', 'touch',
  'tr', 'wc', 'id', 'uname', 'sleep'];
const SYSTEM_TOOLS_FOUND = Object.fromEntries(SYSTEM_TOOLS.map((name) => {
  const r = spawnSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return [name, r.stdout.trim()];
}));

function writeExecutable(path, text) {
  writeFileSync(path, `#!${SYSTEM_TOOLS_FOUND.bash}\n${text}\n`);
  chmodSync(path, 0o755);
}

/**
 * A fresh machine in a temporary folder: root/ (a copy of the scripts), fake/nodejs (absent until
 * set-up), fake/bin (on PATH, empty until set-up puts emcc there), tools/ (stubs before /usr/bin
 * on PATH) and calls.log (one line per stubbed call: tool, arguments, NODE_PATH, emcc lookup).
 */
function freshMachine() {
  const dir = mkdtempSync(join(tmpdir(), 'attn-first-run-'));
  const root = join(dir, 'root');
  const nodejs = join(dir, 'fake', 'nodejs');
  const bin = join(dir, 'fake', 'bin');
  const tools = join(dir, 'tools');
  const system = join(dir, 'system');
  const log = join(dir, 'calls.log');
  for (const d of [join(root, 'scripts'), join(root, 'web', 'api'), bin, tools, system]) mkdirSync(d, { recursive: true });
  for (const name of ['env.sh', 'build.sh', 'start.sh', 'test.sh', 'bench.sh']) {
    if (existsSync(join(scriptsFrom, name))) cpSync(join(scriptsFrom, name), join(root, 'scripts', name));
  }
  writeFileSync(join(root, 'web', 'api', 'attention-lens.d.ts'), '');
  writeFileSync(join(root, 'web', 'blog-example.html'), '');
  writeFileSync(log, '');
  // Set-up as apt would do it on a fresh machine: installs emscripten (emcc on PATH, Debian's
  // node modules folder with acorn) the first time, nothing the second.
  writeExecutable(join(root, 'scripts', 'setup.sh'), `
echo "setup" >>"${log}"
mkdir -p "${nodejs}/acorn"
[ -x "${bin}/emcc" ] || printf '#!/bin/sh\\necho "emcc $*" >>"${log}"\\n' >"${bin}/emcc"
chmod +x "${bin}/emcc"`);
  // Every tool the scripts call after set-up: records its environment; cmake and npx leave the
  // files build.sh copies so the script runs to its end.
  const record = `printf '%s\\t%s\\tNODE_PATH=%s\\temcc=%s\\n' "$(basename "$0")" "$*" "\${NODE_PATH:-}" "$(command -v emcc || true)" >>"${log}"`;
  writeExecutable(join(tools, 'cmake'), `${record}
if [ "$1" = --build ] && [ "$2" = --preset ]; then
  mkdir -p "build/$3" && touch "build/$3/attention-lens.mjs" "build/$3/attention-lens.wasm" "build/$3/attention-lens.single.mjs"
fi
[ "$1" = --preset ] && mkdir -p "build/$2" && touch "build/$2/build.ninja"
exit 0`);
  writeExecutable(join(tools, 'emcmake'), `${record}\nexec "$@"`);
  writeExecutable(join(tools, 'npx'), `${record}\nmkdir -p dist && echo x >dist/attention-lens-element.js`);
  for (const name of ['ctest', 'node', 'python3']) writeExecutable(join(tools, name), `${record}\nexit 0`);
  // The system's own tools, without the ones this machine already has installed (emcc, cmake,
  // node...): PATH holds only the stubs, fake/bin and these.
  for (const name of SYSTEM_TOOLS) symlinkSync(SYSTEM_TOOLS_FOUND[name], join(system, name));
  return {
    dir, root, nodejs, bin, log,
    env: {
      PATH: `${tools}:${bin}:${system}`,
      HOME: dir,
      ATTN_DEBIAN_NODE_MODULES: nodejs,
      ATTN_FUZZ_SECONDS: '0',
    },
    run(script, args = []) {
      return spawnSync('bash', [join(root, 'scripts', script), ...args], {
        cwd: root, env: this.env, encoding: 'utf8', timeout: 60_000,
      });
    },
    calls() {
      return readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => {
        const [tool, args, nodePath, emcc] = line.split('\t');
        return { line, tool, args, nodePath: nodePath?.slice('NODE_PATH='.length), emcc: emcc?.slice('emcc='.length) };
      });
    },
  };
}

/** The calls that run emcc: the wasm presets' configure (emcmake) and build (cmake --build). */
const emccCalls = (calls) => calls.filter((c) => c.tool === 'emcmake' || (c.tool === 'cmake' && /--preset wasm-/.test(c.args)));

function assertEmccEnvironment(machine, calls, context) {
  const wasm = emccCalls(calls);
  assert.ok(wasm.length > 0, `${context}: no wasm configure or build was called:\n${calls.map((c) => c.line).join('\n')}`);
  for (const call of wasm) {
    assert.ok((call.nodePath ?? '').split(':').includes(machine.nodejs),
      `${context}: "${call.tool} ${call.args}" ran without Debian's node modules on NODE_PATH ` +
      `(emcc would fail with "Cannot find module 'acorn'"): NODE_PATH=${call.nodePath}`);
    assert.equal(call.emcc, join(machine.bin, 'emcc'), `${context}: "${call.tool} ${call.args}" did not find emcc`);
  }
}

for (const [script, args, checkStatus] of [
  ['build.sh', [], true],
  ['start.sh', [], true],
  ['test.sh', [], false], // its suites are stubs; only the environment of its builds is checked
  ['bench.sh', ['--quick'], false],
]) {
  test(`first run of scripts/${script} on a fresh machine gives emcc the second run's environment`, (t) => {
    const machine = freshMachine();
    t.after(() => rmSync(machine.dir, { recursive: true, force: true }));
    assert.ok(!existsSync(machine.nodejs), 'the simulated machine starts without Debian node modules');

    const first = machine.run(script, args);
    if (checkStatus) assert.equal(first.status, 0, `first run failed:\n${first.stdout}\n${first.stderr}`);
    const firstCalls = machine.calls();
    assert.equal(firstCalls[0]?.tool, 'setup', `set-up must run first:\n${firstCalls.map((c) => c.line).join('\n')}`);
    assertEmccEnvironment(machine, firstCalls, 'first run');

    // The second run (everything installed, configured) must see the same environment.
    writeFileSync(machine.log, '');
    const second = machine.run(script, args);
    if (checkStatus) assert.equal(second.status, 0, `second run failed:\n${second.stdout}\n${second.stderr}`);
    assertEmccEnvironment(machine, machine.calls(), 'second run');
  });
}

test('the simulation can see a missing NODE_PATH: a build step called before set-up lacks it', () => {
  const machine = freshMachine();
  try {
    const r = spawnSync('bash', ['-c', 'source scripts/env.sh && emcmake cmake --preset wasm-release'], {
      cwd: machine.root, env: machine.env, encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.throws(() => assertEmccEnvironment(machine, machine.calls(), 'before set-up'), /NODE_PATH|emcc/);
  } finally {
    rmSync(machine.dir, { recursive: true, force: true });
  }
});
