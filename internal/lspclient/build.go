package lspclient

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// ModuleRoot is the directory of the fuzzls module the tool runs in.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == "/dev/null" || mod == "NUL" {
		return "", errors.New("run from inside the fuzzls module")
	}
	return filepath.Dir(mod), nil
}

// Build builds the fuzzls command of the module at root into dir and returns
// the binary's path.
func Build(root, dir string) (string, error) {
	bin := filepath.Join(dir, "fuzzls")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/fuzzls")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}
