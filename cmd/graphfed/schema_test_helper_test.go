package main

import (
	"strings"
	"testing"
)

// bankSchema is `graphfed agent --print-schema` for a bank's learner (args:
// its --job, --task, --data and learner flags): what the aggregator's
// --schema says in a job on a keyring.
func bankSchema(t *testing.T, args ...string) string {
	t.Helper()
	out, err := graphfedCmd(t, append([]string{"agent", "--print-schema", "--log-level", "warn"}, args...)...).Output()
	if err != nil {
		t.Fatalf("agent --print-schema %v: %v", args, err)
	}
	s := strings.TrimSpace(string(out))
	if !strings.Contains(s, ":") {
		t.Fatalf("agent --print-schema %v printed %q, want HASH:PARAMS", args, s)
	}
	return s
}

func TestAgentPrintSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a learner")
	}
	dirs := writeClients(t, 2)
	a, b := bankSchema(t, "--job", "j", "--data", dirs[0]), bankSchema(t, "--job", "j", "--data", dirs[1])
	if a != b {
		t.Fatalf("two clients of one partition print %s and %s", a, b)
	}
}
