package daemon

// The daemon's tests run the real engine (features_test.go, engine_e2e_test.go,
// neovim_test.go). A fake engine is used only for the one fault that cannot be
// caused for real: the engine panicking in Discover or Start (the engine has
// no input that makes it panic; the daemon must still live on: the request's
// handler turns the panic into an error, server.go, and the session table's
// lock is released). The watcher's failure is simulated through
// Options.newFSWatcher instead (TestClientFileEventsWhenWatcherFails): running
// into the inotify limits for real would starve every other process of the
// user on the machine.

import (
	"context"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// panickyEngine panics where the real engine's methods would run.
type panickyEngine struct{}

func (panickyEngine) Start(t engine.Target) fuzzSession { panic("engine bug in Start") }
func (panickyEngine) Close()                            {}

func TestEnginePanicIsAnError(t *testing.T) {
	dir := copyDir(t, "../testdata/calc")
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"Discover", Options{discover: func(ctx context.Context, flags engine.BuildFlags, dir string, patterns ...string) ([]engine.Target, error) {
			panic("engine bug in Discover")
		}}, "engine bug in Discover"},
		{"Start", Options{newEngine: func(engine.Options, func(engine.Event)) fuzzEngine { return panickyEngine{} }}, "engine bug in Start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startInProcess(t, tc.opts)
			p.initialize(dir, nil)
			_, err := p.Command(fproto.CommandStart, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("start = %v, want an error with %q", err, tc.want)
			}
			if st := p.status(); len(st.Sessions) != 0 {
				t.Errorf("status after the failed start = %+v", st)
			}
		})
	}
}
