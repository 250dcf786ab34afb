package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	fproto "fuzzls.dev/fuzzls/protocol"
)

// The path rules of each OS, on any OS: what VS Code sends (vscode-uri's
// URI.file(fsPath).toString(): drive letter lower case, its colon, spaces, '#'
// and '%' percent-encoded; a UNC path's host in the authority) and what other
// clients send (the colon as is, upper case drive letters).
var (
	windowsPaths = pathSyntax{windows: true, fold: true}
	macPaths     = pathSyntax{fold: true}
	linuxPaths   = pathSyntax{}
)

func TestFileURIs(t *testing.T) {
	for _, tc := range []struct {
		desc string
		ps   pathSyntax
		uri  string
		path string // "" = refused
		back string // fileURI(path); "" = uri
	}{
		{"VS Code on Windows", windowsPaths, "file:///c%3A/Users/me/proj/a.go", `C:\Users\me\proj\a.go`, ""},
		{"colon not encoded, upper case drive (Neovim)", windowsPaths, "file:///C:/Users/me/proj/a.go", `C:\Users\me\proj\a.go`, "file:///c%3A/Users/me/proj/a.go"},
		{"lower case drive, colon not encoded", windowsPaths, "file:///d:/src/a_test.go", `D:\src\a_test.go`, "file:///d%3A/src/a_test.go"},
		{"space, # and % in names", windowsPaths, "file:///c%3A/My%20Proj/a%23b%25c.go", `C:\My Proj\a#b%c.go`, ""},
		{"non-ASCII", windowsPaths, "file:///c%3A/Users/J%C3%BCrgen/x.go", `C:\Users\Jürgen\x.go`, ""},
		{"UNC", windowsPaths, "file://server/share/dir/a.go", `\\server\share\dir\a.go`, ""},
		{"UNC share root", windowsPaths, "file://server/share/", `\\server\share\`, ""},
		{"drive root", windowsPaths, "file:///c%3A/", `C:\`, ""},
		{"dot-dot cleaned", windowsPaths, "file:///c%3A/proj/sub/../../other/a.go", `C:\other\a.go`, "file:///c%3A/other/a.go"},
		{"dot-dot above the root", windowsPaths, "file:///c%3A/../a.go", `C:\a.go`, "file:///c%3A/a.go"},
		{"no drive: not absolute on Windows", windowsPaths, "file:///home/me/a.go", "", ""},
		{"drive alone", windowsPaths, "file:///c%3A", "", ""},
		{"not a file URI", windowsPaths, "untitled:Untitled-1", "", ""},

		{"Linux", linuxPaths, "file:///home/me/proj/a.go", "/home/me/proj/a.go", ""},
		{"space, # and % in names", linuxPaths, "file:///home/me/My%20Proj/a%23b%25c.go", "/home/me/My Proj/a#b%c.go", ""},
		{"colon in a name", linuxPaths, "file:///home/me/a%3Ab.go", "/home/me/a:b.go", ""},
		{"backslash is a name's", linuxPaths, "file:///home/me/a%5Cb.go", `/home/me/a\b.go`, ""},
		{"dot-dot cleaned", linuxPaths, "file:///home/me/proj/../x.go", "/home/me/x.go", "file:///home/me/x.go"},
		{"Windows URI on Linux", linuxPaths, "file:///c%3A/Users/me/a.go", "", ""},
		{"relative", linuxPaths, "file:a.go", "", ""},
		{"http", linuxPaths, "http://example.com/a.go", "", ""},
		{"macOS keeps case", macPaths, "file:///Users/Me/Proj/A.go", "/Users/Me/Proj/A.go", ""},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := tc.ps.fromURI(uri.URI(tc.uri))
			if tc.path == "" {
				if err == nil {
					t.Fatalf("fromURI(%s) = %q, want refused", tc.uri, got)
				}
				return
			}
			if err != nil || got != tc.path {
				t.Fatalf("fromURI(%s) = %q, %v; want %q", tc.uri, got, err, tc.path)
			}
			back := tc.back
			if back == "" {
				back = tc.uri
			}
			if u := tc.ps.toURI(got); string(u) != back {
				t.Errorf("toURI(%q) = %s, want %s", got, u, back)
			}
		})
	}
}

func TestPathKeyAndWithin(t *testing.T) {
	for _, tc := range []struct {
		desc       string
		ps         pathSyntax
		root, path string
		same       bool // one file
		within     bool
	}{
		{"drive letter case", windowsPaths, `c:\Users\me\proj`, `C:\Users\me\proj`, true, true},
		{"name case", windowsPaths, `C:\Users\me\Proj`, `C:\users\ME\proj\a.go`, false, true},
		{"slashes", windowsPaths, `C:\Users\me\proj`, `C:/Users/me/proj/sub/a.go`, false, true},
		{"trailing separator", windowsPaths, `C:\Users\me\proj\`, `C:\Users\me\proj`, true, true},
		{"a sibling sharing the prefix", windowsPaths, `C:\Users\me\proj`, `C:\Users\me\project\a.go`, false, false},
		{"dot-dot out", windowsPaths, `C:\Users\me\proj`, `C:\Users\me\proj\..\other\a.go`, false, false},
		{"another drive", windowsPaths, `C:\proj`, `D:\proj\a.go`, false, false},
		{"drive root", windowsPaths, `C:\`, `c:\x\a.go`, false, true},
		{"UNC", windowsPaths, `\\Server\Share\proj`, `\\server\share\proj\a.go`, false, true},
		{"UNC, another share", windowsPaths, `\\server\share\proj`, `\\server\other\proj\a.go`, false, false},
		{"UNC share root", windowsPaths, `\\server\share`, `\\server\share\a.go`, false, true},
		{"UNC with slashes", windowsPaths, `\\server\share\proj`, `//server/share/proj/a.go`, false, true},

		{"macOS folds case", macPaths, "/Users/me/Proj", "/users/me/proj/A.go", false, true},
		{"macOS: a sibling", macPaths, "/Users/me/proj", "/Users/me/proj2/a.go", false, false},

		{"Linux keeps case", linuxPaths, "/home/me/Proj", "/home/me/proj/a.go", false, false},
		{"Linux: same", linuxPaths, "/home/me/proj/", "/home/me/proj", true, true},
		{"Linux: a sibling", linuxPaths, "/home/me/proj", "/home/me/proj2/a.go", false, false},
		{"Linux: dot-dot out", linuxPaths, "/home/me/proj", "/home/me/proj/../x/a.go", false, false},
		{"Linux: backslash is no separator", linuxPaths, "/home/me/proj", `/home/me/proj/a\..\..\x`, false, true},
		{"Linux: root", linuxPaths, "/", "/etc/passwd", false, true},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			if same := tc.ps.key(tc.root) == tc.ps.key(tc.path); same != tc.same {
				t.Errorf("key(%q) = %q, key(%q) = %q: same = %v, want %v", tc.root, tc.ps.key(tc.root), tc.path, tc.ps.key(tc.path), same, tc.same)
			}
			if w := tc.ps.within(tc.root, tc.path); w != tc.within {
				t.Errorf("within(%q, %q) = %v, want %v", tc.root, tc.path, w, tc.within)
			}
		})
	}
}

// TestHostPathsAsFilepath checks the rules of this OS against its own
// path/filepath: on Linux the POSIX rules; under Wine (scripts/wine-test.sh)
// Windows's, where filepath's are the real ones.
func TestHostPathsAsFilepath(t *testing.T) {
	for _, p := range []string{
		`/`, `/a/b/../c`, `/a//b/./c/`, `a/b`, `.`, `..`, `/..`, `a\b`,
		`C:\`, `C:\a\..\b`, `c:/a/b/`, `C:`, `C:a`, `C:\a\b\..\..\..`, `D:/x//y`,
		`\\server\share`, `\\server\share\`, `\\server\share\a\..\b`, `//server/share/a`,
		`\a\b`,
	} {
		wantAbs := filepath.IsAbs(p)
		if got := hostPaths.isAbs(p); got != wantAbs {
			t.Errorf("isAbs(%q) = %v, filepath.IsAbs = %v", p, got, wantAbs)
		}
		if !wantAbs {
			continue // the daemon cleans absolute paths only
		}
		want := filepath.Clean(p)
		if n := len(filepath.VolumeName(want)); n == 2 {
			want = strings.ToUpper(want[:2]) + want[2:]
		}
		if got := hostPaths.clean(p); got != want {
			t.Errorf("clean(%q) = %q, filepath.Clean = %q", p, got, want)
		}
	}
	// A URI of a real directory names it.
	dir := t.TempDir()
	p, err := filePath(fileURI(dir))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() || !samePath(p, dir) {
		t.Errorf("filePath(fileURI(%q)) = %q (%v)", dir, p, err)
	}
}

// vscodeURI spells path as VS Code does: on Windows with a lower-case drive
// letter and an encoded colon.
func vscodeURI(path string) string { return string(fileURI(path)) }

// otherSpellings are URIs for the same path as other clients, or a user
// typing a folder's name, spell it on this OS.
func otherSpellings(path string) []string {
	var out []string
	u := vscodeURI(path)
	if hostPaths.windows {
		// file:///C:/… (Neovim, Emacs): the colon as is, the drive letter upper case.
		out = append(out, strings.Replace(strings.Replace(u, "%3A", ":", 1), "file:///"+u[8:9], "file:///"+strings.ToUpper(u[8:9]), 1))
	}
	if hostPaths.fold {
		// The folders' names upper case: file:///C%3A/USERS/ME/PROJ/a_test.go.
		dirPart := u[len("file://") : len(u)-len(filepath.Base(path))]
		out = append(out, "file://"+strings.ToUpper(dirPart)+filepath.Base(path))
	}
	return out
}

// The workspace folder and the files' URIs in the client's spellings: a
// command naming a file inside is accepted in any spelling that names it,
// a file outside refused; a document opened under one spelling is known under
// the others and closed by them. Runs on Linux and, with the Windows spellings,
// under Wine.
func TestWorkspaceURISpellings(t *testing.T) {
	p := startInProcess(t, Options{})
	base := t.TempDir()
	dir := filepath.Join(base, "My Proj #1 %")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sibling := dir + "2"
	p.initialize(dir, nil) // as VS Code spells it: uri.File(dir)

	file := filepath.Join(dir, "a_test.go")
	inside := append([]string{vscodeURI(file)}, otherSpellings(file)...)
	for _, u := range inside {
		if _, err := p.Command(fproto.CommandStop, fproto.TargetArgs{URI: u, Target: "FuzzX"}); err != nil {
			t.Errorf("stop %s (inside the workspace): %v", u, err)
		}
	}
	outside := []string{
		vscodeURI(filepath.Join(sibling, "a_test.go")),
		vscodeURI(filepath.Join(base, "a_test.go")),
		vscodeURI(dir) + "/../a_test.go",
	}
	for _, u := range outside {
		if _, err := p.Command(fproto.CommandStop, fproto.TargetArgs{URI: u, Target: "FuzzX"}); rpcCode(err) != jsonrpc2.InvalidParams {
			t.Errorf("stop %s (outside the workspace): err = %v, want refused", u, err)
		}
	}

	// The file is not on disk: its code lens comes from the open document.
	lenses := func(u string) int {
		t.Helper()
		ls, err := p.Server.CodeLens(p.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.URI(u)}})
		if err != nil {
			t.Fatal(err)
		}
		return len(ls)
	}
	text := "package x\n\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) {}\n"
	for _, opened := range inside {
		err := p.Server.DidOpen(p.Ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: uri.URI(opened), LanguageID: "go", Version: 1, Text: text}})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range inside {
			if n := lenses(u); n != 1 {
				t.Errorf("opened as %s: %d code lenses for %s, want 1", opened, n, u)
			}
		}
		closed := inside[len(inside)-1]
		if err := p.Server.DidClose(p.Ctx, &protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.URI(closed)}}); err != nil {
			t.Fatal(err)
		}
		if n := lenses(opened); n != 0 {
			t.Errorf("opened as %s, closed as %s: still open (%d lenses)", opened, closed, n)
		}
	}
}

// cacheDir and syncDir may start with ~ and the OS's separator: ~/ everywhere,
// ~\ on Windows too (under Wine), the home folder being os.UserHomeDir's
// (%USERPROFILE% on Windows, which has no HOME).
func TestSettingsHomeDir(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	in := map[string]string{"~/fuzz/cache": filepath.Join(home, "fuzz", "cache")}
	if hostPaths.windows {
		in[`~\fuzz\cache`] = filepath.Join(home, "fuzz", "cache")
	}
	for dir, want := range in {
		st := fproto.DefaultSettings()
		raw, _ := json.Marshal(map[string]string{"cacheDir": dir, "syncDir": dir})
		if err := updateSettings(&st, raw); err != nil || st.CacheDir != want || st.SyncDir != want {
			t.Errorf("cacheDir, syncDir %q = %q, %q (%v); want %q", dir, st.CacheDir, st.SyncDir, err, want)
		}
	}
}
