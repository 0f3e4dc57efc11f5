package gnn

import (
	"testing"

	"graphfed/graph"
)

// benchEdgeEpoch times one training epoch of the default 64-unit,
// 2-layer edge model on the training days of a synthetic 100k-edge AML
// world (10k accounts): sampling, features, forward, loss, backward and
// Adam for every batch of batchSize seed edges (all at once when 0) with
// the given fan-outs.
func benchEdgeEpoch(b *testing.B, kind string, batchSize int, fanOut []int) {
	c := smallWorld(5)
	c.Accounts, c.Normal, c.Attempts = 10_000, 99_300, 100
	g := genWorld(c)
	sp := g.TemporalSplit()
	var train []int32
	for e, s := range g.EdgeSplits(&sp) {
		if s == graph.SplitTrain {
			train = append(train, int32(e))
		}
	}
	st, err := NewEdgeStage(g, train, fanOut, NewEdgeFeaturizer(g))
	if err != nil {
		b.Fatal(err)
	}
	rng := newRNG(1)
	m, err := NewEdgeModel(DefaultEdgeConfig(kind), rng)
	if err != nil {
		b.Fatal(err)
	}
	tr := edgeTrainer{m: m, opt: NewAdam(m.Params(), 0.005), st: st, weights: []float32{1, 10}}
	if _, err := tr.epoch(train, batchSize, rng); err != nil { // warm the buffers
		b.Fatal(err)
	}
	b.ReportMetric(float64(g.NumEdges()), "edges")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := tr.epoch(train, batchSize, rng); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEdgeEpoch(b *testing.B) {
	for _, c := range []struct {
		name   string
		kind   string
		batch  int
		fanOut []int
	}{
		{"sage/batch2048/fan10x10", KindSAGE, 2048, []int{10, 10}},
		{"gin/batch2048/fan10x10", KindGIN, 2048, []int{10, 10}},
		{"gcn/batch2048/fan10x10", KindGCN, 2048, []int{10, 10}},
		{"sage/full", KindSAGE, 0, []int{-1, -1}},
	} {
		b.Run(c.name, func(b *testing.B) { benchEdgeEpoch(b, c.kind, c.batch, c.fanOut) })
	}
}
