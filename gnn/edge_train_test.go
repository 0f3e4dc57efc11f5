package gnn

import (
	"testing"

	"graphfed/graph"
)

// TestTrainEdgeClassifierLearns trains the centralised baseline on a small
// synthetic AML world and checks that the laundering-class F1 on the test
// days is clearly above the trivial classifier that flags every edge.
func TestTrainEdgeClassifierLearns(t *testing.T) {
	g := genWorld(smallWorld(1))
	sp := g.TemporalSplit()
	splits := g.EdgeSplits(&sp)
	pos, n := 0, 0
	for e, s := range splits {
		if s == graph.SplitTest {
			n++
			pos += int(g.Label[e])
		}
	}
	trivial := 2 * float64(pos) / float64(n+pos) // F1 of flagging everything
	for _, kind := range []string{KindSAGE, KindGIN, KindGCN} {
		t.Run(kind, func(t *testing.T) {
			cfg := DefaultEdgeTrainConfig(kind)
			cfg.Model.Hidden = 32
			cfg.Epochs = 8
			cfg.BatchSize = 512
			_, h, err := TrainEdgeClassifier(g, cfg, newRNG(3))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: best epoch %d val %v test %v (trivial F1 %.3f, %d/%d positive)", kind, h.BestEpoch, h.Val, h.Test, trivial, pos, n)
			// Measured: sage 0.71, gin 0.75, gcn 0.49 (trivial 0.08).
			if h.Test.F1 < 0.3 || h.Test.F1 < 4*trivial {
				t.Fatalf("test F1 %.3f, trivial %.3f", h.Test.F1, trivial)
			}
		})
	}
}
