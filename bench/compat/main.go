// Command compat runs public projects' own fuzz targets, unmodified, with fuzzls
// and with `go test -fuzz`, side by side, on each Go version asked for, -trials
// times each, as FuzzBench measures, and prints per target and version: whether
// each engine builds it (and the message when not), its executions per second
// per worker, the failures it found (kind), and the statements a neutral `go test
// -coverprofile` replay of its corpus covers: each engine's median over the
// trials, the ratio of the medians, Mann-Whitney U's two-sided p and
// Vargha-Delaney's A12 (package bench/internal/stats), and how early fuzzls
// reached go test's final coverage. Then, over the targets: the median coverage
// ratio, how many targets fuzzls is significantly ahead on (p < 0.05, A12 >
// 0.71), behind on (p < 0.05, A12 < 0.29) or neither, the median of how early
// fuzzls reached go test's final coverage, the min and median throughput ratio;
// and each engine's median coverage over time.
//
//	go run ./bench/compat [-fuzztime 20s] [-trials 1] [-go go1.26.8,go1.27.3] [-targets re] [-parallel 2] [-out bench/results] [-state path] [-resume] [-fuzzls bin/fuzzls]
//
// Smoke test: go run ./bench/compat -fuzztime 5s -go go1.26.8 -targets 'uuid|netip' -trials 2
//
// As a user would:
//   - Each module is fetched at its pinned version through the module proxy (`go
//     mod download -json mod@version`), copied to a scratch directory made
//     writable, and both engines run there, in the module's root, on its own
//     target: `fuzzls fuzz -run '^FuzzX$' ./pkg` and `go test -fuzz '^FuzzX$'
//     ./pkg`. Nothing in the copy is changed, except what go test itself writes
//     (a failing input in testdata/fuzz/), which is removed after each run.
//   - A standard library target runs in a writable copy of the whole GOROOT of
//     that Go version (with its own bin/go first in PATH, GOTOOLCHAIN=local), in
//     its src directory, as a Go contributor does in a checkout.
//   - The Go version is GOTOOLCHAIN in the children's environment; a module whose
//     go.mod makes the go command use another one (`go env GOVERSION` in its
//     directory says so) is reported as skipped on that version.
//
// Fairness, as in bench/compare and FuzzBench: the same -fuzztime of fuzzing
// (building not counted) and -parallel for both, one run at a time, the engines
// alternated (fuzzls trial 1, go test trial 1, fuzzls trial 2, …) so that the
// machine's load falls on both alike. Every run is cold: fuzzls gets a new
// -cachedir (and go test's fuzz cache of the target, from which it would
// warm-start, is removed), go test a new -test.fuzzcachedir. fuzzls runs with
// -keepfuzzing (its failures are counted, and a failure does not end its
// corpus); go test stops at its first failure, as it always does. Coverage: each
// engine's generated corpus is put in the copy's testdata/fuzz/FuzzX/ and replayed
// by `go test -run=^FuzzX$ -coverprofile -coverpkg=<the module's packages the test
// imports>` (a standard library target: its own package), on the same Go version.
//
// Coverage over time: both engines write each corpus entry to a file of its own
// when they find it, so the file's modification time, from the start of fuzzing,
// is when it was found. The entries found by each checkpoint (0.05, 0.1, 0.2, 0.5
// and 1 of -fuzztime; the last: all of them) are replayed the same way, with the
// seeds; a checkpoint with the same entries as the one before is not replayed
// again, nor the seeds alone more than once per target and version. fuzzls
// minimizes its corpus once it holds 1024 entries, deleting entries whose
// coverage later ones have: its early checkpoints can then count less than it had
// covered (never more).
//
// Resumable: every finished run is appended at once, one JSON line, to the state
// file (-state, default <out>/compat-state.jsonl). With -resume, the runs recorded
// there (the same target, engine, Go version, trial, -fuzztime and -parallel) are
// not run again, and the table covers every recorded run of the chosen targets
// and versions with this -fuzztime and -parallel; an interrupt loses at most the
// run in progress. Without -resume, a state file already there is moved aside.
// Each run records the fuzzls build that made it; the report says when the runs
// it covers were made by more than one.
//
// The results go to -out (gitignored): compat-<time>.md, compat-<time>.json, the
// state file, and each run's output in compat-<time>-logs/.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/bench/internal/engines"
	"fuzzls.dev/fuzzls/internal/testws"
)

// A target: a project's own fuzz target at a pinned version.
type target struct {
	Module  string // module path, or "std"
	Version string // pinned version ("" for std)
	Pkg     string // package directory in the module ("." for its root); for std, the import path
	Name    string
	Kind    string
}

func (t target) id() string {
	if t.Module == "std" {
		return t.Pkg + "." + t.Name
	}
	return path(t.Module, t.Pkg) + "." + t.Name
}

// importPath is the target's package's import path.
func (t target) importPath() string {
	if t.Module == "std" {
		return t.Pkg
	}
	return path(t.Module, t.Pkg)
}

func path(mod, pkg string) string {
	if pkg == "." {
		return mod
	}
	return mod + "/" + pkg
}

// The set: parsers, codecs, compression, crypto, network protocols, template and
// expression engines, the standard library; in an order that mixes the kinds, so
// that a run cut short still has some of each, and go-ethereum's many targets
// last (-targets chooses). Each target's presence at its pinned version is
// checked before the runs (hasTarget).
var suite = []target{
	{"github.com/google/uuid", "v1.6.0", ".", "FuzzParse", "parser (UUID; go.mod without a go line)"},
	{"github.com/google/uuid", "v1.6.0", ".", "FuzzParseBytes", "control: saturates, both engines reach its ceiling (gosentry's uuid chart)"},
	{"std", "", "net/netip", "FuzzParse", "std (parser; dot import)"},
	{geth, gethVersion, "core/types", "FuzzRLP", "codec (RLP, go-ethereum's main target; its external test links golang.org/x/sys/unix through a module not instrumented)"},
	{"std", "", "encoding/json", "FuzzUnmarshalJSON", "std (parser; a package fuzzls's runtime imported)"},
	{"filippo.io/age", "v1.3.2", "internal/format", "FuzzMalleability", "crypto (age header; go.mod toolchain go1.27.0)"},
	{"golang.org/x/net", "v0.63.0", "dns/dnsmessage", "FuzzUnpackPack", "network protocol (DNS messages)"},
	{"github.com/expr-lang/expr", "v1.17.8", "test/fuzz", "FuzzExpr", "expression engine (dot imports)"},
	{"github.com/hashicorp/hcl/v2", "v2.25.0", "hclsyntax/fuzz", "FuzzParseTemplate", "template engine (HCL templates)"},
	{"std", "", "archive/tar", "FuzzReader", "std (codec)"},
	{"github.com/ProtonMail/go-crypto", "v1.5.2", "openpgp/packet", "FuzzPackets", "crypto (OpenPGP packets)"},
	{"github.com/go-sql-driver/mysql", "v1.11.0", ".", "FuzzReadHandshakePacket", "network protocol (MySQL handshake)"},
	{"github.com/pierrec/lz4/v4", "v4.1.34", ".", "FuzzReader", "compression (LZ4 frames)"},
	{"github.com/yuin/goldmark", "v1.8.7", "fuzz", "FuzzDefault", "parser (Markdown)"},
	{"github.com/Masterminds/semver/v3", "v3.5.0", ".", "FuzzNewConstraint", "parser (version constraints)"},
	{"golang.org/x/net", "v0.63.0", "quic", "FuzzFrameDecode", "network protocol (QUIC frames)"},
	{"github.com/gomarkdown/markdown", "v0.0.0-20261107153045-a51d70be185e", ".", "FuzzCommonMark", "parser (Markdown)"},
	{"github.com/klauspost/compress", "v1.20.5", "zstd", "FuzzDecodeAll", "compression (zstd; seeds of ~10 MB)"},
	{"github.com/klauspost/compress", "v1.20.5", "s2", "FuzzDecodeBlock", "compression (S2; seeds of ~37 MB)"},
	{"github.com/pelletier/go-toml/v2", "v2.4.3", ".", "FuzzUnmarshal", "parser (TOML)"},
	{"github.com/BurntSushi/toml", "v1.6.0", ".", "FuzzDecode", "parser (TOML)"},
	{"std", "", "bytes", "FuzzReplace", "std (a package testing links: no comparison hooks)"},
	{"std", "", "time", "FuzzParseRFC3339", "std (parser; a package testing links: no comparison hooks)"},
	{"std", "", "internal/runtime/cgroup", "FuzzLineReader", "std (a package the Go runtime is built from: only its tests instrumented)"},

	// go-ethereum's other native targets, every one (49 in 19 packages with FuzzRLP).
	{geth, gethVersion, "accounts/abi", "FuzzABI", "codec (Ethereum ABI)"},
	{geth, gethVersion, "accounts/keystore", "FuzzPassword", "crypto (keystore)"},
	{geth, gethVersion, "common/bitutil", "FuzzDecoder", "compression (bit sets)"},
	{geth, gethVersion, "common/bitutil", "FuzzEncoder", "compression (bit sets)"},
	{geth, gethVersion, "core/state", "FuzzJournal", "state (journal)"},
	{geth, gethVersion, "core/types", "FuzzUnpackIntoDeposit", "codec (deposit logs)"},
	{geth, gethVersion, "core/vm", "FuzzInterpreterDiff", "VM (EVM interpreter, differential)"},
	{geth, gethVersion, "core/vm", "FuzzPrecompiledContracts", "crypto (precompiled contracts)"},
	{geth, gethVersion, "core/vm/runtime", "FuzzVmRuntime", "VM (EVM runtime)"},
	{geth, gethVersion, "crypto/blake2b", "Fuzz", "crypto (BLAKE2b F; amd64)"},
	{geth, gethVersion, "eth/protocols/eth", "FuzzEthProtocolHandlers", "network protocol (eth)"},
	{geth, gethVersion, "eth/protocols/snap", "FuzzARange", "network protocol (snap)"},
	{geth, gethVersion, "eth/protocols/snap", "FuzzAccessLists", "network protocol (snap)"},
	{geth, gethVersion, "eth/protocols/snap", "FuzzByteCodes", "network protocol (snap)"},
	{geth, gethVersion, "eth/protocols/snap", "FuzzSRange", "network protocol (snap)"},
	{geth, gethVersion, "eth/protocols/snap", "FuzzTrieNodes", "network protocol (snap)"},
	{geth, gethVersion, "internal/era/e2store", "FuzzCodec", "codec (e2store)"},
	{geth, gethVersion, "rlp", "FuzzIteratorCount", "codec (RLP)"},
	{geth, gethVersion, "rpc", "FuzzFillMessage", "parser (JSON-RPC)"},
	{geth, gethVersion, "rpc", "FuzzJSONScanElements", "parser (JSON-RPC)"},
	{geth, gethVersion, "rpc", "FuzzJSONScanFields", "parser (JSON-RPC)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzCrossG1Add", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzCrossG1MultiExp", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzCrossG2Add", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzCrossG2MultiExp", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzCrossPairing", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzG1Add", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzG1MultiExp", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzG1SubgroupChecks", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzG2Add", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzG2MultiExp", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzG2SubgroupChecks", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzMapG1", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzMapG2", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bls12381", "FuzzPairing", "crypto (BLS12-381; cgo)"},
	{geth, gethVersion, "tests/fuzzers/bn256", "FuzzAdd", "crypto (bn256)"},
	{geth, gethVersion, "tests/fuzzers/bn256", "FuzzMul", "crypto (bn256)"},
	{geth, gethVersion, "tests/fuzzers/bn256", "FuzzPair", "crypto (bn256)"},
	{geth, gethVersion, "tests/fuzzers/bn256", "FuzzUnmarshalG1", "crypto (bn256)"},
	{geth, gethVersion, "tests/fuzzers/bn256", "FuzzUnmarshalG2", "crypto (bn256)"},
	{geth, gethVersion, "tests/fuzzers/difficulty", "Fuzz", "consensus (difficulty)"},
	{geth, gethVersion, "tests/fuzzers/evm", "FuzzCode", "VM (EVM)"},
	{geth, gethVersion, "tests/fuzzers/evm", "FuzzDeepStack", "VM (EVM)"},
	{geth, gethVersion, "tests/fuzzers/rangeproof", "Fuzz", "trie (range proofs)"},
	{geth, gethVersion, "tests/fuzzers/secp256k1", "Fuzz", "crypto (secp256k1)"},
	{geth, gethVersion, "tests/fuzzers/txfetcher", "Fuzz", "network protocol (transaction fetcher)"},
	{geth, gethVersion, "trie", "FuzzStackTrie", "trie (stack trie)"},
	{geth, gethVersion, "trie", "FuzzTrie", "trie"},
}

// go-ethereum, whose targets are many.
const geth, gethVersion = "github.com/ethereum/go-ethereum", "v1.17.10"

// result is one engine's run on one target and Go version, in one trial.
type result struct {
	engines.Run
	Module   string   `json:"module"`
	Go       string   `json:"go"`
	FuzzTime string   `json:"fuzztime"` // -fuzztime, as the key of the run in the state file
	Parallel int      `json:"parallel"`
	Fuzzls   string   `json:"fuzzls"` // the fuzzls binary's version and tree: resumed runs may be another's
	Built    bool     `json:"built"`
	Skipped  string   `json:"skipped,omitempty"` // why this Go version could not be used
	Failures []string `json:"failures,omitempty"`
	Baseline string   `json:"baseline,omitempty"` // go test's last "gathering baseline coverage: k/n"
	// Curve is the statements the replay covers with the entries found by each
	// fraction of -fuzztime in checkpoints (the last: all, = Stmts).
	Curve []int `json:"curve,omitempty"`
}

// checkpoints are the fractions of -fuzztime at which coverage over time is
// measured.
var checkpoints = []float64{0.05, 0.1, 0.2, 0.5, 1}

// key identifies a run in the state file.
func (r result) key() string {
	return fmt.Sprintf("%s %s %s %d %s %d", r.Target, r.Engine, r.Go, r.Trial, r.FuzzTime, r.Parallel)
}

type config struct {
	fuzztime  time.Duration
	parallel  int
	fuzzls    string
	version   string
	tmp       string
	logs      string
	gocache   string
	srcs      map[string]string // module@version → its writable copy
	goroots   map[string]string // Go version → writable copy of its GOROOT
	seedStmts map[string]int    // target id and Go version → statements its seeds alone cover
}

func main() {
	fuzztime := flag.Duration("fuzztime", 20*time.Second, "fuzzing time per target, engine, Go version and trial")
	goFlag := flag.String("go", "go1.26.8,go1.27.3", "Go versions (GOTOOLCHAIN values), comma-separated")
	targetsRE := flag.String("targets", "", "only targets whose id (import path.FuzzX) matches this regular expression")
	parallel := flag.Int("parallel", 2, "workers per engine")
	trials := flag.Int("trials", 1, "runs per engine, target and Go version, the engines alternated")
	out := flag.String("out", "bench/results", "directory for the markdown table, raw results, the state file and logs")
	statePath := flag.String("state", "", "the file each finished run is appended to (default <out>/compat-state.jsonl)")
	resume := flag.Bool("resume", false, "go on from the state file: runs recorded there are not run again, and the table covers them")
	bin := flag.String("fuzzls", "", "a fuzzls binary to use (default: build ./cmd/fuzzls)")
	flag.Parse()
	if *trials < 1 {
		check(errors.New("-trials must be at least 1"))
	}
	chosen, err := engines.Choose(suite, *targetsRE, target.id)
	check(err)
	b, err := engines.Setup("compat", *out, *bin, logf)
	check(err)
	defer b.Close()
	ctx, tmp := b.Ctx, b.Tmp
	c := &config{fuzztime: *fuzztime, parallel: *parallel, tmp: tmp, logs: b.Logs, fuzzls: b.Fuzzls, version: b.Version,
		srcs: map[string]string{}, goroots: map[string]string{}, seedStmts: map[string]int{}}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	check(err)
	c.gocache = strings.TrimSpace(string(gocache))
	if *statePath == "" {
		*statePath = filepath.Join(*out, "compat-state.jsonl")
	}
	st, err := openState(*statePath, *resume)
	check(err)
	defer st.Close()

	for _, t := range chosen {
		if t.Module == "std" {
			continue
		}
		key := t.Module + "@" + t.Version
		if c.srcs[key] == "" {
			logf("fetching %s", key)
			dir, err := fetch(ctx, tmp, t.Module, t.Version)
			check(err)
			c.srcs[key] = dir
		}
		check(hasTarget(c.srcs[key], t))
	}

	versions := strings.Split(*goFlag, ",")
	started := time.Now()
	// target by target (both versions, every trial, both engines alternated), so
	// that an interrupted run still has whole rows and load falls on both alike
	ran, skipped := 0, 0
	for _, t := range chosen {
		for _, v := range versions {
			var dir, why string
			var env []string
			prepared := false
			for trial := 1; trial <= *trials; trial++ {
				for _, eng := range []string{"fuzzls", "native"} {
					if ctx.Err() != nil {
						break
					}
					r := result{Run: engines.Run{Engine: eng, Target: t.id(), Trial: trial}, Module: t.Module + "@" + t.Version, Go: v,
						FuzzTime: c.fuzztime.String(), Parallel: c.parallel, Fuzzls: c.version}
					if t.Module == "std" {
						r.Module = "std (" + v + ")"
					}
					if _, ok := st.done[r.key()]; ok {
						logf("%-45s %-9s trial %d %-6s recorded in %s: skipped", t.id(), v, trial, eng, st.path)
						skipped++
						continue
					}
					if !prepared {
						dir, env, why = c.workdir(ctx, t, v)
						prepared = true
					}
					r.Skipped = why
					if why == "" {
						c.runOne(ctx, t, dir, env, &r)
					}
					if ctx.Err() != nil {
						break // cut short: not a result
					}
					logf("%-45s %-9s trial %d %-6s %s", t.id(), v, trial, eng, r.summary())
					check(st.add(r))
					ran++
				}
			}
		}
	}
	if ctx.Err() != nil {
		logf("interrupted: results so far")
	}
	var results []result // every recorded run of the chosen targets, versions and settings
	ids := map[string]bool{}
	for _, t := range chosen {
		ids[t.id()] = true
	}
	for _, r := range st.runs {
		if ids[r.Target] && slices.Contains(versions, r.Go) && r.FuzzTime == c.fuzztime.String() && r.Parallel == c.parallel {
			results = append(results, r)
		}
	}
	logf("%d runs run now, %d skipped (recorded before); the table covers the %d recorded runs of these targets and settings (%s)", ran, skipped, len(results), st.path)
	mdPath, err := b.Write(report(c, chosen, versions, results, time.Since(started)), results)
	check(err)
	logf("wrote %s (raw results beside it, logs in %s)", mdPath, c.logs)
}

// state is the file every finished run is appended to, one JSON line each, as
// soon as it ends: an interrupted benchmark loses at most the run in progress.
type state struct {
	path string
	f    *os.File
	runs []result
	done map[string]bool // the runs' keys
}

// openState opens the state file at path: with resume, its runs are read and
// new ones appended; without, a file already there is moved aside (its runs
// kept) and a new one started.
func openState(path string, resume bool) (*state, error) {
	st := &state{path: path, done: map[string]bool{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	case !resume && len(data) > 0:
		aside := strings.TrimSuffix(path, ".jsonl") + "-" + time.Now().Format("20060102-150405") + ".jsonl"
		if err := os.Rename(path, aside); err != nil {
			return nil, err
		}
		logf("%s moved to %s (pass -resume to go on from it)", path, aside)
		data = nil
	}
	if resume {
		for i, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			var r result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				logf("%s:%d: not a run (%v): ignored", path, i+1, err) // a line cut by a crash
				continue
			}
			if !st.done[r.key()] {
				st.done[r.key()] = true
				st.runs = append(st.runs, r)
			}
		}
		logf("resuming from %s: %d runs recorded", path, len(st.runs))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		f.WriteString("\n") // after a line cut short
	}
	st.f = f
	return st, nil
}

// add records a finished run: one line, written and synced at once.
func (st *state) add(r result) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := st.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("recording a run in %s: %v", st.path, err)
	}
	st.done[r.key()] = true
	st.runs = append(st.runs, r)
	return st.f.Sync()
}

func (st *state) Close() error { return st.f.Close() }

// fetch downloads mod@version through the module proxy and copies it to a
// writable directory under tmp.
func fetch(ctx context.Context, tmp, mod, version string) (string, error) {
	src, err := testws.Download(ctx, mod, version)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(tmp, "src", strings.NewReplacer("/", "_").Replace(mod)+"@"+version)
	return dst, testws.CopyTree(src, dst, nil)
}

// workdir is where t runs on Go version v (the module's copy, or the src
// directory of a copy of v's GOROOT) and the environment to add; skipped says why
// v cannot be used there.
func (c *config) workdir(ctx context.Context, t target, v string) (dir string, env []string, skipped string) {
	if t.Module != "std" {
		dir, env = c.srcs[t.Module+"@"+t.Version], []string{"GOTOOLCHAIN=" + v}
	} else {
		root := c.goroots[v]
		if root == "" {
			cmd := exec.CommandContext(ctx, "go", "env", "GOROOT")
			cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+v)
			out, err := cmd.Output()
			if err != nil {
				return "", nil, fmt.Sprintf("go env GOROOT with GOTOOLCHAIN=%s: %v", v, err)
			}
			root = filepath.Join(c.tmp, "goroot-"+v)
			logf("copying the GOROOT of %s", v)
			if err := testws.CopyTree(strings.TrimSpace(string(out)), root, nil); err != nil {
				return "", nil, "copying GOROOT: " + err.Error()
			}
			c.goroots[v] = root
		}
		dir = filepath.Join(root, "src")
		if err := hasTarget(dir, t); err != nil {
			return dir, nil, err.Error()
		}
		env = []string{"PATH=" + filepath.Join(root, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"), "GOTOOLCHAIN=local", "GOROOT="}
	}
	cmd := engines.WithEnv(exec.CommandContext(ctx, "go", "env", "GOVERSION"), env)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	got := strings.TrimSpace(string(out))
	switch {
	case err != nil:
		return dir, env, "go env GOVERSION: " + engines.FirstLine(got)
	case got != v:
		return dir, env, fmt.Sprintf("the go command runs %s here, not %s", got, v)
	}
	return dir, env, ""
}

// runOne runs one engine on t in dir, then replays its corpus for coverage.
func (c *config) runOne(ctx context.Context, t target, dir string, env []string, r *result) {
	cache, err := os.MkdirTemp(c.tmp, r.Engine+"-")
	if err != nil {
		r.Err = err.Error()
		return
	}
	defer os.RemoveAll(cache)
	seedDir := filepath.Join(dir, filepath.FromSlash(t.Pkg), "testdata", "fuzz", t.Name)
	seeds := fileSet(seedDir)
	defer restore(seedDir, seeds)
	// fuzzls warm-starts from go test's own fuzz cache of the target
	os.RemoveAll(filepath.Join(c.gocache, "fuzz", filepath.FromSlash(t.importPath()), t.Name))

	name := fmt.Sprintf("%s-%s-%s-%d", strings.NewReplacer("/", "_").Replace(t.id()), r.Go, r.Engine, r.Trial)
	r.Log = filepath.Join(filepath.Base(c.logs), name+".log") // in -out: runs resumed from the state file have their logs in earlier directories
	logFile, err := os.Create(filepath.Join(c.logs, name+".log"))
	if err != nil {
		r.Err = err.Error()
		return
	}
	defer logFile.Close()

	rctx, cancel := context.WithTimeout(ctx, c.fuzztime+10*time.Minute)
	defer cancel()
	pkg := "./" + t.Pkg
	var cmd *exec.Cmd
	var corpusDir string
	if r.Engine == "fuzzls" {
		cmd = engines.Command(rctx, dir, c.fuzzls, "fuzz", "-json", "-fuzztime", c.fuzztime.String(), "-parallel", strconv.Itoa(c.parallel),
			"-keepfuzzing", "-minimizetime", "1s", "-run", "^"+t.Name+"$", "-cachedir", cache, pkg)
		corpusDir = filepath.Join(cache, "corpus", filepath.FromSlash(t.importPath()), t.Name)
	} else {
		cmd = engines.Command(rctx, dir, "go", "test", "-run=^$", "-fuzz=^"+t.Name+"$", "-fuzztime="+c.fuzztime.String(),
			"-parallel="+strconv.Itoa(c.parallel), "-fuzzminimizetime=1s", pkg, "-args", "-test.fuzzcachedir="+cache)
		corpusDir = filepath.Join(cache, t.Name)
	}
	engines.WithEnv(cmd, env)
	fmt.Fprintf(logFile, "$ (cd %s && %s %s)\n", dir, strings.Join(env, " "), strings.Join(cmd.Args, " "))
	start := time.Now()
	lines, wait, err := engines.StartLines(cmd)
	if err != nil {
		r.Err = err.Error()
		return
	}
	var other []string // lines that are not fuzzls's events, or all of go test's
	var failText string
	started := false // go test printed its first status line
	watched := watch(lines, func(l engines.Line) {
		if r.Engine == "native" || !strings.HasPrefix(l.S, "{") {
			other = append(other, l.S)
		}
		if r.Engine == "native" && strings.HasPrefix(l.S, "fuzz: elapsed: ") {
			started = true
			r.Baseline = ""
			if _, b, ok := strings.Cut(l.S, "gathering baseline coverage: "); ok && !strings.Contains(b, "now fuzzing") {
				r.Baseline, _, _ = strings.Cut(b, " ")
			}
		}
		var ev struct{ Event, Kind, Message string }
		if r.Engine == "fuzzls" && json.Unmarshal([]byte(l.S), &ev) == nil && ev.Event == "crash" {
			r.Failures = append(r.Failures, ev.Kind+": "+engines.FirstLine(ev.Message))
		}
	})
	if r.Engine == "fuzzls" {
		engines.ParseFuzzls(watched, logFile, start, &r.Run)
	} else {
		failText = engines.ParseNative(watched, logFile, start, &r.Run)
	}
	werr := wait()
	r.Wall = time.Since(start).Seconds()
	switch {
	case rctx.Err() != nil && ctx.Err() == nil:
		r.Err = "stopped after " + (c.fuzztime + 10*time.Minute).String()
	case r.Engine == "fuzzls":
		r.Built = r.Execs > 0 || len(r.Failures) > 0
		var ee *exec.ExitError
		if werr != nil && r.Err == "" && !(errors.As(werr, &ee) && ee.ExitCode() == 1) {
			r.Err = firstMeaningful(other, werr)
		}
	default:
		r.Built = started || failText != ""
		if failText != "" {
			r.Failures = []string{nativeKind(failText) + ": " + r.Failure}
		} else if werr != nil && r.Flake == "" {
			r.Err = firstMeaningful(other, werr)
		}
	}
	if strings.HasPrefix(r.Err, "build: ") {
		r.Built = false
	}
	if !r.Built {
		return
	}
	coverPkg, err := c.coverPkg(ctx, t, dir, env)
	if err != nil {
		r.Err = "coverage: " + err.Error()
		return
	}
	fuzzStart := start.Add(time.Duration(r.Startup * float64(time.Second)))
	c.coverage(ctx, t, dir, env, coverPkg, corpusDir, fuzzStart, seedDir, seeds, filepath.Join(c.logs, name), logFile, r)
}

// found is a corpus entry the engine generated, and when: seconds after its
// fuzzing started that its file was written (its modification time; both
// engines write an entry once, when they find it).
type found struct {
	name string
	data []byte
	at   float64
}

// coverage replays the engine's corpus in corpusDir (go test's failing input,
// which it wrote into testdata, is not part of it) beside the target's own
// seeds: all of it for r.Stmts, and, for r.Curve, the entries found by each
// checkpoint. A checkpoint whose entries are the previous one's, or none, is not
// replayed again.
func (c *config) coverage(ctx context.Context, t target, dir string, env []string, coverPkg, corpusDir string, fuzzStart time.Time, seedDir string, seeds map[string]bool, prof string, log io.Writer, r *result) {
	var corpus []found
	ents, _ := os.ReadDir(corpusDir)
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".tmp") || seeds[e.Name()] {
			continue
		}
		fi, err1 := e.Info()
		data, err2 := os.ReadFile(filepath.Join(corpusDir, e.Name()))
		if err1 == nil && err2 == nil {
			corpus = append(corpus, found{e.Name(), data, fi.ModTime().Sub(fuzzStart).Seconds()})
		}
	}
	sort.SliceStable(corpus, func(i, j int) bool { return corpus[i].at < corpus[j].at })
	r.Corpus = len(corpus)
	// replay covers the seeds and the first n entries found
	replay := func(n int, profile string) ([4]int, error) {
		restore(seedDir, seeds)
		defer restore(seedDir, seeds)
		os.MkdirAll(seedDir, 0o755)
		for _, f := range corpus[:n] {
			if err := os.WriteFile(filepath.Join(seedDir, f.name), f.data, 0o644); err != nil {
				return [4]int{}, err
			}
		}
		return engines.Replay(ctx, dir, env, "./"+t.Pkg, t.Name, coverPkg, profile, log)
	}
	st, err := replay(len(corpus), prof+".cover")
	if err != nil {
		r.Err = fmt.Sprintf("coverage: %v (replay output in %s)", err, r.Log)
		return
	}
	r.Stmts, r.TotalStmts, r.Blocks, r.TotalBlocks = st[0], st[1], st[2], st[3]

	seedsKey := t.id() + " " + r.Go
	prevN, prevStmts := -1, 0
	for _, cp := range checkpoints {
		n := len(corpus)
		if cp < 1 {
			n = sort.Search(len(corpus), func(i int) bool { return corpus[i].at > cp*c.fuzztime.Seconds() })
		}
		stmts, ok := 0, false
		switch {
		case n == prevN:
			stmts, ok = prevStmts, true
		case n == len(corpus):
			stmts, ok = r.Stmts, true
		case n == 0:
			stmts, ok = c.seedStmts[seedsKey]
		}
		if !ok {
			st, err := replay(n, filepath.Join(c.tmp, "checkpoint.cover"))
			if err != nil {
				r.Err = fmt.Sprintf("coverage at %g of -fuzztime: %v (replay output in %s)", cp, err, r.Log)
				r.Curve = nil
				return
			}
			stmts = st[0]
			if n == 0 {
				c.seedStmts[seedsKey] = stmts
			}
		}
		r.Curve = append(r.Curve, stmts)
		prevN, prevStmts = n, stmts
	}
}

// coverPkg is what the replay counts: the packages of the target's module its
// test imports (a standard library target: its own package).
func (c *config) coverPkg(ctx context.Context, t target, dir string, env []string) (string, error) {
	if t.Module == "std" {
		return t.Pkg, nil
	}
	cmd := engines.WithEnv(exec.CommandContext(ctx, "go", "list", "-deps", "-test", "-f", "{{if .Module}}{{.Module.Path}} {{.ImportPath}}{{end}}", "./"+t.Pkg), env)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -deps: %v", err)
	}
	seen := map[string]bool{}
	var pkgs []string
	for _, l := range strings.Split(string(out), "\n") {
		mod, p, _ := strings.Cut(l, " ")
		p, _, _ = strings.Cut(p, " ") // "pkg [pkg.test]"
		if mod == t.Module && !strings.HasSuffix(p, ".test") && !strings.HasSuffix(p, "_test") && !seen[p] {
			seen[p] = true
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return "", fmt.Errorf("no package of %s in the test's dependencies", t.Module)
	}
	sort.Strings(pkgs)
	return strings.Join(pkgs, ","), nil
}

// watch hands each line to f on its way.
func watch(in <-chan engines.Line, f func(engines.Line)) <-chan engines.Line {
	out := make(chan engines.Line, 1024)
	go func() {
		defer close(out)
		for l := range in {
			f(l)
			out <- l
		}
	}()
	return out
}

// firstMeaningful is the first line of a run's output that says something, for a
// run that ended in an error before fuzzing.
func firstMeaningful(lines []string, err error) string {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "fuzzls: build of") {
			continue
		}
		return l
	}
	return err.Error()
}

// nativeKind classifies go test's failure text as fuzzls's kinds are named.
func nativeKind(text string) string {
	switch {
	case strings.Contains(text, "fuzzing process hung") || strings.Contains(text, "deadlocked"):
		return "hang"
	case strings.Contains(text, "out of memory") || strings.Contains(text, "exceeding the memory limit"):
		return "oom"
	case strings.Contains(text, "fatal error:"):
		return "fatal"
	case strings.Contains(text, "panic:"):
		return "panic"
	case strings.Contains(text, "terminated unexpectedly") || strings.Contains(text, "exit status"):
		return "exit"
	}
	return "error"
}

func (r result) summary() string {
	switch {
	case r.Skipped != "":
		return "skipped: " + r.Skipped
	case !r.Built:
		return "does not build: " + r.Err
	}
	s := fmt.Sprintf("%s execs/s, %d/%d statements, corpus %d", rate(r), r.Stmts, r.TotalStmts, r.Corpus)
	if len(r.Failures) > 0 {
		s += fmt.Sprintf(", %d failure(s): %s", len(r.Failures), r.Failures[0])
	}
	if r.Err != "" {
		s += ", error: " + r.Err
	}
	return s
}

func rate(r result) string {
	if r.Fuzzed < 1 || r.Execs == 0 && r.Baseline != "" {
		return "—"
	}
	return fmt.Sprintf("%.0f", float64(r.Execs)/r.Fuzzed)
}

// hasTarget checks that t's package, in its copy at dir, declares t.
func hasTarget(dir string, t target) error {
	files, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(t.Pkg), "*_test.go"))
	decl := regexp.MustCompile(`(?m)^func ` + t.Name + `\(\w+ \*testing\.F\)`)
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && decl.Match(data) {
			return nil
		}
	}
	return fmt.Errorf("%s is not in %s", t.Name, filepath.Join(dir, t.Pkg))
}

// fileSet is the names of the files in dir.
func fileSet(dir string) map[string]bool {
	set := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		set[e.Name()] = true
	}
	return set
}

// restore removes from dir what is not in set (and dir itself if it was not there).
func restore(dir string, set map[string]bool) {
	if len(set) == 0 {
		os.RemoveAll(dir)
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !set[e.Name()] {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compat: "+format+"\n", args...)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		os.Exit(1)
	}
}
