package engine

import "strconv"

// State is where a Session is in its life. A session starts Building; a build
// that works goes on to Fuzzing, one that fails to Error (a persistent session
// waits there for the next Rebuild); a target that skips itself is Skipped;
// Stopped is the end of a run (Stop, FuzzTime, a failure without KeepFuzzing),
// which a persistent session leaves again on Rebuild.
type State int

const (
	StateBuilding State = iota // building the binary, running the seeds
	StateFuzzing               // workers running
	StateStopped               // not fuzzing: stopped, or finished
	StateError                 // the build or the seeds run failed (Session.Err)
	StateSkipped               // the target skips itself (Session.Skipped)
)

var stateNames = [...]string{
	StateBuilding: "building",
	StateFuzzing:  "fuzzing",
	StateStopped:  "stopped",
	StateError:    "error",
	StateSkipped:  "skipped",
}

// String is the state's name, for logs and messages: "building", "fuzzing", …
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}
