# Sourced by the build scripts: the environment emcc and the tools need on these machines, and
# the one way they configure and build a CMake preset.
ATTN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ATTN_ROOT

# emcc 3.1.6 from Debian runs its JS optimizer with whatever node is first on PATH; when that
# node is not Debian's it cannot find Debian's acorn unless NODE_PATH points there. On a fresh
# machine that folder only exists once scripts/setup.sh has installed emscripten, so a check made
# when this file is sourced is not enough: attn_setup (below) and attn_build_preset check again.
# ATTN_DEBIAN_NODE_MODULES overrides the folder for tests/first-run (a simulated fresh machine).
attn_node_path() {
  local dir="${ATTN_DEBIAN_NODE_MODULES:-/usr/share/nodejs}"
  if [ -d "$dir" ]; then
    case ":${NODE_PATH:-}:" in
      *:"$dir":*) ;;
      *) export NODE_PATH="$dir${NODE_PATH:+:$NODE_PATH}" ;;
    esac
  fi
}
attn_node_path

# attn_setup: scripts/setup.sh (installs what is missing; quick when done), then everything this
# file decided before set-up is decided again: set-up may have just installed emcc, node's
# modules or Debian's acorn, and a second run must not see a different environment than the first.
# Set-up runs once per command: it exports ATTN_SETUP_DONE=1, so a script it runs (bench.sh and
# test.sh run build.sh) skips it; ATTN_SETUP_FORCE=1 runs it anyway (and setup.sh in full).
attn_setup() {
  if [ "${ATTN_SETUP_DONE:-0}" != 1 ] || [ "${ATTN_SETUP_FORCE:-0}" = 1 ]; then
    bash "$ATTN_ROOT/scripts/setup.sh" || return 1
    export ATTN_SETUP_DONE=1
  fi
  hash -r
  attn_node_path
}

# attn_build_preset PRESET [cmake --build args…]: configures the preset once (emcmake for the
# wasm presets; the configure output goes to build/PRESET.configure.log and is shown on failure),
# then builds it.
attn_build_preset() {
  local preset="$1"
  shift
  attn_node_path
  if [ ! -f "$ATTN_ROOT/build/$preset/build.ninja" ]; then
    local configure=(cmake --preset "$preset")
    case "$preset" in wasm-*) configure=(emcmake "${configure[@]}") ;; esac
    mkdir -p "$ATTN_ROOT/build"
    (cd "$ATTN_ROOT" && "${configure[@]}") >"$ATTN_ROOT/build/$preset.configure.log" 2>&1 ||
      { cat "$ATTN_ROOT/build/$preset.configure.log"; return 1; }
  fi
  (cd "$ATTN_ROOT" && cmake --build --preset "$preset" "$@")
}
