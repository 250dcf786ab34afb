#!/usr/bin/env bash
# package.sh writes one .vsix per VS Code target (npm run package at the root):
# vscode-extension/fuzzls-<target>.vsix, each shipping its own fuzzls, cross-compiled
# with CGO_ENABLED=0, in bin/<target>/ (where src/binary.ts looks for it).
#
#   FUZZLS_TARGETS="linux-x64"      only these targets (default: all five:
#                                   linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)
#   FUZZLS_BINARY=/path/to/fuzzls   ship that binary instead of building one, for
#                                   linux-x64 only (the e2e test of the extension
#                                   alone uses this with a stand-in daemon).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ext="$root/vscode-extension"
targets=${FUZZLS_TARGETS:-linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64}
SECONDS=0

# goTarget maps a VS Code target to GOOS/GOARCH.
goTarget() {
	case "$1" in
	linux-x64) echo linux amd64 ;;
	linux-arm64) echo linux arm64 ;;
	darwin-x64) echo darwin amd64 ;;
	darwin-arm64) echo darwin arm64 ;;
	win32-x64) echo windows amd64 ;;
	*) echo "package: unknown target $1 (known: linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)" >&2; return 1 ;;
	esac
}

if [ -n "${FUZZLS_BINARY:-}" ] && [ "$targets" != linux-x64 ]; then
	echo "package: FUZZLS_BINARY is a linux-x64 binary: set FUZZLS_TARGETS=linux-x64" >&2
	exit 1
fi

if [ ! -d "$root/node_modules/vscode-languageclient" ] && [ ! -d "$ext/node_modules/vscode-languageclient" ]; then
	(cd "$root" && npm ci --no-audit --no-fund >&2)
fi
(cd "$ext" && npm run --silent build >&2)

for target in $targets; do
	read -r goos goarch <<<"$(goTarget "$target")"
	exe=fuzzls
	[ "$goos" = windows ] && exe=fuzzls.exe
	# bin/ holds this target's binary alone: vsce ships all of bin/.
	rm -rf "$ext/bin"
	bin="$ext/bin/$target/$exe"
	mkdir -p "$(dirname "$bin")"
	if [ -n "${FUZZLS_BINARY:-}" ]; then
		echo "package: $target: shipping $FUZZLS_BINARY instead of building ./cmd/fuzzls" >&2
		cp "$FUZZLS_BINARY" "$bin"
		chmod +x "$bin"
	else
		echo "package: $target: GOOS=$goos GOARCH=$goarch go build -o vscode-extension/bin/$target/$exe ./cmd/fuzzls" >&2
		if ! (cd "$root" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -o "$bin" ./cmd/fuzzls); then
			echo "package: FAILED: ./cmd/fuzzls does not build for $target (see the errors above); no .vsix written" >&2
			exit 1
		fi
	fi
	vsix="$ext/fuzzls-$target.vsix"
	rm -f "$vsix"
	(cd "$ext" && npx vsce package --target "$target" --allow-missing-repository --skip-license --no-dependencies -o "$vsix" >&2)
	# The package holds this target's binary and no other.
	shipped=$(unzip -Z1 "$vsix" | grep '^extension/bin/' | grep -v '/$' || true)
	if [ "$shipped" != "extension/bin/$target/$exe" ]; then
		echo "package: FAILED: $vsix ships [$shipped], want extension/bin/$target/$exe" >&2
		exit 1
	fi
	echo "package: wrote $vsix" >&2
done
rm -rf "$ext/bin"
echo "package: $(echo $targets | wc -w) .vsix in ${SECONDS} s" >&2
