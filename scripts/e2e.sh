#!/usr/bin/env bash
# e2e.sh runs the extension's end-to-end test in a real VS Code: installs
# code-server, Node 24, Chromium and playwright-core (scripts/e2e-setup.sh, cached),
# packages the extension for linux-x64 with a freshly built fuzzls (scripts/package.sh), then
# runs vscode-extension/test/e2e/run.mjs.
#
#   FUZZLS_E2E_DAEMON=fake   ship test/e2e/fake-fuzzls.mjs, a scripted stand-in for
#                            `fuzzls serve`, to check the extension's side alone
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SECONDS=0
"$root/scripts/e2e-setup.sh" >/dev/null
echo "e2e: setup done at ${SECONDS} s" >&2
if [ "${FUZZLS_E2E_DAEMON:-real}" = fake ]; then
	FUZZLS_TARGETS=linux-x64 FUZZLS_BINARY="$root/vscode-extension/test/e2e/fake-fuzzls.mjs" "$root/scripts/package.sh"
else
	FUZZLS_TARGETS=linux-x64 "$root/scripts/package.sh"
fi
echo "e2e: packaged at ${SECONDS} s" >&2
cd "$root/vscode-extension"
node test/e2e/run.mjs "$root/vscode-extension/fuzzls-linux-x64.vsix"
