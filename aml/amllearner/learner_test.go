package amllearner

import (
	"maps"
	"slices"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/aml/bank"
	"graphfed/aml/worldgen"
)

// amlBanks generates a small world of two banks and returns each bank's
// learner input, built from its view alone.
func amlBanks(t *testing.T) map[string]Data {
	t.Helper()
	cfg, err := worldgen.Preset(worldgen.Tiny, worldgen.HI, 6)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Banks, cfg.Transactions = 2, 8000
	sum, err := worldgen.Generate(cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := amlworld.LoadTrans(sum.TransPath, amlworld.Options{})
	if err != nil {
		t.Fatal(err)
	}
	views, err := bank.SplitWorld(w, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Data{}
	for _, v := range views {
		out[v.ID] = Data{Graph: v.Graph, Split: v.Split, Home: v.Home, Owned: v.Owned, Global: v.Global,
			Remote: v.Remote(), Peers: v.Peers(), First: v.Cut.First, Last: v.Cut.Last}
	}
	return out
}

// What one bank releases, named by global ids, lands on the other bank's
// copies of those accounts, and only when it comes from their bank.
func TestAMLLearnerExchangesGlobalIDs(t *testing.T) {
	banks := amlBanks(t)
	ls := map[string]*Learner{}
	for id, d := range banks {
		l, err := New(d, Config{Hidden: 8, BatchSize: 64, FanOut: []int{3, 3}, Seed: 1, Release: ReleaseHidden})
		if err != nil {
			t.Fatal(err)
		}
		ls[id] = l
	}
	clients := slices.Sorted(maps.Keys(ls))
	aID, bID := clients[0], clients[1]
	a, b := ls[aID], ls[bID]
	if got := a.Neighbours(); len(got) != 1 || got[0] != bID {
		t.Fatalf("%s neighbours %v, want [%s]", aID, got, bID)
	}
	a.Train(20)
	ids, rows, dim := a.Boundary(bID)
	if len(ids) == 0 || dim != 2*(8+1) || len(rows) != dim*len(ids) { // two layers packed, each with its norm coordinate
		t.Fatalf("%s released %d ids, %d values of width %d", aID, len(ids), len(rows), dim)
	}
	// From the wrong bank, nothing is taken; a wrong width is an error.
	if err := b.Receive(bID, ids, rows, dim); err != nil || b.remote.len() != 0 {
		t.Fatalf("%s took %d embeddings claimed by itself (err %v)", bID, b.remote.len(), err)
	}
	if err := b.Receive(aID, ids, rows, dim+1); err == nil {
		t.Fatal("accepted a release of the wrong width")
	}
	unknown := append([]int64{-1, 1<<62 + 5}, ids...)
	pad := append(make([]float32, 2*dim), rows...)
	if err := b.Receive(aID, unknown, pad, dim); err != nil {
		t.Fatal(err)
	}
	if b.remote.len() != len(ids) {
		t.Fatalf("%s holds %d of %d released embeddings", bID, b.remote.len(), len(ids))
	}
	for _, id := range ids {
		acct, ok := b.byID[id]
		if !ok || b.d.Owned[acct] || b.d.Remote[acct] != aID || !b.remote.has(acct) {
			t.Fatalf("global id %d did not reach %s's copy of the account", id, bID)
		}
	}
	// The received embeddings stand in for a's accounts in b's batches.
	b.Train(5)
	if s := b.EvaluateFinal(); s["test_tp"]+s["test_fp"]+s["test_fn"]+s["test_tn"] == 0 {
		t.Fatalf("%s scored nothing: %v", bID, s)
	}
}

func TestNewAMLLearnerRefuses(t *testing.T) {
	banks := amlBanks(t)
	d := banks[slices.Sorted(maps.Keys(banks))[0]]
	cfg := Config{Hidden: 8, BatchSize: 64, FanOut: []int{2, 2}}
	for _, tc := range []struct {
		name  string
		spoil func(d *Data)
	}{
		{"no graph", func(d *Data) { d.Graph = nil }},
		{"short splits", func(d *Data) { d.Split = d.Split[1:] }},
		{"short global ids", func(d *Data) { d.Global = d.Global[1:] }},
		{"reversed range", func(d *Data) { d.First, d.Last = d.Last, d.First }},
		{"own account as remote", func(d *Data) {
			d.Remote = map[int32]string{int32(ownedAccount(d)): "bank-x"}
		}},
		{"shared global id", func(d *Data) {
			d.Global = append([]int64(nil), d.Global...)
			var first int32 = -1
			for a := range d.Remote {
				if first < 0 {
					first = a
				} else {
					d.Global[a] = d.Global[first]
					return
				}
			}
		}},
	} {
		c := d
		tc.spoil(&c)
		if _, err := New(c, cfg); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := New(d, cfg); err != nil {
		t.Fatal(err)
	}
}

func ownedAccount(d *Data) int {
	for a, o := range d.Owned {
		if o {
			return a
		}
	}
	return -1
}
