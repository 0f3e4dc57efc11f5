package gnn

import (
	"math/rand/v2"
	"testing"

	"graphfed/graph"
)

// benchEpoch times one full-batch training epoch (forward with dropout,
// loss, backward, weight decay, Adam step) of a 2-layer model with 16
// hidden units on Cora with row-normalized sparse features.
func benchEpoch(b *testing.B, kind string) {
	d := loadCora(b)
	in, err := NewInput(kind, d.Adj, graph.RowNormalize(d.Features))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := NewModel(ModelConfig{Kind: kind, In: d.NumFeatures(), Hidden: 16, Classes: d.Classes, Dropout: 0.5}, rng)
	if err != nil {
		b.Fatal(err)
	}
	train := SplitMask(d.Split, graph.SplitTrain)
	t := Trainer{Model: m, Opt: NewAdam(m.Params(), 0.01), WeightDecay: 5e-4}
	t.Step(in, d.Labels, train, rng) // warm the buffers
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t.Step(in, d.Labels, train, rng)
	}
}

func BenchmarkGCNEpochCora(b *testing.B)  { benchEpoch(b, KindGCN) }
func BenchmarkSAGEEpochCora(b *testing.B) { benchEpoch(b, KindSAGE) }
