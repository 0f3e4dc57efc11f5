package cefedgnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"graphfed/gnn"
	"graphfed/graph"
)

// loadCoraCopy loads the shared Cora, else the copy the repository ships
// in examples/data/cora, and skips when neither is there.
func loadCoraCopy(t *testing.T) *graph.Dataset {
	t.Helper()
	var errs []error
	for _, dir := range []string{coraDir, "../examples/data/cora"} {
		d, err := graph.LoadTSV(dir)
		if err == nil {
			return d
		}
		errs = append(errs, err)
	}
	t.Skipf("Cora is in neither ../../shared/datasets/cora nor ../examples/data/cora: %v", errs)
	return nil
}

// TestCEFedCoraPooledCounts runs Algorithm 1 in memory for a few rounds on
// Cora cut into 16 Louvain clients (the partition `graphfed sim --clients
// 16 --partition louvain --seed 1` makes) and checks the per-class counts
// the clients report: they cover the 1000 test nodes once, reproduce the
// pooled accuracy and each client's own macro-F1, and the macro-F1 they
// pool to lies far above the mean of the clients' macro-F1. The gap is
// structural: most clients hold three to six classes in their test nodes,
// some with one or two nodes each, so one miss zeroes a class of a
// client's mean while the pool puts every class on about a hundred nodes.
// About 1 s.
func TestCEFedCoraPooledCounts(t *testing.T) {
	d := loadCoraCopy(t)
	const clients = 16
	owner, err := graph.PartitionLouvain(d.Adj, clients, rand.New(rand.NewPCG(1, 0x9a27)))
	if err != nil {
		t.Fatal(err)
	}
	cgs, err := graph.SplitByOwner(d, owner, clients)
	if err != nil {
		t.Fatal(err)
	}
	peers := make([]string, clients)
	for i := range peers {
		peers[i] = fmt.Sprintf("client-%d", i)
	}
	cfg := DefaultConfig()
	cfg.Seed = 1
	res := cefedSimulate(t, cgs, peers, cfg, 4, 8, true)

	tp, fp, fn := make([]float64, d.Classes), make([]float64, d.Classes), make([]float64, d.Classes)
	var n, correct, meanF1 float64
	for i, l := range res.learners {
		ev := l.Evaluate()
		own := make([]int, 3*d.Classes)
		for k := range d.Classes {
			c := []float64{ev[ClassCountKey("test_", k, "tp")], ev[ClassCountKey("test_", k, "fp")], ev[ClassCountKey("test_", k, "fn")]}
			tp[k], fp[k], fn[k] = tp[k]+c[0], fp[k]+c[1], fn[k]+c[2]
			own[k], own[d.Classes+k], own[2*d.Classes+k] = int(c[0]), int(c[1]), int(c[2])
		}
		if got := macroFromCounts(own[:d.Classes], own[d.Classes:2*d.Classes], own[2*d.Classes:]); math.Abs(got-ev["test_macro_f1"]) > 1e-12 {
			t.Fatalf("client %d: macro-F1 of its counts %v, reported %v", i, got, ev["test_macro_f1"])
		}
		n += ev["test_n"]
		correct += math.Round(ev["test_acc"] * ev["test_n"])
		meanF1 += ev["test_macro_f1"] / clients
	}
	var sumTP, sumFN, pooled float64
	for k := range d.Classes {
		sumTP, sumFN = sumTP+tp[k], sumFN+fn[k]
		pooled += gnn.F1(tp[k], fp[k], fn[k]) / float64(d.Classes) // every class occurs in Cora's test nodes
	}
	if n != 1000 || sumTP+sumFN != 1000 || sumTP != correct {
		t.Fatalf("test nodes %v, counted %v (tp %v + fn %v), correct %v: want 1000 counted once and tp = correct", n, sumTP+sumFN, sumTP, sumFN, correct)
	}
	t.Logf("Cora/louvain-16, 4 rounds × 8 steps: pooled accuracy %.4f, pooled macro-F1 %.4f, mean of the clients' macro-F1 %.4f",
		sumTP/n, pooled, meanF1)
	if pooled < meanF1+0.15 {
		t.Fatalf("pooled macro-F1 %.4f, mean of the clients' %.4f: want the pool at least 0.15 above", pooled, meanF1)
	}
}
