// Command compat runs public projects' own fuzz targets, unmodified, with fuzzls
// and with `go test -fuzz`, side by side, on each Go version asked for, and prints
// per target and version: whether each engine builds it (and the message when
// not), its executions per second, the failures it found (kind), and the
// statements a neutral `go test -coverprofile` replay of its corpus covers, with
// the ratio fuzzls/go test.
//
//	go run ./bench/compat [-fuzztime 20s] [-go go1.26.8,go1.27.3] [-targets re] [-parallel 2] [-out bench/results] [-fuzzls bin/fuzzls]
//
// Smoke test: go run ./bench/compat -fuzztime 5s -go go1.26.8 -targets 'uuid|netip'
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
// Fairness, as in bench/compare: the same -fuzztime of fuzzing (building not
// counted) and -parallel for both, one run at a time; fuzzls starts cold (a new
// -cachedir, and go test's fuzz cache of the target, from which it would
// warm-start, removed), go test gets a new -test.fuzzcachedir. fuzzls runs with
// -keepfuzzing (its failures are counted, and a failure does not end its
// corpus); go test stops at its first failure, as it always does. Coverage: each
// engine's generated corpus is put in the copy's testdata/fuzz/FuzzX/ and replayed
// by `go test -run=^FuzzX$ -coverprofile -coverpkg=<the module's packages the test
// imports>` (a standard library target: its own package), on the same Go version.
//
// The results go to -out (gitignored): compat-<time>.md, compat-<time>.json, and
// each run's output in compat-<time>-logs/.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
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

// result is one engine's run on one target and Go version.
type result struct {
	engines.Run
	Module   string   `json:"module"`
	Go       string   `json:"go"`
	Built    bool     `json:"built"`
	Skipped  string   `json:"skipped,omitempty"` // why this Go version could not be used
	Failures []string `json:"failures,omitempty"`
	Baseline string   `json:"baseline,omitempty"` // go test's last "gathering baseline coverage: k/n"
}

type config struct {
	fuzztime time.Duration
	parallel int
	fuzzls   string
	version  string
	tmp      string
	logs     string
	gocache  string
	srcs     map[string]string // module@version → its writable copy
	goroots  map[string]string // Go version → writable copy of its GOROOT
}

func main() {
	fuzztime := flag.Duration("fuzztime", 20*time.Second, "fuzzing time per target, engine and Go version")
	goFlag := flag.String("go", "go1.26.8,go1.27.3", "Go versions (GOTOOLCHAIN values), comma-separated")
	targetsRE := flag.String("targets", "", "only targets whose id (import path.FuzzX) matches this regular expression")
	parallel := flag.Int("parallel", 2, "workers per engine")
	out := flag.String("out", "bench/results", "directory for the markdown table, raw results and logs")
	bin := flag.String("fuzzls", "", "a fuzzls binary to use (default: build ./cmd/fuzzls)")
	flag.Parse()
	chosen, err := engines.Choose(suite, *targetsRE, target.id)
	check(err)
	b, err := engines.Setup("compat", *out, *bin, logf)
	check(err)
	defer b.Close()
	ctx, tmp := b.Ctx, b.Tmp
	c := &config{fuzztime: *fuzztime, parallel: *parallel, tmp: tmp, logs: b.Logs, fuzzls: b.Fuzzls, version: b.Version,
		srcs: map[string]string{}, goroots: map[string]string{}}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	check(err)
	c.gocache = strings.TrimSpace(string(gocache))

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
	var results []result
	started := time.Now()
	// target by target (both versions, both engines), so that an interrupted run
	// still has whole rows
	for _, t := range chosen {
		for _, v := range versions {
			if ctx.Err() != nil {
				break
			}
			dir, env, skipped := c.workdir(ctx, t, v)
			for _, eng := range []string{"fuzzls", "native"} {
				if ctx.Err() != nil {
					break
				}
				r := result{Run: engines.Run{Engine: eng, Target: t.id()}, Module: t.Module + "@" + t.Version, Go: v, Skipped: skipped}
				if t.Module == "std" {
					r.Module = "std (" + v + ")"
				}
				if skipped == "" {
					c.runOne(ctx, t, dir, env, &r)
				}
				if ctx.Err() != nil {
					break // cut short: not a result
				}
				logf("%-45s %-9s %-6s %s", t.id(), v, eng, r.summary())
				results = append(results, r)
			}
		}
	}
	if ctx.Err() != nil {
		logf("interrupted: results so far")
	}
	mdPath, err := b.Write(report(c, chosen, versions, results, time.Since(started)), results)
	check(err)
	logf("wrote %s (raw results beside it, logs in %s)", mdPath, c.logs)
}

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

	r.Log = fmt.Sprintf("%s-%s-%s.log", strings.NewReplacer("/", "_").Replace(t.id()), r.Go, r.Engine)
	logFile, err := os.Create(filepath.Join(c.logs, r.Log))
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
	// coverage: the engine's corpus (go test's failing input, which it wrote
	// into testdata, is not part of it) replayed beside the target's own seeds
	restore(seedDir, seeds)
	ents, _ := os.ReadDir(corpusDir)
	os.MkdirAll(seedDir, 0o755)
	for _, e := range ents {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") || seeds[e.Name()] {
			continue
		}
		if data, err := os.ReadFile(filepath.Join(corpusDir, e.Name())); err == nil && os.WriteFile(filepath.Join(seedDir, e.Name()), data, 0o644) == nil {
			r.Corpus++
		}
	}
	coverPkg, err := c.coverPkg(ctx, t, dir, env)
	if err != nil {
		r.Err = "coverage: " + err.Error()
		return
	}
	prof := filepath.Join(c.logs, strings.TrimSuffix(r.Log, ".log")+".cover")
	st, err := engines.Replay(ctx, dir, env, pkg, t.Name, coverPkg, prof, logFile)
	if err != nil {
		r.Err = fmt.Sprintf("coverage: %v (replay output in %s)", err, r.Log)
		return
	}
	r.Stmts, r.TotalStmts, r.Blocks, r.TotalBlocks = st[0], st[1], st[2], st[3]
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

// report is the markdown table and its notes.
func report(c *config, ts []target, versions []string, rs []result, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Compatibility: real projects' own fuzz targets, fuzzls vs go test -fuzz\n\n")
	load, _ := os.ReadFile("/proc/loadavg")
	lf := strings.Fields(string(load))
	fmt.Fprintf(&b, "%s · %s · %s/%s · %d CPUs (load %s) · -fuzztime %s per target, engine and Go version · -parallel %d · %s in all\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), c.version, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(),
		strings.Join(lf[:min(3, len(lf))], " "), c.fuzztime, c.parallel, took.Round(time.Second))
	b.WriteString("Builds: ✓ or ✗ (the message is in the notes). Failures: how many fuzzls reported (it goes on after one) and go test's (it stops at its first), by kind. Statements: of the module's packages the test imports (std: the package), covered by a `go test -coverprofile` replay of the engine's corpus with the target's own seeds; ratio fuzzls/go test.\n\n")
	b.WriteString("| target | module | kind | Go | builds fuzzls | builds go test | execs/s fuzzls | execs/s go test | failures fuzzls | failures go test | statements | fuzzls | go test | ratio |\n")
	b.WriteString("| --- | --- | --- | --- | :-: | :-: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |\n")
	by := map[string]result{}
	for _, r := range rs {
		by[r.Target+" "+r.Go+" "+r.Engine] = r
	}
	var notes []string
	var broken []string // targets go test fuzzes and fuzzls does not
	for _, t := range ts {
		for _, v := range versions {
			f, fok := by[t.id()+" "+v+" fuzzls"]
			n, nok := by[t.id()+" "+v+" native"]
			if !fok && !nok {
				continue
			}
			mod := f.Module
			if f.Skipped != "" {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | skipped: %s |||||||||\n", t.Name+" ("+t.Pkg+")", mod, t.Kind, v, f.Skipped)
				continue
			}
			ratio := "—"
			if n.Stmts > 0 && f.Built {
				ratio = fmt.Sprintf("%.2f×", float64(f.Stmts)/float64(n.Stmts))
			}
			total := max(f.TotalStmts, n.TotalStmts)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				t.Name+" ("+t.Pkg+")", mod, t.Kind, v, mark(f.Built), mark(n.Built), cell(f, rate(f)), cell(n, rate(n)),
				failures(f), failures(n), count(total), cell(f, count(f.Stmts)), cell(n, count(n.Stmts)), ratio)
			if n.Built && !f.Built {
				broken = append(broken, fmt.Sprintf("%s on %s: %s", t.id(), v, f.Err))
			}
			for _, r := range []result{f, n} {
				eng := map[string]string{"fuzzls": "fuzzls", "native": "go test"}[r.Engine]
				if r.Err != "" {
					notes = append(notes, fmt.Sprintf("%s, %s, %s: %s", t.id(), v, eng, r.Err))
				}
				for _, fl := range r.Failures {
					notes = append(notes, fmt.Sprintf("%s, %s, %s found: %s", t.id(), v, eng, strings.ReplaceAll(fl, "|", `\|`)))
				}
				if r.Baseline != "" && len(r.Failures) == 0 {
					notes = append(notes, fmt.Sprintf("%s, %s, %s: the time ran out while it was gathering baseline coverage (%s seeds run): it never fuzzed", t.id(), v, eng, strings.TrimSuffix(r.Baseline, ",")))
				}
				if r.Flake != "" {
					notes = append(notes, fmt.Sprintf("%s, %s, %s: %s", t.id(), v, eng, r.Flake))
				}
				for _, w := range r.Warnings {
					notes = append(notes, fmt.Sprintf("%s, %s, fuzzls warned: %s", t.id(), v, w))
				}
			}
		}
	}
	b.WriteString("\n## Every target go test fuzzes, fuzzls fuzzes\n\n")
	if len(broken) == 0 {
		b.WriteString("Holds for every target measured.\n")
	}
	for _, s := range broken {
		fmt.Fprintf(&b, "- does not hold: %s\n", s)
	}
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, s := range notes {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func cell(r result, s string) string {
	if !r.Built {
		return "—"
	}
	return s
}

func count(n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.Itoa(n)
}

// failures is "none", or the count by kind ("2 panic, 1 hang").
func failures(r result) string {
	if !r.Built {
		return "—"
	}
	if len(r.Failures) == 0 {
		return "none"
	}
	kinds := map[string]int{}
	var order []string
	for _, f := range r.Failures {
		k, _, _ := strings.Cut(f, ":")
		if kinds[k] == 0 {
			order = append(order, k)
		}
		kinds[k]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	return strings.Join(parts, ", ")
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
