#!/usr/bin/env bash
# wine-test.sh runs the worker runtime's tests (engine/fuzzrt), cross-compiled for
# Windows, under Wine: the worker loop in a real child process, its pipes passed as
# inherited handles, shared memory as a file mapping, stack samples asked through
# the pipe, a worker exiting when its coordinator's pipe ends. Installs Debian's
# wine64 and mingw-w64 when missing: Wine 8.0 lacks bcryptprimitives.dll, which
# Go's runtime loads from system32 (ProcessPrng), so a stand-in is built from
# scripts/wine/bcryptprimitives.c into the Wine prefix.
#
#   FUZZLS_WINE_PREFIX=dir   the Wine prefix (default: a cache directory of its own)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
need=()
command -v wine >/dev/null || need+=(wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64-win32)
if [ ${#need[@]} -gt 0 ]; then
	echo "wine-test: installing ${need[*]}" >&2
	apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2
fi
export WINEPREFIX=${FUZZLS_WINE_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/fuzzls-wine}
export WINEDEBUG=-all
if [ ! -d "$WINEPREFIX/drive_c/windows/system32" ]; then
	wineboot --init >/dev/null 2>&1 || true
fi
dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ "$root/scripts/wine/bcryptprimitives.c" -nt "$dll" ]; then
	x86_64-w64-mingw32-gcc -shared -O2 -o "$dll" "$root/scripts/wine/bcryptprimitives.c" -ladvapi32
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$tmp/fuzzrt.test.exe" ./engine/fuzzrt)
cd "$tmp"
status=0
wine ./fuzzrt.test.exe -test.count=1 "$@" 2>&1 | tee "$tmp/out" || status=$?
[ "$status" = 0 ] && exit 0
# Wine 8.0 does not implement the call os.RemoveAll deletes a directory's entries
# with (NtSetInformationFile's FileDispositionInformationEx): t.TempDir's cleanup
# fails there ("Invalid function") in tests that pass. A test that failed for any
# other reason, or a run with no failed test named (a panic, a timeout), fails.
grep -q -- '--- FAIL: ' "$tmp/out" || exit 1
awk '
	/^ *--- FAIL: / { name = $3; failed[name] = 1; next }
	/^ *(=== |--- PASS|--- SKIP)|^(PASS|FAIL|ok )/ { name = ""; next }
	name != "" && /TempDir RemoveAll cleanup: .*Invalid function/ { next }
	name != "" && /^ +[^ ]/ { real[name] = 1 }
	END {
		bad = 0
		for (f in failed) if (real[f]) { print "wine-test: " f " failed"; bad = 1 }
		if (!bad) print "wine-test: every failure was t.TempDir cleanup under Wine (Invalid function); passed"
		exit bad
	}' "$tmp/out"
