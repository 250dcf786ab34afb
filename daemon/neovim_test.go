package daemon

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// neovimScript drives Neovim's built-in LSP client (0.7.2, Debian 12's) the
// way a user's config would: start `fuzzls serve` with vim.lsp.start_client,
// attach it to calc_test.go and calc.go, run fuzzls.start, wait for the
// crash diagnostic (and a fuzzls/coverage notification, through a custom
// handler), ask for the code actions on its line exactly as
// vim.lsp.buf.code_action() does, and run the "Add input to seed corpus"
// action's command. Everything it saw goes to $FUZZLS_NVIM_OUT as JSON; it
// always ends Neovim.
const neovimScript = `
local out, root, bin, cache = os.getenv('FUZZLS_NVIM_OUT'), os.getenv('FUZZLS_NVIM_ROOT'), os.getenv('FUZZLS_BIN'), os.getenv('FUZZLS_NVIM_CACHE')
local result = { diagnostics = {}, actions = {}, coverage = 0 }

local function main()
  local initialized = false
  local id = vim.lsp.start_client({
    name = 'fuzzls',
    cmd = { bin, 'serve' },
    root_dir = root,
    init_options = { parallel = 1, cacheDir = cache },
    on_init = function() initialized = true end,
    handlers = {
      ['fuzzls/coverage'] = function() result.coverage = result.coverage + 1 end,
      ['fuzzls/status'] = function() end,
    },
  })
  assert(id, 'start_client failed')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/calc_test.go'))
  local testbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(testbuf, id)
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/calc.go'))
  local calcbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(calcbuf, id)
  assert(vim.wait(20000, function() return initialized end, 50), 'not initialized')
  local client = vim.lsp.get_client_by_id(id)

  local res, err = client.request_sync('workspace/executeCommand', {
    command = 'fuzzls.start',
    arguments = { { uri = vim.uri_from_fname(root .. '/calc_test.go'), target = 'FuzzEval' } },
  }, 20000, testbuf)
  assert(res and not res.err, 'fuzzls.start: ' .. vim.inspect(err or res))

  local ok = vim.wait(50000, function()
    return #vim.diagnostic.get(calcbuf) > 0 and result.coverage > 0
  end, 100)
  assert(ok, 'no crash diagnostic or no coverage within 50 s')
  for _, d in ipairs(vim.diagnostic.get(calcbuf)) do
    table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, message = d.message, source = d.source, code = d.code })
  end

  -- What vim.lsp.buf.code_action() sends: the range at the cursor and the
  -- line's diagnostics in their LSP form.
  local d = vim.diagnostic.get(calcbuf)[1]
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  local params = vim.lsp.util.make_range_params()
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(calcbuf) }
  local replies = vim.lsp.buf_request_sync(calcbuf, 'textDocument/codeAction', params, 20000)
  assert(replies and replies[id] and not replies[id].err, 'codeAction: ' .. vim.inspect(replies))
  for _, a in ipairs(replies[id].result or {}) do
    table.insert(result.actions, a.title)
    if a.title == 'Add input to seed corpus' then
      local cmd = a.command or a
      if type(cmd) == 'table' and cmd.command then
        local r = client.request_sync('workspace/executeCommand', cmd, 20000, calcbuf)
        result.executed = r and not r.err
      elseif a.edit then
        vim.lsp.util.apply_workspace_edit(a.edit, client.offset_encoding or 'utf-16')
        result.executed = true
      end
    end
  end
end

local ok, err = pcall(main)
if not ok then result.error = tostring(err) end
local f = assert(io.open(out, 'w'))
f:write(vim.fn.json_encode(result))
f:close()
for _, c in ipairs(vim.lsp.get_active_clients()) do c.stop() end
vim.wait(5000, function() return #vim.lsp.get_active_clients() == 0 end, 50)
vim.cmd('qall!')
`

// A real Neovim (Debian's neovim package) with its built-in LSP client and the
// real fuzzls binary shows the crash diagnostic on the BUG line of calc.go and
// offers, at its position, "Add input to seed corpus", whose command writes
// the seed file.
func TestNeovim(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not on PATH (apt-get install neovim)")
	}
	bin := fuzzlsBinary(t)
	dir := copyDir(t, "../testdata/calc")
	calcGo := filepath.Join(dir, "calc.go")
	bugLine := lineOf(t, calcGo, "// BUG")
	home := t.TempDir()
	script := filepath.Join(home, "test.lua")
	if err := os.WriteFile(script, []byte(neovimScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(home, "result.json")

	// Go's build cache defaults to $XDG_CACHE_HOME/go-build: keep the user's
	// (warm) one when Neovim's XDG folders move below.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"FUZZLS_NVIM_OUT="+out, "FUZZLS_NVIM_ROOT="+dir, "FUZZLS_BIN="+bin, "FUZZLS_NVIM_CACHE="+filepath.Join(home, "fuzzls-cache"),
		// Neovim's own files (the LSP log among them) stay in the test's folder.
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"GOCACHE="+strings.TrimSpace(string(gocache)),
	)
	data, output := runEditor(t, cmd, out)
	var res struct {
		Error       string `json:"error"`
		Diagnostics []struct {
			Lnum    int    `json:"lnum"`
			Message string `json:"message"`
			Source  string `json:"source"`
			Code    string `json:"code"`
		} `json:"diagnostics"`
		Actions  []string `json:"actions"`
		Coverage int      `json:"coverage"`
		Executed bool     `json:"executed"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	t.Logf("nvim saw: %s", data)
	if res.Error != "" {
		lspLog, _ := os.ReadFile(filepath.Join(home, "cache", "nvim", "lsp.log"))
		t.Fatalf("in nvim: %s\n%s\nNeovim's LSP log (with the daemon's stderr):\n%s", res.Error, output, lspLog)
	}
	if len(res.Diagnostics) == 0 {
		t.Fatal("no diagnostics in nvim")
	}
	d := res.Diagnostics[0]
	if d.Lnum != bugLine-1 || d.Source != "fuzzls" || d.Code != "panic" || !strings.Contains(d.Message, "integer divide by zero") {
		t.Errorf("diagnostic in nvim = %+v, want a fuzzls panic on line %d (0-based %d)", d, bugLine, bugLine-1)
	}
	if !slices.Contains(res.Actions, "Add input to seed corpus") {
		t.Errorf("code actions in nvim = %q, want \"Add input to seed corpus\"", res.Actions)
	}
	if !slices.ContainsFunc(res.Actions, func(a string) bool { return strings.HasPrefix(a, "Add as f.Add(") }) {
		t.Errorf("code actions in nvim = %q, want \"Add as f.Add(…) to FuzzEval\"", res.Actions)
	}
	if res.Coverage == 0 {
		t.Error("no fuzzls/coverage notification reached nvim's custom handler")
	}
	seeds, _ := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", "FuzzEval"))
	if !res.Executed || len(seeds) != 1 {
		t.Errorf("running \"Add input to seed corpus\" from nvim: executed %v, seed files %v", res.Executed, seeds)
	}
}

// runEditor runs an editor's headless test script and returns the result it
// wrote to out, and its output.
func runEditor(t *testing.T, cmd *exec.Cmd, out string) (data, output []byte) {
	t.Helper()
	name := filepath.Base(cmd.Path)
	start := time.Now()
	output, err := cmd.CombinedOutput()
	t.Logf("%s ran %v", name, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, output)
	}
	data, err = os.ReadFile(out)
	if err != nil {
		t.Fatalf("no result from %s (%v):\n%s", name, err, output)
	}
	return data, output
}
