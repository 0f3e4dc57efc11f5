package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestScenarioCmdJSON runs `graphfed scenario run` as a process and reads
// the CLI contract's last stdout line.
func TestScenarioCmdJSON(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string // scenario names, in order
		seeds   float64  // seeds each ran
		wantErr bool
	}{
		{"one scenario, a short sweep", []string{"drop", "--seeds", "20"}, []string{"drop"}, 20, false},
		{"a seed alone reruns that seed", []string{"partition", "--seed", "17"}, []string{"partition"}, 1, false},
		{"an unknown scenario", []string{"meteor"}, nil, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := graphfedCmd(t, append([]string{"scenario", "run", "--json"}, tc.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tc.wantErr {
				if err == nil || !strings.Contains(stderr.String(), "no scenario") {
					t.Fatalf("want a failure naming the missing scenario, got %v: %s", err, stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			r := lastJSON(t, stdout.Bytes())
			if r["command"] != "scenario run" {
				t.Fatalf("command %v", r["command"])
			}
			list, _ := r["scenarios"].([]any)
			if len(list) != len(tc.want) {
				t.Fatalf("scenarios %v, want %v", list, tc.want)
			}
			for i, x := range list {
				o := x.(map[string]any)
				if o["name"] != tc.want[i] || o["pass"] != true || o["failed_invariant"] != "" || o["seeds"] != tc.seeds {
					t.Fatalf("scenario %d: %v, want %s passing after %v seeds", i, o, tc.want[i], tc.seeds)
				}
				if m, _ := o["metrics"].(map[string]any); m["seeds_per_second"] == nil {
					t.Fatalf("no seeds/s reported: %v", o)
				}
			}
			if !strings.Contains(stderr.String(), "PASS "+tc.want[0]) {
				t.Fatalf("no human verdict on stderr under --json: %q", stderr.String())
			}
		})
	}
}
