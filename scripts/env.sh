# Sourced by the build scripts: the environment emcc and the tools need on these machines, and
# the one way they configure and build a CMake preset.
ATTN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ATTN_ROOT

# emcc 3.1.6 from Debian runs its JS optimizer with whatever node is first on PATH; when that
# node is not Debian's it cannot find Debian's acorn unless NODE_PATH points there. Called again
# after scripts/setup.sh: on a fresh machine /usr/share/nodejs only exists once set-up has
# installed emscripten, so a check made before set-up would leave NODE_PATH unset for that run.
attn_node_path() {
  if [ -d /usr/share/nodejs ]; then
    case ":${NODE_PATH:-}:" in
      *:/usr/share/nodejs:*) ;;
      *) export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}" ;;
    esac
  fi
}
attn_node_path

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
