package instrument

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
)

// A unit's rewrite is kept in the build directory (rw/<package>.gob) with the
// key of all it was made from, so that a build whose unit is as before reuses
// the files written then instead of parsing and rewriting them again: on a
// big repository (go-ethereum's trie: about 200 packages) that was the
// longest step of a save's build but the compile. The key holds fuzzls's own
// executable (a new fuzzls rewrites differently), the unit, the build's
// options and, per file, its name, where it goes, its contents and the lines
// the comparison hooks leave alone. A written file is trusted while its size
// and modification time are as recorded.

// unitRecord is what rewriting one unit gave.
type unitRecord struct {
	Key   string
	Files []fileRecord
}

// fileRecord is what rewriting one file of a unit gave.
type fileRecord struct {
	Literals    []string
	Hooked      bool  // the file got comparison hooks (varHooks follows it)
	HookedLines []int // its lines with two-operand hooks
	// Dest is where the instrumented file was written, "" when the rewrite
	// left it as it was (cgo); Size and ModTime are Dest's then.
	Dest          string
	Size, ModTime int64
	Blocks        []CoverBlock
	Sites         int
	Where         []CmpSite
	Adapted       bool // see instrumented.adapted
	Pruned        bool // pruneTests changed it
}

func (u *unitRecord) add(f fileRecord) {
	if u != nil {
		u.Files = append(u.Files, f)
	}
}

// unitKey is the key of the ui-th unit u, whose files hold srcs; "" when
// fuzzls's executable cannot be read (no reuse then).
func (r *unitRewriter) unitKey(ui int, u unit, srcs [][]byte) string {
	self := executableSum()
	if self == "" {
		return ""
	}
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(self)
	field(strconv.Itoa(ui))
	field(u.importPath)
	field(u.bridge)
	field(u.goVersion)
	field(u.modVersion)
	field(strconv.FormatBool(u.noCmp))
	field(strconv.FormatBool(u.prune))
	if u.prune {
		if ui == 0 { // its pruning keeps what the external tests name
			for _, name := range r.plan.pkg.XTestFiles {
				data, _ := os.ReadFile(name)
				sum := sha256.Sum256(data)
				field(hex.EncodeToString(sum[:]))
			}
		}
		var imports []string
		for path, name := range r.plan.pkg.ImportNames {
			imports = append(imports, path+" "+name)
		}
		sort.Strings(imports)
		for _, imp := range imports {
			field(imp)
		}
	}
	field(strconv.FormatBool(r.race))
	field(strconv.FormatBool(r.vh == nil))
	if r.vh != nil {
		field(r.vh.plain[u.importPath])
	}
	for i, name := range u.files {
		field(name)
		compiled := name
		if dst, ok := r.plan.copyDst[name]; ok {
			compiled = dst
		}
		field(compiled)
		sum := sha256.Sum256(srcs[i])
		field(hex.EncodeToString(sum[:]))
		if r.vh != nil {
			var skip []string
			for text := range r.vh.skipTexts(compiled) {
				skip = append(skip, text)
			}
			sort.Strings(skip)
			for _, text := range skip {
				field(text)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// recordPath is where u's record is kept.
func (r *unitRewriter) recordPath(u unit) string {
	sum := sha256.Sum256([]byte(u.importPath))
	return filepath.Join(r.plan.dir, "rw", hex.EncodeToString(sum[:8])+".gob")
}

// replay takes the ui-th unit u (whose files hold srcs) from its record, if
// the record's key is key and every file it wrote is still as written, and
// reports whether it did.
func (r *unitRewriter) replay(ui int, u unit, key string, srcs [][]byte) bool {
	if key == "" {
		return false
	}
	data, err := os.ReadFile(r.recordPath(u))
	if err != nil {
		return false
	}
	var rec unitRecord
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&rec) != nil || rec.Key != key || len(rec.Files) != len(u.files) {
		return false
	}
	for _, f := range rec.Files {
		if f.Dest == "" {
			continue
		}
		if size, mod := fileStamp(f.Dest); size != f.Size || mod != f.ModTime {
			return false
		}
	}
	for i, f := range rec.Files {
		name := u.files[i]
		r.bin.Inputs = append(r.bin.Inputs, name)
		r.literals[ui] = append(r.literals[ui], f.Literals...)
		if f.Pruned {
			r.plan.pruned[name] = true
		}
		if f.Hooked {
			r.vh.hookedPkgs[u.importPath] = u.modVersion
			compiled := name
			if dst, ok := r.plan.copyDst[name]; ok {
				compiled = dst
			}
			lines := map[int]bool{}
			for _, l := range f.HookedLines {
				lines[l] = true
			}
			r.vh.hooked(compiled, srcs[i], lines)
		}
		if f.Dest == "" {
			continue
		}
		if _, ok := r.plan.copyDst[name]; !ok {
			r.overlay[name] = f.Dest
		}
		r.record(u, name, newFileID(u.importPath, i), f.Blocks, f.Where, f.Adapted)
	}
	return true
}

// saveRecord keeps rec for u's next build (best effort: without it, the next
// build rewrites the unit).
func (r *unitRewriter) saveRecord(u unit, rec *unitRecord) {
	if rec.Key == "" {
		return
	}
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(rec) != nil {
		return
	}
	path := r.recordPath(u)
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	writeIfChanged(path, buf.Bytes())
}

// fileStamp is path's size and modification time (zeros if it is missing).
func fileStamp(path string) (size, modTime int64) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0
	}
	return fi.Size(), fi.ModTime().UnixNano()
}

// sortedLines is the lines of a set, in order.
func sortedLines(set map[int]bool) []int {
	var out []int
	for l := range set {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// executableSum is the SHA-256 of the running executable, once.
var executableSum = sync.OnceValue(func() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
})
