package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"graphfed/graph"
	"graphfed/workload/rec"
)

func TestGenRec(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pl")
	gen, err := runAMLCmd(t, "gen", "rec", "--users", "200", "--items", "500", "--seed", "3", "--out", dir,
		"--user-tail", "1.4", "--item-zipf", "0.9", "--min-degree", "3", "--shapes", "dup=5,stars=2:30,isolated-items=10")
	if err != nil {
		t.Fatal(err)
	}
	if gen.Command != "gen rec" || gen.Dataset != "pl" || gen.Seed != 3 {
		t.Fatalf("gen report %+v", gen)
	}
	d, err := graph.LoadLightGCN(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The files hold what the generator draws from the same settings.
	cfg := rec.GenConfig{Name: "pl", Users: 200, Items: 500, UserTail: 1.4, MinDegree: 3, ItemZipf: 0.9,
		TestFraction: rec.DefaultGenConfig().TestFraction, Seed: 3,
		Shapes: rec.Shapes{DupUsers: 5, Stars: 2, StarLeaves: 30, IsolatedItems: 10}}
	want, err := rec.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Users != want.Users || d.Items != want.Items || !reflect.DeepEqual(d.Train, want.Train) || !reflect.DeepEqual(d.Test, want.Test) {
		t.Fatalf("loaded %d×%d (%d train), generated %d×%d (%d train)", d.Users, d.Items, d.NumTrain(), want.Users, want.Items, want.NumTrain())
	}
	m := gen.Metrics
	if m["users"] != float64(d.Users) || m["items"] != float64(d.Items) || m["train_interactions"] != float64(d.NumTrain()) ||
		m["test_interactions"] != float64(d.NumTest()) {
		t.Fatalf("report %v, loaded %d×%d %d/%d", m, d.Users, d.Items, d.NumTrain(), d.NumTest())
	}
	st, err := runAMLCmd(t, "data", "stats", "--lightgcn", dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Metrics["train_interactions"] != m["train_interactions"] || st.Metrics["users"] != m["users"] {
		t.Fatalf("stats %v vs gen %v", st.Metrics, m)
	}
}

func TestGenRecErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "rec", "--users", "10"}, "--out"},
		{[]string{"gen", "rec", "--out", dir, "--shapes", "blobs"}, "unknown shape"},
		{[]string{"gen", "rec", "--out", dir, "--user-tail", "0"}, "UserTail"},
		{[]string{"gen", "rec", "--out", dir, "--test-fraction", "1"}, "TestFraction"},
	} {
		_, err := runAMLCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
