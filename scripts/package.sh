#!/usr/bin/env bash
# package.sh builds fuzzls for linux-x64 into the extension and writes
# vscode-extension/fuzzls-linux-x64.vsix (npm run package at the root).
#
#   FUZZLS_BINARY=/path/to/fuzzls   ship that binary instead of building one
#   (the e2e test of the extension alone uses this with a stand-in daemon).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ext="$root/vscode-extension"
bin="$ext/bin/linux-x64/fuzzls"
SECONDS=0

mkdir -p "$(dirname "$bin")"
if [ -n "${FUZZLS_BINARY:-}" ]; then
	echo "package: shipping $FUZZLS_BINARY instead of building ./cmd/fuzzls" >&2
	cp "$FUZZLS_BINARY" "$bin"
	chmod +x "$bin"
else
	echo "package: go build -o vscode-extension/bin/linux-x64/fuzzls ./cmd/fuzzls" >&2
	rm -f "$bin"
	if ! (cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -o "$bin" ./cmd/fuzzls); then
		echo "package: FAILED: ./cmd/fuzzls does not build (see the errors above); no .vsix written" >&2
		exit 1
	fi
fi

if [ ! -d "$root/node_modules/vscode-languageclient" ] && [ ! -d "$ext/node_modules/vscode-languageclient" ]; then
	(cd "$root" && npm ci --no-audit --no-fund >&2)
fi
(cd "$ext" && npm run --silent package >&2)
echo "package: wrote $ext/fuzzls-linux-x64.vsix in ${SECONDS} s" >&2
