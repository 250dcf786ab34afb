#!/usr/bin/env bash
# Every test of fuzzls, on a fresh machine: installs what it needs (Go modules, npm
# packages, and — for the real-VS-Code test — Debian packages, Node 24, code-server),
# then runs the Go checks and tests and the extension's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"

# Each stage says how long the one before it took, and the end says how long in all:
# on a fresh machine the whole command must stay well under CI's 90 minutes.
start=$SECONDS stage_start=$SECONDS stage_name=""
stage() {
  if [ -n "$stage_name" ]; then echo "-- $stage_name: $((SECONDS - stage_start)) s"; fi
  stage_name=$1 stage_start=$SECONDS
  [ -z "$1" ] || echo "== $1"
}
trap 'status=$?; stage ""; echo "== test.sh: $((SECONDS - start)) s in all, exit $status"' EXIT
apt_install() {
  echo "test.sh: installing Debian packages: $*"
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" || {
    echo "test.sh: cannot install Debian packages $* (they provide commands the tests run)" >&2
    exit 1
  }
}

stage "go: modules, vet, gofmt, staticcheck"
go mod download
go vet ./...
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-formatted: $unformatted"; exit 1; fi
if ! command -v staticcheck >/dev/null; then
  go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
staticcheck ./...
(cd fuzzhook && go vet ./... && staticcheck ./...) # its own module, which ./... leaves out
# Delve: TestDebugCrash runs the dlv command line of "Debug this crash", and the
# end-to-end test debugs a crash in VS Code with it.
if ! command -v dlv >/dev/null; then
  go install github.com/go-delve/delve/cmd/dlv@v1.27.2
fi

# Every platform fuzzls ships for: the daemon cross-compiled, and every package
# (the worker runtime, which runs inside the user's test binary, included) vetted
# with its tests, so that code behind a build tag of another OS is checked too.
stage "go: cross-compile and vet for macOS, Windows and Linux arm64"
for target in darwin/arm64 darwin/amd64 windows/amd64 linux/arm64; do
  GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go build -o /dev/null ./cmd/fuzzls
  GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go vet ./...
done

stage "Debian packages: Neovim, Emacs with Eglot, clang, gcc"
# Neovim and Emacs with Eglot drive the daemon in tests (TestNeovim, TestEmacs),
# as real LSP clients besides VS Code; Debian's clang (with libFuzzer) builds
# go-118-fuzz-build targets for the OSS-Fuzz round trip (TestLibFuzzerRoundTrip,
# which fails in CI without it).
if ! command -v nvim >/dev/null || ! command -v clang >/dev/null || ! command -v emacs >/dev/null ||
  ! ls -d /usr/share/emacs/site-lisp/elpa/eglot-* >/dev/null 2>&1; then
  editors_and_clang=(neovim clang emacs-nox elpa-eglot)
  apt_install "${editors_and_clang[@]}"
fi

# -race builds (TestRace) need cgo, and cgo a C compiler.
if ! command -v gcc >/dev/null; then
  c_compiler=(gcc)
  apt_install "${c_compiler[@]}"
fi

# Every Go release the Go team supports: the machine's (1.26) and the current one,
# which the go command fetches from the module proxy.
# CI set: the tests of what this script installs (clang's libFuzzer, dlv) fail
# rather than skip when it is missing.
stage "go test (Go $(go env GOVERSION))"
CI=${CI:-true} go test -count=1 -timeout 30m ./...
stage "go test (Go 1.27)"
CI=${CI:-true} GOTOOLCHAIN=go1.27.3 go test -count=1 -timeout 30m ./...

# The code macOS and Windows run, run here: the tests of a killed coordinator, a
# hung worker and the memory limit built with fuzzls_portable (no Pdeathsig, no
# SIGQUIT, no /proc: each worker's own figures and its command pipe); and tests
# cross-compiled for Windows and run under Wine (the worker runtime's, the
# daemon's paths, line ends and watcher, the engine's that build nothing).
stage "go test -tags fuzzls_portable (what macOS and Windows run)"
go test -count=1 -tags fuzzls_portable -run 'TestWorkersGoWithCoordinator|TestCrashKinds/(FuzzHang|FuzzChurn|FuzzAlloc|FuzzBigAlloc)$|TestHangReplaysAgree|TestGarbageIsNoOOM' ./engine/
stage "tests for Windows, under Wine (scripts/wine-test.sh)"
./scripts/wine-test.sh

if [ "${FUZZLS_SKIP_NPM:-}" != 1 ] && [ -f package.json ]; then
  stage "npm ci (the extension's packages)"
  npm ci --no-audit --no-fund
  stage "npm run package (one .vsix per VS Code target)"
  npm run package
  stage "npm test (extension unit tests and the end-to-end test in a real VS Code)"
  npm test
fi
