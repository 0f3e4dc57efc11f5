package bank

import (
	"slices"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/aml/worldgen"
)

// genWorld generates a world into a temporary directory and loads it.
func genWorld(t testing.TB, size worldgen.Size, seed uint64, banks int, rows int64) (*amlworld.Graph, worldgen.Summary) {
	t.Helper()
	cfg, err := worldgen.Preset(size, worldgen.HI, seed)
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
	return w, sum
}

// Each bank's view is exactly the world's rows with an endpoint at the
// bank, in world order, as a graph sized by those rows; every row is seen
// by the banks of its endpoints and scored by one; splits are the world's.
func TestSplitBanksViews(t *testing.T) {
	for _, tc := range []struct {
		name  string
		seed  uint64
		banks int
	}{
		{"three banks", 3, 3},
		{"preset banks", 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := genWorld(t, worldgen.Tiny, tc.seed, tc.banks, 30_000)
			views, err := SplitWorld(w, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(views) != w.NumBanks() {
				t.Fatalf("%d views of %d banks", len(views), w.NumBanks())
			}
			ds := w.TemporalSplit()
			worldSplit := w.EdgeSplits(&ds)
			seen := make([]int, w.NumEdges())
			home := make([]int, w.NumEdges())
			cross := 0
			for b, v := range views {
				if v.Bank != w.BankIDs[b] || v.ID != "bank-"+w.BankIDs[b] {
					t.Fatalf("view %d is bank %q (%s), want %q", b, v.Bank, v.ID, w.BankIDs[b])
				}
				g := v.Graph
				if len(v.Owned) != g.NumAccounts() || len(v.Global) != g.NumAccounts() || g.NumAccounts() >= w.NumAccounts() {
					t.Fatalf("%s: %d owned flags, %d global ids for %d local of %d world accounts",
						v.ID, len(v.Owned), len(v.Global), g.NumAccounts(), w.NumAccounts())
				}
				// The local rows are the world's rows touching the bank, in order.
				k := 0
				for e := range w.Src {
					bs, bd := w.AccountBank[w.Src[e]], w.AccountBank[w.Dst[e]]
					if int(bs) != b && int(bd) != b {
						continue
					}
					if k >= g.NumEdges() {
						t.Fatalf("%s: %d rows, the world has more touching it", v.ID, g.NumEdges())
					}
					if g.Row(k) != w.Row(e) {
						t.Fatalf("%s: row %d is %+v, world row %d is %+v", v.ID, k, g.Row(k), e, w.Row(e))
					}
					if v.Split[k] != worldSplit[e] {
						t.Fatalf("%s: row %d split %v, the world's %v", v.ID, k, v.Split[k], worldSplit[e])
					}
					seen[e]++
					if v.Home[k] {
						home[e]++
						if int(bs) != b {
							t.Fatalf("%s scores row %d, sent by bank %s", v.ID, e, w.BankIDs[bs])
						}
					}
					k++
				}
				if k != g.NumEdges() {
					t.Fatalf("%s: %d rows, the world has %d touching it", v.ID, g.NumEdges(), k)
				}
				for a := range g.AccountIDs {
					bank := g.BankIDs[g.AccountBank[a]]
					if v.Owned[a] != (bank == v.Bank) || v.Global[a] != GlobalID(bank, g.AccountIDs[a]) {
						t.Fatalf("%s: account %s/%s owned %v, global %d", v.ID, bank, g.AccountIDs[a], v.Owned[a], v.Global[a])
					}
				}
				for a, id := range v.Remote() {
					if v.Owned[a] || id != ClientID(g.BankIDs[g.AccountBank[a]]) || id == v.ID {
						t.Fatalf("%s: remote account %d at %s", v.ID, a, id)
					}
				}
				peers := v.Peers()
				if !slices.Equal(v.Neighbours(), slices.Sorted(func(yield func(string) bool) {
					for id := range peers {
						if !yield(id) {
							return
						}
					}
				})) {
					t.Fatalf("%s: neighbours %v disagree with peers", v.ID, v.Neighbours())
				}
				for _, accts := range peers {
					if !slices.IsSorted(accts) {
						t.Fatalf("%s: facing accounts not ascending", v.ID)
					}
					for _, a := range accts {
						if !v.Owned[a] {
							t.Fatalf("%s: facing account %d not hosted here", v.ID, a)
						}
					}
				}
			}
			for e := range w.Src {
				want := 1
				if w.CrossBank(e) {
					want = 2
					cross++
				}
				if seen[e] != want || home[e] != 1 {
					t.Fatalf("row %d seen %d times (want %d), scored %d times (want 1)", e, seen[e], want, home[e])
				}
			}
			if cross == 0 {
				t.Fatal("no cross-bank row: the test shows nothing")
			}
		})
	}
}

// A world's cut-offs split every row as its day split does, and hold its
// time range.
func TestCutoffsOfWorld(t *testing.T) {
	w, _ := genWorld(t, worldgen.Tiny, 7, 4, 20_000)
	ds := w.TemporalSplit()
	c := amlworld.CutoffsOf(w)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.TrainEnd == 0 || ds.ValEnd == ds.TrainEnd || ds.ValEnd >= ds.Days() {
		t.Fatalf("degenerate split %d/%d of %d days", ds.TrainEnd, ds.ValEnd, ds.Days())
	}
	for e, want := range w.EdgeSplits(&ds) {
		if got := c.Of(w.Time[e]); got != want {
			t.Fatalf("row %d: cut-offs say %v, the day split %v", e, got, want)
		}
	}
	if c.First != slices.Min(w.Time) || c.Last != slices.Max(w.Time) {
		t.Fatalf("time range [%d, %d], world [%d, %d]", c.First, c.Last, slices.Min(w.Time), slices.Max(w.Time))
	}
}

func TestCutoffsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    amlworld.Cutoffs
		ok   bool
	}{
		{"zero", amlworld.Cutoffs{}, true},
		{"ordered", amlworld.Cutoffs{Origin: 86400, TrainEnd: 3 * 86400, ValEnd: 4 * 86400, First: 90000, Last: 400000}, true},
		{"reversed cut-offs", amlworld.Cutoffs{Origin: 0, TrainEnd: 2 * 86400, ValEnd: 86400}, false},
		{"before origin", amlworld.Cutoffs{Origin: 86400, TrainEnd: 0, ValEnd: 86400}, false},
		{"not whole days", amlworld.Cutoffs{Origin: 0, TrainEnd: 86399, ValEnd: 2 * 86400}, false},
		{"reversed range", amlworld.Cutoffs{First: 10, Last: 9}, false},
	} {
		if err := tc.c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %+v: error %v, want ok=%v", tc.name, tc.c, err, tc.ok)
		}
	}
}

// No two accounts of the demo world share a global id.
func TestGlobalIDsDistinctOnDemoWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the demo world")
	}
	w, _ := genWorld(t, worldgen.Demo, 1, 6, 0)
	seen := make(map[int64]int, w.NumAccounts())
	for a := range w.AccountIDs {
		id := GlobalID(w.BankIDs[w.AccountBank[a]], w.AccountIDs[a])
		if id < 0 {
			t.Fatalf("negative global id %d", id)
		}
		if prev, dup := seen[id]; dup {
			t.Fatalf("accounts %d and %d share global id %d", prev, a, id)
		}
		seen[id] = a
	}
	if len(seen) < 1000 {
		t.Fatalf("only %d accounts", len(seen))
	}
}

func TestGlobalID(t *testing.T) {
	// Leading zeros and the separator matter: none of these coincide.
	ids := map[int64]string{}
	for _, k := range [][2]string{{"010", "A"}, {"10", "A"}, {"0", "10A"}, {"01", "0A"}, {"010A", ""}, {"", "010A"}} {
		id := GlobalID(k[0], k[1])
		if prev, dup := ids[id]; dup {
			t.Fatalf("%q and %v share id %d", prev, k, id)
		}
		ids[id] = k[0] + "/" + k[1]
		if id != GlobalID(k[0], k[1]) || id < 0 {
			t.Fatalf("%v: id %d not stable or negative", k, id)
		}
	}
	// FNV-1a-64 of "010\x00A" (computed independently), sign bit cleared.
	if got, want := GlobalID("010", "A"), int64(fnv1a("010\x00A")&(1<<63-1)); got != want {
		t.Fatalf("GlobalID(010, A) = %d, want %d", got, want)
	}
}

func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// A view refuses rows that do not touch the bank and accounts of another
// bank.
func TestNewBankViewRefuses(t *testing.T) {
	g := amlworld.NewGraph("X")
	g.AddRow(&amlworld.TxRow{Time: 1, FromBank: "1", FromAccount: "A", ToBank: "2", ToAccount: "B"})
	if _, err := NewView("3", g, amlworld.Cutoffs{}, nil); err == nil {
		t.Fatal("bank 3 accepted a row between banks 1 and 2")
	}
	if _, err := NewView("1", g, amlworld.Cutoffs{}, []amlworld.Account{{BankID: "2", Account: "B", EntityID: "E"}}); err == nil {
		t.Fatal("bank 1 accepted bank 2's account")
	}
	if _, err := NewView("1", g, amlworld.Cutoffs{TrainEnd: 5}, nil); err == nil {
		t.Fatal("bank 1 accepted cut-offs off whole days")
	}
	v, err := NewView("2", g, amlworld.Cutoffs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Home[0] || !v.Owned[1] || v.Owned[0] {
		t.Fatalf("bank 2: home %v, owned %v", v.Home, v.Owned)
	}
}
