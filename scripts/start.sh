#!/usr/bin/env bash
# npm start: set up if needed, build, serve the page on localhost and print its URL. Arguments go
# to scripts/serve.mjs after its defaults, so they win: `npm start -- --port 8123`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ATTN_ROOT"
bash scripts/build.sh
exec node scripts/serve.mjs --dir dist "$@"
