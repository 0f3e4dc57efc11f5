package lpsfed

import (
	"testing"

	"graphfed/gnn"
)

// BenchmarkTrainStep is one training step on a client of Gowalla's
// per-client size under 4 spectral clients (≈7.5k users, 10k items, 200k
// interactions) with Φ = 128, d = 64. The eigenvectors are random: the
// cost does not depend on their values.
func BenchmarkTrainStep(b *testing.B) {
	for _, bc := range []struct {
		name  string
		batch int
		loss  string
	}{{"bpr-2048", 2048, LossBPR}, {"bc-2048", 2048, LossBC}, {"bpr-8192", 8192, LossBPR}} {
		b.Run(bc.name, func(b *testing.B) {
			rng := newRNG(1)
			d := randomData(rng, 7500, 10000, 50, false)
			p := gnn.New(d.Nodes(), 128)
			normalFill(p, 0.01, rng)
			cfg := DefaultConfig()
			cfg.Loss, cfg.BatchSize = bc.loss, bc.batch
			m, err := NewModel(d, p, cfg)
			if err != nil {
				b.Fatal(err)
			}
			var pr pairs
			m.smp.epochBatches(cfg.BatchSize)
			b.ResetTimer()
			for range b.N {
				if m.smp.next >= len(m.smp.order) {
					m.smp.epochBatches(cfg.BatchSize)
				}
				m.smp.batch(&pr, cfg.BatchSize, cfg.Negatives)
				gnn.ZeroGrad(m.all)
				m.batchLoss(&pr, true)
				m.opt.Step()
			}
		})
	}
}
