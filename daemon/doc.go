// Package daemon is fuzzls's language server: `fuzzls serve` runs [Serve] on its
// standard input and output, and any LSP client (VS Code through the fuzzls
// extension, Neovim, Emacs) gets coverage-guided fuzzing while the user types.
//
// The daemon discovers the fuzz targets (func FuzzXxx) of the workspace, shows a
// code lens on each to start and stop fuzzing, watches the workspace so that a
// save rebuilds the affected sessions, and reports what the engine finds: crash
// diagnostics on the failing line (with hover, replay command and code actions
// that add the input to the seed corpus), build errors as diagnostics, work-done
// progress while building, and fuzzls's own notifications fuzzls/coverage and
// fuzzls/status (types in fuzzls.dev/fuzzls/protocol).
//
// Layout, after gopls's internal/server: one file per LSP feature, handlers thin
// and alike, all mutable state in one place (the server struct, guarded by
// server.mu and documented in sessions.go):
//
//   - server.go: Options, Serve, the connection and its handler chain.
//   - stream.go: the transport wrapper that survives malformed frames.
//   - general.go: initialize, initialized, shutdown, exit, workspace folders, settings.
//   - settings.go: the settings (protocol.Settings) decoded, checked, made engine options.
//   - text_synchronization.go: the document store and UTF-16 conversions.
//   - watcher.go: fsnotify over the workspace folders and the event batcher.
//   - sessions.go: the engine, its sessions and its events.
//   - codelens.go, diagnostics.go, hover.go, codeaction.go, command.go,
//     progress.go, notify.go: one feature each; gentest.go the "Generate fuzz
//     test" source action (package fuzzls.dev/fuzzls/daemon/gentest) and its command.
//
// Invariants:
//   - The daemon never writes into the user's tree on its own: changes are
//     WorkspaceEdits the client applies (so undo works), except the explicit
//     fuzzls.addToCorpus command, which writes one file atomically inside a
//     workspace folder, and fuzzls.generateFuzzTest, which does so with a new
//     test file for a client that cannot create files. Path arguments outside the workspace folders are refused.
//   - It listens on no port: LSP runs over the two streams given to Serve.
//   - It exits on its own when its input closes, and stops the engine (which
//     kills the worker processes) before Serve returns.
//   - A handler panic does not end the daemon: it is recovered, logged with
//     window/logMessage, and the request answers with an internal error.
//   - Notifications are handled in wire order on the read loop (didChange must
//     be applied in order); requests run concurrently. A notification handler
//     therefore never waits for a reply from the client on its own goroutine.
package daemon
