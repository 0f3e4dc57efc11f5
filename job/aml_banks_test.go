package job

import (
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/aml/bank"
	"graphfed/aml/worldgen"
	"graphfed/deploy"
)

func tinyWorld(t testing.TB, seed uint64, banks int, rows int64) *amlworld.Graph {
	t.Helper()
	cfg, err := worldgen.Preset(worldgen.Tiny, worldgen.HI, seed)
	if err != nil {
		t.Fatal(err)
	}
	if banks > 0 {
		cfg.Banks = banks
	}
	if rows > 0 {
		cfg.Transactions = rows
	}
	sum, err := worldgen.Generate(cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := amlworld.LoadTrans(sum.TransPath, amlworld.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The learner inputs of two banks agree on the accounts between them: what
// a releases to b (the global ids of a's accounts facing b) is exactly
// what b knows as a's accounts adjacent to its own.
func TestAMLDataBoundariesMeet(t *testing.T) {
	w := tinyWorld(t, 3, 0, 0)
	views, err := bank.SplitWorld(w, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]struct {
		v *bank.View
		d func() map[int64]string // global id of a foreign account -> its bank
	}{}
	for _, v := range views {
		d, err := deploy.AMLData(v)
		if err != nil {
			t.Fatal(err)
		}
		if d.Graph != v.Graph || d.First != v.Cut.First || d.Last != v.Cut.Last {
			t.Fatalf("%s: learner input is not the bank's view", v.ID)
		}
		data[v.ID] = struct {
			v *bank.View
			d func() map[int64]string
		}{v, func() map[int64]string {
			out := map[int64]string{}
			for a, bank := range d.Remote {
				out[d.Global[a]] = bank
			}
			return out
		}}
	}
	pairs := 0
	for _, a := range views {
		for to, accts := range a.Peers() {
			b, ok := data[to]
			if !ok {
				t.Fatalf("%s faces unknown bank %s", a.ID, to)
			}
			known := b.d()
			want := 0
			for _, bank := range known {
				if bank == a.ID {
					want++
				}
			}
			if len(accts) != want {
				t.Fatalf("%s faces %s with %d accounts, %s sees %d of %s's", a.ID, to, len(accts), to, want, a.ID)
			}
			for _, acct := range accts {
				if known[a.Global[acct]] != a.ID {
					t.Fatalf("%s's account %s (global %d) unknown to %s", a.ID, a.Graph.AccountIDs[acct], a.Global[acct], to)
				}
			}
			pairs++
		}
	}
	if pairs == 0 {
		t.Fatal("no bank faces another")
	}
}
