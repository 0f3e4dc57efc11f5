package job

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"graphfed/workload/rec"
)

func TestSelectRecRound(t *testing.T) {
	sc := func(val, test float64) map[string]float64 {
		return map[string]float64{"val_recall_at_20": val, "val_ndcg_at_20": val / 2, "recall_at_20": test, "ndcg_at_20": test / 2, "eval_users": 10}
	}
	two := func(a, b map[string]float64) map[string]map[string]float64 {
		return map[string]map[string]float64{"client-0": a, "client-1": b}
	}
	for _, tc := range []struct {
		name      string
		perRound  map[uint64]map[string]map[string]float64
		final     map[string]map[string]float64
		wantRound int
		wantTest  float64
		wantOK    bool
	}{
		{"final is best", map[uint64]map[string]map[string]float64{1: two(sc(0, 0), sc(0, 0)), 3: two(sc(0.1, 0.2), sc(0.1, 0.2))},
			two(sc(0.3, 0.4), sc(0.3, 0.2)), 4, 0.3, true},
		// Round k's model is the one round k+1 started from.
		{"a middle round", map[uint64]map[string]map[string]float64{1: two(sc(0, 0), sc(0, 0)), 3: two(sc(0.5, 0.1), sc(0.3, 0.3))},
			two(sc(0.3, 0.4), sc(0.3, 0.2)), 2, 0.2, true},
		{"the earliest of a tie", map[uint64]map[string]map[string]float64{2: two(sc(0.3, 0.1), sc(0.3, 0.1))},
			two(sc(0.3, 0.4), sc(0.3, 0.4)), 1, 0.1, true},
		// A round without every client's validation score is not a candidate.
		{"needs every client", map[uint64]map[string]map[string]float64{2: {"client-0": sc(0.9, 0.9)}},
			two(sc(0.3, 0.4), sc(0.3, 0.2)), 4, 0.3, true},
		{"no validation scores", nil, two(map[string]float64{"recall_at_20": 0.1}, map[string]float64{"recall_at_20": 0.1}), 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, ok := selectRecRound(tc.perRound, tc.final, 4, 2)
			if ok != tc.wantOK {
				t.Fatalf("ok %v, want %v (%+v)", ok, tc.wantOK, sel)
			}
			if !ok {
				return
			}
			if sel.Round != tc.wantRound || math.Abs(sel.Recall-tc.wantTest) > 1e-12 {
				t.Fatalf("round %d test recall %v, want round %d, %v (%+v)", sel.Round, sel.Recall, tc.wantRound, tc.wantTest, sel)
			}
			if !(sel.FinalRecall > 0) || sel.By != recSelectKey || len(sel.Curve) == 0 || sel.Curve[len(sel.Curve)-1].Round != 4 {
				t.Fatalf("selection %+v", sel)
			}
		})
	}
}

// SplitRec writes the clients RunRec trains for the same options: one
// rec.Split behind both (RecSplitOptions), here on a generated dataset
// with the paper's holdout and a second partitioning.
func TestSplitRecMatchesRunRecClients(t *testing.T) {
	dir := t.TempDir()
	c := rec.DefaultGenConfig()
	c.Users, c.Items = 400, 700
	d, err := rec.Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteLightGCN(dir); err != nil {
		t.Fatal(err)
	}
	pseed, seed := uint64(3), uint64(8)
	spec := RecSpec{Dir: dir, Clients: 3, Seed: &seed,
		Protocol: RecProtocol{Split: "random:0.8,0.1,0.1", SplitSeed: 5, Partitioning: 1, PartitionSeed: &pseed}}
	opts, err := RecSplitOptions(spec)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := rec.Split(d, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "clients")
	split := DefaultSplitRecSpec()
	split.LightGCN, split.Out, split.Clients, split.Seed = dir, out, 3, pseed
	split.Protocol, split.Partitionings = RecProtocol{Split: "random:0.8,0.1,0.1", SplitSeed: 5}, 2
	r, err := SplitRec(context.Background(), split)
	if err != nil {
		t.Fatal(err)
	}
	parts := r.Metrics["partitionings"].(map[string]any)
	if s := parts[PartitioningDir(1)].(map[string]any)["same_client_as_0"].(float64); !(s < 1) {
		t.Fatalf("partitioning 1 agrees with 0 on %v of the users", s)
	}
	for _, cl := range want {
		cdir := filepath.Join(out, PartitioningDir(1), cl.ID)
		got, err := rec.LoadClient(cdir)
		if err != nil {
			t.Fatal(err)
		}
		val, err := rec.LoadValidation(cdir, got)
		if err != nil || val == nil {
			t.Fatalf("%s: validation %v, %v", cl.ID, val, err)
		}
		for _, m := range [][2][]int32{{got.Train.ColIdx, cl.Data.Train.ColIdx}, {got.Test.ColIdx, cl.Data.Test.ColIdx}, {val.ColIdx, cl.Val.ColIdx}} {
			if !slices.Equal(m[0], m[1]) {
				t.Fatalf("%s: split rec and sim --lightgcn build different clients", cl.ID)
			}
		}
		if got.Users != cl.Data.Users || got.Items != cl.Data.Items || !slices.Equal(got.Train.RowPtr, cl.Data.Train.RowPtr) {
			t.Fatalf("%s: %dx%d, want %dx%d", cl.ID, got.Users, got.Items, cl.Data.Users, cl.Data.Items)
		}
	}
	if _, err := SplitRec(context.Background(), SplitRecSpec{LightGCN: dir, Out: out, Partitionings: 2,
		SplitOptions: rec.SplitOptions{Clients: 3, Partitioning: 1}}); err == nil {
		t.Fatal("--partitionings with --partitioning accepted")
	}
	for _, bad := range []RecSpec{{Protocol: RecProtocol{Split: "random:0.8,0.1,0.1"}, Validation: 0.2},
		{Protocol: RecProtocol{Split: "random:0.8,0.1"}}, {Protocol: RecProtocol{Partitioning: -1}}} {
		if _, err := RecSplitOptions(bad); err == nil {
			t.Fatalf("protocol %+v (validation %v) accepted", bad.Protocol, bad.Validation)
		}
	}
}
