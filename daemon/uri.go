package daemon

import (
	"fmt"
	"path"
	"runtime"
	"strings"

	"go.lsp.dev/uri"
)

// File URIs and paths. Every path the daemon holds comes from one of three
// places: the client's URIs (through filePath), the engine (go list's paths)
// and the file watcher (a watched directory joined with a name). They name the
// same file in different spellings on Windows, where VS Code sends
// file:///c%3A/Users/me/proj/a.go for what Go calls C:\Users\me\proj\a.go, and
// on file systems that ignore case (Windows; macOS by default), where the
// folder the user opened may differ in case from the name on disk. So:
//
//   - filePath turns a URI into the path Go would use (drive letter upper case,
//     the OS's separator, cleaned), and fileURI a path into VS Code's URI;
//   - maps and comparisons of paths go through pathKey, which folds case where
//     the file system does;
//   - "is this path inside the workspace" is pathWithin, by whole path
//     elements of keys: c:\proj\a.go is inside C:\Proj, C:\project is not.
//
// The rules are methods of a pathSyntax, so that Linux's tests check the
// Windows rules too; under Wine (scripts/wine-test.sh) the same tests compare
// them with Windows's own path/filepath.

// A pathSyntax is how one OS spells file paths.
type pathSyntax struct {
	windows bool // `\` and `/` both separate; absolute paths begin with a volume (C:, \\host\share)
	fold    bool // names that differ in case alone are one file
}

// hostPaths is this OS's syntax. macOS is taken as case-insensitive, its
// default (APFS and HFS+ as installed); a case-sensitive volume there gets
// two files differing only in case merged in the daemon's maps.
var hostPaths = pathSyntax{
	windows: runtime.GOOS == "windows",
	fold:    runtime.GOOS == "windows" || runtime.GOOS == "darwin" || runtime.GOOS == "ios",
}

// filePath returns the absolute, clean file system path of a file URI.
func filePath(u uri.URI) (string, error) { return hostPaths.fromURI(u) }

// fileURI is the file URI of an absolute path, as vscode-uri's URI.file(path).toString().
func fileURI(path string) uri.URI { return hostPaths.toURI(path) }

// pathKey is the key of a path in the daemon's maps: two spellings of one file
// have the same key.
func pathKey(path string) string { return hostPaths.key(path) }

// samePath reports whether a and b name the same file (by spelling: links are
// not resolved).
func samePath(a, b string) bool { return hostPaths.key(a) == hostPaths.key(b) }

// pathWithin reports whether path is root or inside it.
func pathWithin(root, path string) bool { return hostPaths.within(root, path) }

func (ps pathSyntax) sep() string {
	if ps.windows {
		return `\`
	}
	return "/"
}

func (ps pathSyntax) platform() uri.Platform {
	if ps.windows {
		return uri.PlatformWindows
	}
	return uri.PlatformPOSIX
}

func (ps pathSyntax) isSep(c byte) bool { return c == '/' || ps.windows && c == '\\' }

// volumeLen is the length of path's volume name: "C:" or `\\host\share` on
// Windows (either separator), none elsewhere.
func (ps pathSyntax) volumeLen(p string) int {
	if !ps.windows {
		return 0
	}
	if len(p) >= 2 && p[1] == ':' && isLetter(p[0]) {
		return 2
	}
	if len(p) >= 2 && ps.isSep(p[0]) && ps.isSep(p[1]) {
		// \\host\share: up to the separator after the share's name.
		i := 2
		for part := 0; part < 2; part++ {
			for i < len(p) && !ps.isSep(p[i]) {
				i++
			}
			if part == 0 && i < len(p) {
				i++
			}
		}
		return i
	}
	return 0
}

// isAbs reports whether p is absolute: rooted, and on Windows with a volume.
func (ps pathSyntax) isAbs(p string) bool {
	n := ps.volumeLen(p)
	if ps.windows && n == 0 {
		return false
	}
	if n > 2 { // UNC: the share itself is absolute
		return true
	}
	return n < len(p) && ps.isSep(p[n])
}

// clean is filepath.Clean with these rules: the OS's separator, "." and ".."
// elements resolved, no trailing separator except the root's; on Windows a
// drive letter upper case (as Go's os.Getwd and the go command spell it).
func (ps pathSyntax) clean(p string) string {
	n := ps.volumeLen(p)
	vol, rest := p[:n], p[n:]
	if ps.windows {
		vol = strings.ReplaceAll(vol, "/", `\`)
		if n == 2 {
			vol = strings.ToUpper(vol)
		}
		rest = strings.ReplaceAll(rest, `\`, "/")
	}
	if n > 2 && rest == "" {
		return vol // \\host\share
	}
	rest = path.Clean(rest)
	if ps.windows {
		rest = strings.ReplaceAll(rest, "/", `\`)
	}
	return vol + rest
}

// key is clean(p), case folded where the file system folds it.
func (ps pathSyntax) key(p string) string {
	p = ps.clean(p)
	if ps.fold {
		p = strings.ToLower(p)
	}
	return p
}

// within reports whether p is root or inside it, by whole path elements.
func (ps pathSyntax) within(root, p string) bool {
	r, k := ps.key(root), ps.key(p)
	if k == r {
		return true
	}
	if !strings.HasSuffix(r, ps.sep()) {
		r += ps.sep()
	}
	return strings.HasPrefix(k, r)
}

// fromURI is the clean absolute path of a file URI: vscode-uri's fsPath
// (percent-decoded, file://host/share/… a UNC path), then clean.
func (ps pathSyntax) fromURI(u uri.URI) (string, error) {
	if u.Scheme() != "file" {
		return "", fmt.Errorf("not a file URI: %q", u)
	}
	p := uri.FsPathFor(u, ps.platform(), false)
	if p == "" || !ps.isAbs(p) {
		return "", fmt.Errorf("not an absolute file URI: %q", u)
	}
	return ps.clean(p), nil
}

// toURI is vscode-uri's URI.file(p).toString(): on Windows the drive letter
// lower case and its colon encoded (file:///c%3A/Users/…), a UNC path's host
// the authority (file://host/share/…); spaces, '#' and '%' percent-encoded.
func (ps pathSyntax) toURI(p string) uri.URI { return uri.FileFor(ps.platform(), p) }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
