package lightgcn

import (
	"testing"

	"graphfed/gnn"
	"graphfed/workload/rec"
)

// BenchmarkGowallaStep is one BPR step at the paper's setting (batch
// 2048, 64 dimensions, 3 layers) on Gowalla; an epoch is 396 of them.
func BenchmarkGowallaStep(b *testing.B) {
	d := loadGowalla(b)
	cfg := DefaultConfig()
	m, err := New(d.Train, cfg)
	if err != nil {
		b.Fatal(err)
	}
	smp := newSampler(d.Train, 1)
	users, pos, neg := make([]int32, cfg.Batch), make([]int32, cfg.Batch), make([]int32, cfg.Batch)
	b.ReportAllocs()
	for b.Loop() {
		smp.fill(users, pos, neg)
		if _, err := m.Step(users, pos, neg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGowallaSpMM is one full propagation layer Â·E on Gowalla (1.6M
// stored entries × 64 columns), the unit of a step's cost.
func BenchmarkGowallaSpMM(b *testing.B) {
	d := loadGowalla(b)
	a, err := NormalizedAdjacency(d.Train)
	if err != nil {
		b.Fatal(err)
	}
	x, y := gnn.New(a.Rows, 64), gnn.New(a.Rows, 64)
	for i := range x.Data {
		x.Data[i] = float32(i%7) * 0.1
	}
	b.ReportAllocs()
	for b.Loop() {
		gnn.SpMM(y, a, x)
	}
}

// BenchmarkGowallaEvaluate is one full-ranking evaluation of every
// Gowalla test user.
func BenchmarkGowallaEvaluate(b *testing.B) {
	d := loadGowalla(b)
	m, err := New(d.Train, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.Evaluate(d.Test); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepGenerated is one step at the paper's setting on a
// generated dataset of 1,900 users × 4,500 items (workload/rec's
// default), for machines without the shared data.
func BenchmarkStepGenerated(b *testing.B) {
	d, err := rec.Generate(rec.DefaultGenConfig())
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	m, err := New(d.Train, cfg)
	if err != nil {
		b.Fatal(err)
	}
	smp := newSampler(d.Train, 1)
	users, pos, neg := make([]int32, cfg.Batch), make([]int32, cfg.Batch), make([]int32, cfg.Batch)
	b.ReportAllocs()
	for b.Loop() {
		smp.fill(users, pos, neg)
		if _, err := m.Step(users, pos, neg); err != nil {
			b.Fatal(err)
		}
	}
}
