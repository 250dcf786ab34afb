#!/usr/bin/env bash
# Every test of fuzzls, on a fresh machine: installs what it needs (Go modules, npm
# packages, and — for the real-VS-Code test — Debian packages, Node 24, code-server),
# then runs the Go checks and tests and the extension's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"

echo "== go: modules, vet, gofmt, staticcheck"
go mod download
go vet ./...
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-formatted: $unformatted"; exit 1; fi
if ! command -v staticcheck >/dev/null; then
  go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
staticcheck ./...

# Every platform fuzzls ships for: the daemon cross-compiled, and every package
# (the worker runtime, which runs inside the user's test binary, included) vetted
# with its tests, so that code behind a build tag of another OS is checked too.
echo "== go: cross-compile and vet for macOS, Windows and Linux arm64"
for target in darwin/arm64 darwin/amd64 windows/amd64 linux/arm64; do
  GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go build -o /dev/null ./cmd/fuzzls
  GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go vet ./...
done

# Neovim and Emacs with Eglot drive the daemon in tests (TestNeovim, TestEmacs),
# as real LSP clients besides VS Code; Debian's clang (with libFuzzer) builds
# go-118-fuzz-build targets for the OSS-Fuzz round trip (TestLibFuzzerRoundTrip,
# which fails in CI without it).
if ! command -v nvim >/dev/null || ! command -v clang >/dev/null || ! command -v emacs >/dev/null ||
  ! ls -d /usr/share/emacs/site-lisp/elpa/eglot-* >/dev/null 2>&1; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q neovim clang emacs-nox elpa-eglot
fi

# -race builds (TestRace) need cgo, and cgo a C compiler.
if ! command -v gcc >/dev/null; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc
fi

# Every Go release the Go team supports: the machine's (1.26) and the current one,
# which the go command fetches from the module proxy.
echo "== go test (Go $(go env GOVERSION))"
go test -count=1 -timeout 20m ./...
echo "== go test (Go 1.27)"
GOTOOLCHAIN=go1.27.3 go test -count=1 -timeout 20m ./...

# The code macOS and Windows run, run here: the tests of a killed coordinator, a
# hung worker and the memory limit built with fuzzls_portable (no Pdeathsig, no
# SIGQUIT, no /proc: each worker's own figures and its command pipe); and tests
# cross-compiled for Windows and run under Wine (the worker runtime's, the
# daemon's paths, line ends and watcher, the engine's that build nothing).
echo "== go test -tags fuzzls_portable (what macOS and Windows run)"
go test -count=1 -tags fuzzls_portable -run 'TestWorkersGoWithCoordinator|TestCrashKinds/(FuzzHang|FuzzChurn|FuzzAlloc|FuzzBigAlloc)$|TestHangReplaysAgree|TestGarbageIsNoOOM' ./engine/
echo "== tests for Windows, under Wine (scripts/wine-test.sh)"
./scripts/wine-test.sh

if [ "${FUZZLS_SKIP_NPM:-}" != 1 ] && [ -f package.json ]; then
  echo "== npm test (extension unit tests and the end-to-end test in a real VS Code)"
  npm ci --no-audit --no-fund
  echo "== npm run package (one .vsix per VS Code target)"
  npm run package
  npm test
fi
