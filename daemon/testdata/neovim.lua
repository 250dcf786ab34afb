-- neovim.lua: drives Neovim's built-in LSP client against `fuzzls serve' (TestNeovim).
--
-- Neovim 0.7.2 (Debian 12's), the way a user's config would: start `fuzzls serve'
-- with vim.lsp.start_client, attach it to calc_test.go and calc.go, run
-- fuzzls.start, wait for the crash diagnostic (and a fuzzls/coverage
-- notification, through a custom handler), ask for the code actions on its line
-- exactly as vim.lsp.buf.code_action() does, and run the "Add input to seed
-- corpus" action's command. Everything it saw goes to $FUZZLS_NVIM_OUT as JSON;
-- it always ends Neovim.
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
