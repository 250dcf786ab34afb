package main

// SARIF 2.1.0 output of a headless run (-sarif FILE), for GitHub code scanning:
// one result per distinct failure at the line where it happens, the failing
// goroutine's stack as a code flow, the input and the replay command in the
// message. Paths are relative to the directory fuzzls ran in (the checkout's root
// in CI), which GitHub resolves against the repository.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/protocol"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool                   `json:"tool"`
	Invocations       []sarifInvocation           `json:"invocations"`
	OriginalURIBaseID map[string]sarifArtifactLoc `json:"originalUriBaseIds,omitempty"`
	Results           []sarifResult               `json:"results"`
}

// sarifInvocation says whether fuzzls ran as asked; what kept it from it (a
// target whose code does not build, a failure of fuzzls itself) is a
// notification, never a result: results are findings in the code.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Descriptor sarifDescriptorRef `json:"descriptor"`
	Level      string             `json:"level"`
	Message    sarifMessage       `json:"message"`
}

type sarifDescriptorRef struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	Name             string       `json:"name"`
	ShortDescription sarifMessage `json:"shortDescription"`
	FullDescription  sarifMessage `json:"fullDescription"`
	DefaultConfig    struct {
		Level string `json:"level"`
	} `json:"defaultConfiguration"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	CodeFlows           []sarifCodeFlow   `json:"codeFlows,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	BaselineState       string            `json:"baselineState"`
}

type sarifLocation struct {
	Physical sarifPhysical `json:"physicalLocation"`
	Message  *sarifMessage `json:"message,omitempty"`
}

type sarifPhysical struct {
	Artifact sarifArtifactLoc `json:"artifactLocation"`
	Region   *sarifRegion     `json:"region,omitempty"`
}

type sarifArtifactLoc struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifCodeFlow struct {
	ThreadFlows []sarifThreadFlow `json:"threadFlows"`
}

type sarifThreadFlow struct {
	Locations []sarifThreadFlowLoc `json:"locations"`
}

type sarifThreadFlowLoc struct {
	Location sarifLocation `json:"location"`
}

// writeSARIF writes the run's failures, and what kept it from running as
// asked (notes), to path. root is the directory paths are made relative to.
func writeSARIF(path, root string, crashes []*engine.Crash, notes []sarifNotification) error {
	data, err := json.MarshalIndent(sarifReport(root, crashes, notes), "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func sarifReport(root string, crashes []*engine.Crash, notes []sarifNotification) *sarifLog {
	run := sarifRun{
		Tool:        sarifTool{Driver: sarifDriver{Name: "fuzzls", Version: version(), InformationURI: "https://fuzzls.dev"}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: len(notes) == 0, ToolExecutionNotifications: notes}},
		OriginalURIBaseID: map[string]sarifArtifactLoc{
			"SRCROOT": {URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(root) + "/"}).String()},
		},
		Results: []sarifResult{},
	}
	for _, k := range engine.Kinds() {
		r := sarifRule{ID: "fuzzls/" + string(k.Kind), Name: ruleName(k.Kind),
			ShortDescription: sarifMessage{Text: k.Description}, FullDescription: sarifMessage{Text: k.Description + " (found by fuzzing)"}}
		r.DefaultConfig.Level = sarifLevel(k.Kind)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, r)
	}
	for _, c := range crashes {
		run.Results = append(run.Results, sarifCrash(root, c))
	}
	return &sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}
}

// sarifLevel is a kind's level: a slow input is a warning, the rest errors.
func sarifLevel(kind failure.Kind) string {
	if engine.LookupKind(kind).Warning {
		return "warning"
	}
	return "error"
}

func sarifCrash(root string, c *engine.Crash) sarifResult {
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s: %s: %s\n\n", c.Target.Name, c.Kind, strings.TrimRight(c.Message, "\n"))
	what := "Failing input"
	switch {
	case c.Kind == protocol.KindSlow:
		what = "Slow input"
	case c.Minimized:
		what = "Minimized failing input"
	}
	fmt.Fprintf(&msg, "%s (testdata/fuzz/%s/%s):\n%s\n", what, c.Target.Name, replayName(c), c.Input)
	cmd, why := c.ReplayCommand(replayName(c))
	if why != "" {
		why = " (" + why + ")"
	}
	fmt.Fprintf(&msg, "Replay: save the input as testdata/fuzz/%s/%s in %s, then %s%s\n",
		c.Target.Name, replayName(c), relTo(root, c.Target.Dir), cmd, why)
	level := sarifLevel(c.Kind)
	switch {
	case c.Flaky:
		level = "warning"
		msg.WriteString("Flaky: the input did not fail again when replayed on a fresh process; it did not fail the run.\n")
	case !c.Verified && level == "error":
		level = "warning"
		msg.WriteString("Unchecked: the input could not be replayed to check it; it did not fail the run.\n")
	}
	res := sarifResult{RuleID: "fuzzls/" + string(c.Kind), Level: level, Message: sarifMessage{Text: msg.String()},
		PartialFingerprints: map[string]string{"fuzzlsFailure/v1": c.ID}, BaselineState: "new"}
	if c.Known {
		res.BaselineState = "unchanged"
	}
	file, line := c.File, c.Line
	if file == "" { // no frame in the user's code: the target's declaration
		file, line = c.Target.File, c.Target.Line
	}
	res.Locations = []sarifLocation{sarifLoc(root, file, line, "")}
	var flow sarifThreadFlow
	for i := len(c.Frames) - 1; i >= 0; i-- { // outermost first: the flow into the failure
		f := c.Frames[i]
		if f.File == "" {
			continue
		}
		flow.Locations = append(flow.Locations, sarifThreadFlowLoc{Location: sarifLoc(root, f.File, f.Line, f.Function)})
	}
	if len(flow.Locations) > 0 {
		res.CodeFlows = []sarifCodeFlow{{ThreadFlows: []sarifThreadFlow{flow}}}
	}
	return res
}

// ruleName is a kind in PascalCase, prefixed: goroutine-panic → FuzzGoroutinePanic.
func ruleName(kind failure.Kind) string {
	name := "Fuzz"
	for _, w := range strings.Split(string(kind), "-") {
		if w != "" {
			name += strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return name
}

// replayName is the name go test gives the failing input's file.
func replayName(c *engine.Crash) string {
	if c.Path != "" {
		return filepath.Base(c.Path)
	}
	return "<name>"
}

// sarifLoc is file:line relative to the source root when inside it (GitHub shows
// those in the repository), an absolute file URI otherwise (the module cache,
// GOROOT).
func sarifLoc(root, file string, line int, function string) sarifLocation {
	loc := sarifLocation{Physical: sarifPhysical{Region: &sarifRegion{StartLine: max(line, 1)}}}
	if rel, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
		loc.Physical.Artifact = sarifArtifactLoc{URI: (&url.URL{Path: filepath.ToSlash(rel)}).String(), URIBaseID: "SRCROOT"}
	} else {
		loc.Physical.Artifact = sarifArtifactLoc{URI: fileURL(file)}
	}
	if function != "" {
		loc.Message = &sarifMessage{Text: function}
	}
	return loc
}

// fileURL is the file URI of an absolute path (RFC 8089): file:///home/me/x.go,
// on Windows file:///C:/Users/me/x.go (url.URL alone makes the drive a host:
// file://C:/…) and file://server/share/x.go for a UNC path.
func fileURL(path string) string {
	p := filepath.ToSlash(path)
	u := url.URL{Scheme: "file", Path: p}
	switch {
	case strings.HasPrefix(p, "//"):
		host, rest, _ := strings.Cut(p[2:], "/")
		u.Host, u.Path = host, "/"+rest
	case !strings.HasPrefix(p, "/"):
		u.Path = "/" + p
	}
	return u.String()
}

func relTo(root, dir string) string {
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return dir
}
