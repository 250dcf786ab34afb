package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// The daemon's settings are protocol.Settings, defined there once with their
// defaults (protocol.DefaultSettings) and generated into the extension's
// TypeScript. This file decodes and checks what the client sends and turns the
// settings into engine options.

// updateSettings applies to st the members present in raw, from
// initializationOptions or workspace/didChangeConfiguration: the settings object
// itself or the object under a "fuzzls" key (VS Code sends the section). It
// reports the invalid members, which keep their value; the valid ones are
// applied all the same.
func updateSettings(st *fproto.Settings, raw []byte) error {
	var outer struct {
		Fuzzls *json.RawMessage `json:"fuzzls"`
	}
	if err := json.Unmarshal(raw, &outer); err == nil && outer.Fuzzls != nil {
		raw = *outer.Fuzzls
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var errs []string
	raw, err := timeoutAsDuration(raw)
	if err != nil {
		errs = append(errs, err.Error())
	}
	next := *st
	next.BuildFlags = slices.Clone(st.BuildFlags) // json.Unmarshal would write into st's array
	if err := json.Unmarshal(raw, &next); err != nil {
		return fmt.Errorf("invalid settings: %v", err)
	}
	// An invalid member keeps its value before.
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	switch next.AutoStart {
	case fproto.AutoStartOff, fproto.AutoStartOpenFiles, fproto.AutoStartWorkspace:
	default:
		bad("autoStart %q is not one of %s, %s, %s", next.AutoStart, fproto.AutoStartOff, fproto.AutoStartOpenFiles, fproto.AutoStartWorkspace)
		next.AutoStart = st.AutoStart
	}
	if next.Parallel < 0 {
		bad("parallel must not be negative")
		next.Parallel = st.Parallel
	}
	if _, err := timeout(next); err != nil {
		bad("timeout %q is not a duration", next.Timeout)
		next.Timeout = st.Timeout
	}
	if _, err := plateau(next); err != nil {
		bad("plateau %q is not a duration", next.Plateau)
		next.Plateau = st.Plateau
	}
	if next.RSSLimitMB < 0 {
		bad("rssLimitMB must not be negative")
		next.RSSLimitMB = st.RSSLimitMB
	}
	if next.Nice < 0 || next.Nice > 19 {
		bad("nice %d is not between 0 and 19", next.Nice)
		next.Nice = st.Nice
	}
	for _, d := range []struct {
		name        string
		dir, before *string
	}{{"cacheDir", &next.CacheDir, &st.CacheDir}, {"syncDir", &next.SyncDir, &st.SyncDir}} {
		if p := *d.dir; len(p) >= 2 && p[0] == '~' && hostPaths.isSep(p[1]) { // ~/ (and ~\ on Windows)
			if home, err := os.UserHomeDir(); err == nil {
				*d.dir = filepath.Join(home, p[2:])
			}
		}
		if *d.dir != "" && !filepath.IsAbs(*d.dir) {
			bad("%s %q is not an absolute path", d.name, *d.dir)
			*d.dir = *d.before
		}
	}
	if err := engine.CheckEngine(next.Engine); err != nil {
		bad("%v", err)
		next.Engine = st.Engine
	}
	if _, err := engine.ParseBuildFlags(next.BuildFlags); err != nil {
		bad("buildFlags: %v", err) // the flags understood are used, as the other settings
	}
	*st = next
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// timeoutAsDuration rewrites a timeout given in seconds (a JSON number, as
// older clients send it) as the duration string protocol.Settings has.
func timeoutAsDuration(raw []byte) ([]byte, error) {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return raw, nil // json.Unmarshal into Settings says what is wrong
	}
	t, ok := members["timeout"]
	if !ok || len(t) == 0 || t[0] == '"' || string(t) == "null" {
		return raw, nil
	}
	delete(members, "timeout")
	var secs float64
	if err := json.Unmarshal(t, &secs); err == nil && secs >= 0 {
		members["timeout"], _ = json.Marshal(time.Duration(secs * float64(time.Second)).String())
	}
	out, err := json.Marshal(members)
	if err != nil {
		return raw, nil
	}
	if _, ok := members["timeout"]; !ok {
		return out, fmt.Errorf(`timeout must be seconds or a duration such as "10s"`)
	}
	return out, nil
}

// timeout is the setting's duration; 0 for "", the engine's adaptive limit.
func timeout(st fproto.Settings) (time.Duration, error) { return duration(st.Timeout) }

// plateau is the setting's duration; 0 for "", never.
func plateau(st fproto.Settings) (time.Duration, error) { return duration(st.Plateau) }

// duration reads a duration setting: "" is 0, a negative one is an error.
func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative duration %q", s)
	}
	return d, err
}

// buildFlags are the go test flags of the settings that the engine takes (the
// others were reported when the settings came).
func buildFlags(st fproto.Settings) engine.BuildFlags {
	flags, _ := engine.ParseBuildFlags(st.BuildFlags)
	return flags
}

// engineOptions are the engine's options for the settings.
func engineOptions(st fproto.Settings, log io.Writer) engine.Options {
	d, _ := timeout(st)
	quiet, _ := plateau(st)
	return engine.Options{
		CacheDir:    st.CacheDir,
		Parallel:    st.Parallel,
		Timeout:     d,
		KeepFuzzing: st.KeepFuzzing,
		Plateau:     quiet,
		RSSLimitMB:  engine.RSSLimit(st.RSSLimitMB),
		Nice:        st.Nice,
		Build:       buildFlags(st),
		Leaks:       st.Leaks,
		Engine:      st.Engine,
		Log:         log,
		Persistent:  true,
		// Failures found on other machines are run here and reported like
		// those found here, so they reach the editor.
		Sync: st.SyncDir,
	}
}
