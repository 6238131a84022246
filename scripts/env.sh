# Sourced by the build scripts: the environment emcc and the tools need on these machines.
# emcc 3.1.6 from Debian runs its JS optimizer with whatever node is first on PATH; when that
# node is not Debian's it cannot find Debian's acorn unless NODE_PATH points there.
if [ -d /usr/share/nodejs ]; then
  case ":${NODE_PATH:-}:" in
    *:/usr/share/nodejs:*) ;;
    *) export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}" ;;
  esac
fi
ATTN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ATTN_ROOT
