#!/usr/bin/env bash
# Makes a Debian 12 machine ready to build and test Attention Lens. Idempotent; quick when done.
#
# Installs only what is missing and leaves alone what a user already has:
#   - emcc: a user's own emsdk on PATH is used as is; otherwise Debian's emscripten (3.1.6).
#   - xsimd >= 11 (wasm-capable): a system one is used; otherwise trixie's header-only
#     libxsimd-dev is unpacked into .deps/ (bookworm's 8.1 has no wasm architecture).
#   - Catch2 3: a system one is used; otherwise bookworm-backports' libcatch2-dev into .deps/.
#   - chromium (browser tests), python3 for scripts, node modules (npm ci).
#   - firefox-esr (driven by puppeteer-core over WebDriver BiDi), webkit2gtk-driver (WebKitWebDriver
#     and WebKitGTK's MiniBrowser) and xvfb (the MiniBrowser needs a display): the Firefox and
#     WebKit runs of the shared page checks (tests/e2e/engines/).
#   - python3-torch and python3-numpy: the PyTorch references (golden data generators and the
#     checkpoint reproduction test, scripts/data/torch-checkpoint.py); torch imports without its
#     recommended libtorch-dev and build-essential.
#   - libclang-rt-N-dev for the installed clang N: libFuzzer and the sanitizer runtimes (the
#     ASan/UBSan build and the fuzz suite need them; clang only recommends the package).
# Neither trixie nor backports is added to the machine's apt sources: packages are fetched with
# a temporary sources list and unpacked with dpkg -x.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"
stamp="$deps/.setup-complete"
mkdir -p "$deps"

log() { printf '[setup] %s\n' "$*"; }

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); fi
fi

# Quick path: everything was verified before and nothing relevant changed. The stamp alone is
# not trusted for what can change without touching it (a removed package, an emptied
# node_modules, a lock file newer than the installed modules): such a run takes the full path.
if [ -f "$stamp" ] && [ "${ATTN_SETUP_FORCE:-0}" != 1 ] && [ "$stamp" -nt "${BASH_SOURCE[0]}" ] \
  && [ "$stamp" -nt "$root/package-lock.json" ] && [ -f "$root/node_modules/.package-lock.json" ] \
  && [ ! "$root/package-lock.json" -nt "$root/node_modules/.package-lock.json" ] \
  && command -v emcc >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1 \
  && command -v clang++ >/dev/null 2>&1 && [ -x /usr/bin/chromium ]; then
  exit 0
fi

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    log "apt-get update"
    "${sudo_cmd[@]}" apt-get update -qq
    apt_updated=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

need_pkgs=()
command -v cmake >/dev/null 2>&1 || need_pkgs+=(cmake)
command -v ninja >/dev/null 2>&1 || need_pkgs+=(ninja-build)
command -v g++ >/dev/null 2>&1 || need_pkgs+=(g++)
command -v clang++ >/dev/null 2>&1 || need_pkgs+=(clang)
command -v node >/dev/null 2>&1 || need_pkgs+=(nodejs npm)
command -v python3 >/dev/null 2>&1 || need_pkgs+=(python3)
command -v dpkg-deb >/dev/null 2>&1 || need_pkgs+=(dpkg)
[ -x /usr/bin/chromium ] || need_pkgs+=(chromium)
[ -x /usr/bin/firefox-esr ] || need_pkgs+=(firefox-esr)
[ -x /usr/bin/WebKitWebDriver ] || need_pkgs+=(webkit2gtk-driver)
[ -x /usr/bin/Xvfb ] || need_pkgs+=(xvfb)
# Emscripten: a user's own emcc (emsdk) on PATH wins.
if ! command -v emcc >/dev/null 2>&1; then need_pkgs+=(emscripten); fi
if [ ${#need_pkgs[@]} -gt 0 ]; then apt_install "${need_pkgs[@]}"; fi
if ! /usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1; then
  apt_install python3-torch python3-numpy
fi

# libFuzzer and the sanitizer runtimes of the installed clang (Debian: libclang-rt-14-dev on
# bookworm), looked up where that clang itself looks for them.
have_libfuzzer() { # lib/linux/libclang_rt.fuzzer-x86_64.a, or the per-target layout's name
  local dir
  dir="$(clang++ -print-runtime-dir)"
  [ -f "$dir/libclang_rt.fuzzer-$(uname -m).a" ] || [ -f "$dir/libclang_rt.fuzzer.a" ]
}
if ! have_libfuzzer; then
  apt_install "libclang-rt-$(clang++ -dumpversion | cut -d. -f1)-dev"
  have_libfuzzer || { log "libFuzzer is still missing in $(clang++ -print-runtime-dir)"; exit 1; }
fi

# emcc 3.1.6's JS optimizer needs Debian's node modules (acorn) when node is not Debian's.
if [ -d /usr/share/nodejs ]; then export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"; fi

# Downloads a .deb from another Debian suite without touching the machine's sources.
fetch_deb() { # suite package
  local suite="$1" pkg="$2" work="$deps/apt-$1"
  mkdir -p "$work/lists/partial" "$work/archives"
  printf 'deb http://deb.debian.org/debian %s main\n' "$suite" >"$work/sources.list"
  local opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$work/lists" -o "APT::Get::List-Cleanup=0" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
  log "fetching $pkg from Debian $suite"
  apt-get "${opts[@]}" update -qq
  (cd "$work/archives" && apt-get "${opts[@]}" download -qq "$pkg")
  local deb
  deb=$(ls -t "$work/archives/${pkg}"_*.deb | head -n 1)
  dpkg -x "$deb" "$deps/prefix"
  log "unpacked $(basename "$deb") into .deps/prefix"
}

xsimd_version() { # include dir -> major version or empty
  local cfg="$1/xsimd/config/xsimd_config.hpp"
  [ -f "$cfg" ] && sed -n 's/^#define XSIMD_VERSION_MAJOR \([0-9]*\).*/\1/p' "$cfg" | head -n 1
}
sys_xsimd=$(xsimd_version /usr/include || true)
if [ -n "$sys_xsimd" ] && [ "$sys_xsimd" -ge 11 ]; then
  log "using system xsimd $sys_xsimd"
elif [ -n "$(xsimd_version "$deps/prefix/usr/include" || true)" ]; then
  :
else
  fetch_deb trixie libxsimd-dev
fi

catch2_ok() { [ -f "$1/Catch2/Catch2ConfigVersion.cmake" ] && grep -q 'PACKAGE_VERSION "3\.' "$1/Catch2/Catch2ConfigVersion.cmake"; }
if catch2_ok /usr/lib/cmake || catch2_ok /usr/lib/x86_64-linux-gnu/cmake; then
  log "using system Catch2 3"
elif catch2_ok "$deps/prefix/usr/lib/cmake" || catch2_ok "$deps/prefix/usr/lib/x86_64-linux-gnu/cmake"; then
  :
else
  fetch_deb bookworm-backports libcatch2-dev
fi

# Node modules (playwright-core drives Debian's chromium; it never downloads a browser).
if [ ! -d "$root/node_modules" ] || [ "$root/package-lock.json" -nt "$root/node_modules/.package-lock.json" ]; then
  log "npm ci"
  (cd "$root" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi

touch "$stamp"
log "ready: emcc $(emcc --version 2>/dev/null | head -n 1 | sed 's/.*) //'), $(cmake --version | head -n 1), node $(node --version)"
