#!/usr/bin/env bash
# wine-test.sh runs tests cross-compiled for Windows under Wine:
#   - the worker runtime's (engine/fuzzrt), all of them: the worker loop in a real
#     child process, its pipes passed as inherited handles, shared memory as a file
#     mapping, stack samples asked through the pipe, a worker exiting when its
#     coordinator's pipe ends;
#   - the daemon's path rules (daemon/uri.go): VS Code's file URIs, drive letters,
#     case, `\`, UNC paths, the workspace containment check, against Windows's own
#     path/filepath, and the server taking a file's URI in several spellings;
#   - the daemon's ~ in settings (%USERPROFILE%, ~\);
#   - the daemon's line ends (CRLF and a lone CR in positions, corpus files written
#     as go test does);
#   - the daemon's file watcher on fsnotify's Windows backend (ReadDirectoryChangesW,
#     which Wine emulates over inotify): new directories, editors' atomic saves, an
#     overflow's rescan, a file's events in two spellings coalesced;
#   - the engine's tests that need no Go toolchain: the hang/oom judge, minimization,
#     dictionaries, the go-fuzz-headers layout, stack traces with Windows paths and
#     Windows's fault and exception reports, a
#     scratch directory's process alive or gone, a sync entry's writer killed mid-write.
#   - fuzzls's SARIF file URIs of Windows paths.
# The tests that build packages need a Go toolchain for Windows inside Wine, which
# this script does not install: those run on Linux only.
# Installs Debian's wine (which provides the wine and wineboot commands; wine64 alone
# does not) and mingw-w64 when missing, and stops at once, saying what is missing,
# when a step cannot set itself up. Wine 8.0 lacks
# bcryptprimitives.dll, which Go's runtime loads from system32 (ProcessPrng), so a
# stand-in is built from scripts/wine/bcryptprimitives.c into the Wine prefix.
#
#   FUZZLS_WINE_PREFIX=dir   the Wine prefix (default: a cache directory of its own)
#   arguments                passed to every test binary after its -test.run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "wine-test: $*" >&2; exit 1; }
need=()
{ command -v wine && command -v wineboot; } >/dev/null || need+=(wine wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64-win32)
if [ ${#need[@]} -gt 0 ]; then
	echo "wine-test: installing ${need[*]}" >&2
	apt-get update -q >&2 || die "apt-get update failed: cannot install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2 ||
		die "cannot install ${need[*]} (Debian's packages); the Windows tests need them"
fi
for cmd in wine wineboot x86_64-w64-mingw32-gcc; do
	command -v "$cmd" >/dev/null || die "$cmd is missing after installing ${need[*]:-nothing}: install Debian's wine, wine64 and gcc-mingw-w64-x86-64-win32"
done
export WINEPREFIX=${FUZZLS_WINE_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/fuzzls-wine}
export WINEDEBUG=-all
if [ ! -d "$WINEPREFIX/drive_c/windows/system32" ]; then
	echo "wine-test: creating the Wine prefix $WINEPREFIX" >&2
	mkdir -p "$(dirname "$WINEPREFIX")"
	bootlog=$(mktemp "${TMPDIR:-/tmp}/fuzzls-wineboot.XXXXXX")
	# A first wineboot once failed on a loaded machine ("could not load
	# kernel32.dll", a prefix half made) and passed on the next try: one retry,
	# on a prefix made anew.
	if ! wineboot --init >"$bootlog" 2>&1; then
		echo "wine-test: wineboot --init failed; once more on a new prefix. Its output:" >&2
		tail -20 "$bootlog" >&2
		wineserver -k 2>/dev/null || true
		rm -rf "$WINEPREFIX"
		if ! wineboot --init >"$bootlog" 2>&1; then
			tail -20 "$bootlog" >&2
			die "wineboot --init failed twice for $WINEPREFIX (its output above)"
		fi
	fi
	rm -f "$bootlog"
	# wineboot returns before wineserver has written the prefix out.
	wineserver -w 2>/dev/null || true
	[ -d "$WINEPREFIX/drive_c/windows/system32" ] ||
		die "wineboot --init made no $WINEPREFIX/drive_c/windows/system32"
fi
dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ "$root/scripts/wine/bcryptprimitives.c" -nt "$dll" ]; then
	x86_64-w64-mingw32-gcc -shared -O2 -o "$dll" "$root/scripts/wine/bcryptprimitives.c" -ladvapi32
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The runs: a name, a package, and the tests of it that run here.
runs=(
	"fuzzrt ./engine/fuzzrt ."
	"daemon ./daemon ^(TestFileURIs|TestPathKeyAndWithin|TestHostPathsAsFilepath|TestWorkspaceURISpellings|TestCRLFPositions|TestCorpusFileLineEnds|TestLoneCR.*|TestSettingsHomeDir|TestWatcherDirectories|TestWatcherOverflowRescans|TestBatcherCoalescesByKey|TestRelevantFile|TestWatcherPerBackend|TestWatcherAtomicSave)$"
	"engine ./engine ^(TestJudge.*|TestMinimize.*|TestParseDict|TestProcessAlive|TestKilledMidWrite)$"
	"gofuzzheaders ./engine/gofuzzheaders ^(TestGoFuzzHeaders.*|TestEveryKind)$"
	"failure ./engine/failure ^(TestHostFrames|TestWindowsExceptionReport|TestWindowsFault)$"
	"fuzzls ./cmd/fuzzls ^(TestSARIFFileURL)$"
)
failed=0
for run in "${runs[@]}"; do
	read -r name pkg pattern <<<"$run"
	(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$tmp/$name.test.exe" "$pkg")
	# go test -c writes nothing for a package without tests (they moved).
	[ -f "$tmp/$name.test.exe" ] || die "$pkg has no tests to run under Wine: update the runs in $0"
	echo "wine-test: $pkg -test.run '$pattern'" >&2
	status=0
	(cd "$tmp" && wine "./$name.test.exe" -test.count=1 -test.run "$pattern" "$@" 2>&1) | tee "$tmp/$name.out" || status=$?
	[ "$status" = 0 ] && continue
	# Wine 8.0 does not implement the call os.RemoveAll deletes a directory's
	# entries with (NtSetInformationFile's FileDispositionInformationEx): t.TempDir's
	# cleanup fails there ("Invalid function") in tests that pass. A test that
	# failed for any other reason, or a run with no failed test named (a panic, a
	# timeout), fails.
	if ! grep -q -- '--- FAIL: ' "$tmp/$name.out"; then
		echo "wine-test: $pkg failed" >&2
		failed=1
		continue
	fi
	awk -v pkg="$pkg" '
		/^ *--- FAIL: / { name = $3; failed[name] = 1; next }
		/^ *(=== |--- PASS|--- SKIP)|^(PASS|FAIL|ok )/ { name = ""; next }
		name != "" && /TempDir RemoveAll cleanup: .*Invalid function/ { next }
		name != "" && /^ +[^ ]/ { real[name] = 1 }
		END {
			bad = 0
			for (f in failed) if (real[f]) { print "wine-test: " pkg ": " f " failed"; bad = 1 }
			if (!bad) print "wine-test: " pkg ": every failure was t.TempDir cleanup under Wine (Invalid function); passed"
			exit bad
		}' "$tmp/$name.out" || failed=1
done
exit $failed
