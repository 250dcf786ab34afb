#!/usr/bin/env bash
# vscode-demo.sh: the "main job". Starts a real VS Code (code-server) on 127.0.0.1
# with the freshly built fuzzls extension and a temporary copy of testdata/calc,
# and prints the address to open in a browser. Ctrl-C stops it.
#
#   scripts/vscode-demo.sh            # installs what is missing, builds, serves
#   FUZZLS_DEMO_PORT=8080 scripts/vscode-demo.sh
#   FUZZLS_DEMO_NO_BUILD=1            reuse vscode-extension/fuzzls-linux-x64.vsix
# (Over SSH: ssh -L 8080:127.0.0.1:8080 host, then open the printed address.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/e2e-setup.sh" >/dev/null
[ -n "${FUZZLS_DEMO_NO_BUILD:-}" ] || FUZZLS_TARGETS=linux-x64 "$root/scripts/package.sh"
exec node "$root/vscode-extension/test/e2e/demo.mjs" "$root/vscode-extension/fuzzls-linux-x64.vsix"
