#!/usr/bin/env bash
# rehearse.sh runs CI's command (.ci/run) the way a new machine would: on a fresh
# clone of HEAD, with a fresh HOME (no ~/.cache, no profile, no ~/go/bin tools),
# keeping only Go's build and module caches. Then it lists Debian packages the
# scripts call but do not install (../shared/tools/fresh-machine-check, when present).
# Run it before you push; it prints test.sh's stage times and the total.
#   scripts/rehearse.sh [log file]      (default: /tmp/fuzzls-rehearsal.log)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
log=${1:-/tmp/fuzzls-rehearsal.log}
work=$(mktemp -d /tmp/fuzzls-rehearsal.XXXXXX)
gocache=$(go env GOCACHE) gomodcache=$(go env GOMODCACHE) gopath_bin="$(go env GOPATH)/bin"
goroot_bin="$(go env GOROOT)/bin"

git clone -q "$repo" "$work/fuzzls"
mkdir -p "$work/home"
# PATH without the old GOPATH/bin (staticcheck, dlv): the scripts must install them.
path=$(echo "$PATH" | tr ':' '\n' | grep -vxF "$gopath_bin" | paste -sd: -)
echo "rehearse: $(git -C "$work/fuzzls" log --oneline -1) in $work, log $log"
set +e
(cd "$work/fuzzls" && env HOME="$work/home" PATH="$goroot_bin:$path" GOCACHE="$gocache" GOMODCACHE="$gomodcache" \
  ./.ci/run) >"$log" 2>&1
status=$?
set -e
grep -E '^(== |-- )' "$log" || true
check="$repo/../shared/tools/fresh-machine-check"
if [ -x "$check" ]; then
  echo "rehearse: fresh-machine-check:"
  "$check" "$work/fuzzls"
fi
echo "rehearse: .ci/run exit $status (log $log)"
[ "$status" -eq 0 ] && rm -rf "$work"
exit "$status"
