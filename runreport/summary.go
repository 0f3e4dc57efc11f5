package runreport

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Summary is summary.json: the JSON object of the CLI contract
// (DESIGN.md, CLI contract) that every command emits, with what a run
// directory adds to it (Build, Settings, PrivacySettings). Fields that do
// not apply to a command stay empty and are omitted.
type Summary struct {
	Command string         `json:"command"`
	Algo    string         `json:"algo,omitempty"`
	Dataset string         `json:"dataset,omitempty"`
	Clients int            `json:"clients,omitempty"`
	Rounds  int            `json:"rounds,omitempty"`
	Seed    int64          `json:"seed"`
	Seconds float64        `json:"seconds"`
	Metrics map[string]any `json:"metrics"`
	Comm    *Comm          `json:"comm,omitempty"`
	Privacy map[string]any `json:"privacy,omitempty"`

	// Build says which binary ran (BuildInfo).
	Build *Build `json:"build,omitempty"`
	// Settings are the command's settings by flag name, every one of
	// them; Changed lists those set on the command line (or job file).
	Settings map[string]string `json:"settings,omitempty"`
	Changed  []string          `json:"changed,omitempty"`
	// PrivacySettings are what the channel claims are judged against
	// (Claims); a report rebuilt from the directory restates them.
	PrivacySettings *ClaimParams `json:"privacy_settings,omitempty"`
}

// Comm counts what went over the wire, in all and per message kind.
type Comm struct {
	Bytes    int64              `json:"bytes"`
	Messages int64              `json:"messages"`
	Channels map[string]Traffic `json:"channels,omitempty"`
}

// Traffic is what was published on one kind of subject.
type Traffic struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// Build is the binary that wrote a run.
type Build struct {
	GoVersion string `json:"go_version"`
	Module    string `json:"module,omitempty"`
	Version   string `json:"version,omitempty"`
	Revision  string `json:"vcs_revision,omitempty"`
	Time      string `json:"vcs_time,omitempty"`
	Modified  bool   `json:"vcs_modified,omitempty"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
}

// BuildInfo describes the running binary: Go version, main module version
// and the VCS revision it was built from, where the toolchain stamped them.
func BuildInfo() *Build {
	b := &Build{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module, b.Version = bi.Main.Path, bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// DecodeSummary reads summary.json.
func DecodeSummary(r io.Reader) (Summary, error) {
	var s Summary
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return Summary{}, fmt.Errorf("runreport: summary.json: %w", err)
	}
	if s.Command == "" {
		return Summary{}, fmt.Errorf("runreport: summary.json: no command")
	}
	return s, nil
}
