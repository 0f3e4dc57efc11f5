package fedgsp

import "testing"

// BenchmarkTrainStepChameleonClient times one Train(1) call — a full-batch
// step on the training nodes plus the val/test scoring FedGSP runs after it
// — on a client the size of one of 10 METIS parts of chameleon (≈228 nodes,
// 2,325 sparse binary features), with the authors' heterophilic settings
// (K=10, 512×3).
func BenchmarkTrainStepChameleonClient(b *testing.B) {
	ds := randomDataset(b, newRNG(1), 228, 2325, 5, 1400, true)
	cfg := DefaultConfig()
	cfg.Orders, cfg.Tau = 10, 0.7
	l, err := NewLearner(ds, cfg)
	if err != nil {
		b.Fatal(err)
	}
	l.Init(1)
	b.ResetTimer()
	for b.Loop() {
		l.Train(1)
	}
}

// BenchmarkDescriptorsActorCut times one client's descriptors (the bases'
// principal directions, released once per job) on the subgraph of actor's
// first 760 nodes (the size of one of 10 METIS parts, 932 sparse binary
// features), with the authors' heterophilic settings (K=10): n < d, so
// each order's Gram matrix is 760×760.
func BenchmarkDescriptorsActorCut(b *testing.B) {
	ds := cut(b, sharedDataset(b, "actor"), 760)
	cfg, _ := Preset("heterophilic")
	for b.Loop() {
		l, err := NewLearner(ds, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := l.Descriptors(); !ok {
			b.Fatal("no descriptors")
		}
	}
}
