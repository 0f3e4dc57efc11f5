package scenarios

import (
	"path/filepath"
	"testing"

	"graphfed/graph"
	"graphfed/scenarios/amlworld"
)

func tinyWorld(t testing.TB, seed uint64) *graph.AMLGraph {
	t.Helper()
	cfg, err := amlworld.Preset(amlworld.Tiny, amlworld.HI, seed)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := amlworld.Generate(cfg, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = sum
	matches, _ := filepath.Glob(filepath.Join(dir, "*_Trans.csv"))
	if len(matches) != 1 {
		t.Fatalf("want one Trans file, got %v", matches)
	}
	w, _, err := graph.LoadAMLTrans(matches[0], graph.AMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestSplitBanks(t *testing.T) {
	w := tinyWorld(t, 3)
	views, err := SplitBanks(w)
	if err != nil {
		t.Fatal(err)
	}
	home := make([]int, w.NumEdges())
	seen := make([]int, w.NumEdges())
	for _, v := range views {
		for i, e := range v.Edges {
			seen[e]++
			if v.Home[i] {
				home[e]++
			}
			if !v.Owned[w.Src[e]] && !v.Owned[w.Dst[e]] {
				t.Fatalf("%s sees transaction %d between two foreign accounts", v.ID, e)
			}
		}
		for _, n := range v.Neighbours() {
			if n == v.ID {
				t.Fatalf("%s is its own neighbour", v.ID)
			}
		}
	}
	for e := range w.Src {
		want := 1
		if w.CrossBank(e) {
			want = 2
		}
		if seen[e] != want || home[e] != 1 {
			t.Fatalf("transaction %d seen %d times (want %d), scored %d times (want 1)", e, seen[e], want, home[e])
		}
	}
	// Boundaries are symmetric in the sense that matters: a's accounts
	// facing b all have a transaction with b.
	a, b := views[0], views[1]
	for _, acct := range a.Boundary(b.Bank) {
		if !a.Owned[acct] {
			t.Fatalf("boundary account %d not hosted by %s", acct, a.ID)
		}
	}
}
