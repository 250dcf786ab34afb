#!/usr/bin/env bash
# Builds fuzzls and fuzzes the calculator example headless until it finds the crash.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/fuzzls ./cmd/fuzzls
echo "+ fuzzls fuzz -C testdata/calc ."
status=0
./bin/fuzzls fuzz -C testdata/calc -minimizetime 20s . || status=$?
# Exit status 1 means "a failure was found", which is what this demo is about.
[ "$status" -eq 1 ] && exit 0
exit "$status"
