package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAggregatorConfigGone: --config FILE, the JSON settings file, is
// gone; given (on the command line or as a job file's key) it fails
// before anything else, pointing at job files, and it is not in --help.
func TestAggregatorConfigGone(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agg.json")
	if err := os.WriteFile(file, []byte(`{"algo":"fedavg","rounds":3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(t.TempDir(), "agg.yaml")
	if err := os.WriteFile(job, []byte("run: aggregator\njob: j\ninsecure: true\nconfig: "+file+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"aggregator", "--insecure", "--nats", "nats://127.0.0.1:1", "--job", "j", "--config", file},
		// Before the credentials check: the answer to an old command line
		// is the one that says what to do instead.
		{"aggregator", "--nats", "nats://127.0.0.1:1", "--job", "j", "--config", file},
		{"run", job},
	} {
		root := newRootCmd()
		root.SetArgs(append(args, "--json"))
		_, err := executeForReport(t, root)
		if err == nil || !strings.Contains(err.Error(), "--config is gone") || !strings.Contains(err.Error(), "graphfed run --print-defaults") {
			t.Errorf("%v: error %v, want one saying --config is gone and pointing at job files", args, err)
		}
	}
	help := newAggregatorCmd(&globalFlags{})
	if f := help.Flags().Lookup("config"); f == nil || !f.Hidden {
		t.Errorf("--config should stay registered, hidden: %+v", f)
	}
	if strings.Contains(help.UsageString(), "--config") {
		t.Errorf("--config in aggregator's help:\n%s", help.UsageString())
	}
}
