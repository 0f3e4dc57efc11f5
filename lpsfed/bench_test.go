package lpsfed

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"

	"graphfed/gnn"
)

// benchModel is a client of Gowalla's per-client size under 4 spectral
// clients (client-0 of the issue-6 run: 7.7k users, 24k items, ≈245k
// interactions) with Φ = 128, d = 64 and held-out items for evaluation.
// The eigenvectors are random: the cost does not depend on their values.
func benchModel(b *testing.B, loss string, batch, evalUsers int) *Model {
	b.Helper()
	rng := newRNG(1)
	d := benchData(rng, 7700, 24000, 63)
	p := gnn.New(d.Nodes(), 128)
	normalFill(p, 0.01, rng)
	cfg := DefaultConfig()
	cfg.Loss, cfg.BatchSize, cfg.EvalUsers = loss, batch, evalUsers
	m, err := NewModel(d, p, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// cpuNs is the process's user and system CPU time so far: on the shared
// development machine wall time per op depends on the load, CPU time per
// op much less, so benchmarks report both (cpu-ns/op via reportCPU).
func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// timeCPU resets b's timer and returns a function that reports the CPU
// time per op since then; call it before b's loop ends its last op.
func timeCPU(b *testing.B) func() {
	b.Helper()
	b.ResetTimer()
	start := cpuNs()
	return func() { b.ReportMetric(float64(cpuNs()-start)/float64(b.N), "cpu-ns/op") }
}

// benchData is randomData without its per-user permutation of all
// items, which would dominate the set-up at this size: every user gets 1
// to maxDeg distinct training items and up to 2 held-out ones.
func benchData(rng *rand.Rand, users, items, maxDeg int) *Data {
	d := &Data{Users: users, Items: items, Train: make([][]int32, users), Test: make([][]int32, users)}
	seen := make(map[int32]bool)
	for u := range users {
		clear(seen)
		deg, test := 1+rng.IntN(maxDeg), rng.IntN(3)
		var all []int32
		for len(all) < deg+test {
			if i := int32(rng.IntN(items)); !seen[i] {
				seen[i] = true
				all = append(all, i)
			}
		}
		d.Train[u] = slices.Sorted(slices.Values(all[:deg]))
		d.Test[u] = slices.Sorted(slices.Values(all[deg:]))
	}
	_, deg := d.Degrees()
	for i, g := range deg {
		if g == 0 { // no isolated items: give each a user
			u := rng.IntN(users)
			d.Test[u] = slices.DeleteFunc(d.Test[u], func(x int32) bool { return x == int32(i) })
			d.Train[u] = slices.Sorted(slices.Values(append(d.Train[u], int32(i))))
		}
	}
	return d
}

// BenchmarkTrainStep is one training step (sample, forward, loss,
// backward, RMSProp) on benchModel; bc-16384 is the issue-6 Gowalla
// command's step.
func BenchmarkTrainStep(b *testing.B) {
	for _, bc := range []struct {
		name  string
		batch int
		loss  string
	}{{"bpr-2048", 2048, LossBPR}, {"bc-2048", 2048, LossBC}, {"bc-16384", 16384, LossBC}} {
		b.Run(bc.name, func(b *testing.B) {
			m := benchModel(b, bc.loss, bc.batch, 0)
			var pr pairs
			m.smp.epochBatches(bc.batch)
			done := timeCPU(b)
			for range b.N {
				if m.smp.next >= len(m.smp.order) {
					m.smp.epochBatches(bc.batch)
				}
				m.smp.batch(&pr, bc.batch, m.cfg.Negatives)
				gnn.ZeroGrad(m.all)
				m.batchLoss(&pr, true)
				m.opt.Step()
			}
			done()
		})
	}
}

// BenchmarkStepParts times the parts of one bc-16384 step on benchModel:
// the encoder's forward and backward over all nodes (the P̄ᵀE, P̄·C,
// P̄ᵀ·dPre and P̄·dA products), the predictor's pair scores and their
// backward, and the BC loss with the popularity branch.
func BenchmarkStepParts(b *testing.B) {
	m := benchModel(b, LossBC, 16384, 0)
	var pr pairs
	m.smp.epochBatches(16384)
	m.smp.batch(&pr, 16384, m.cfg.Negatives)
	gnn.ZeroGrad(m.all)
	m.batchLoss(&pr, true) // sizes every workspace
	z := m.enc.forward(nil)
	b.Run("encoder-forward", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.enc.forward(nil)
		}
		done()
	})
	// The encoder's two kinds of large product: P̄·C (gather kernel) and
	// P̄ᵀ·E (scatter kernel), n×128 by 128×64 and (n×128)ᵀ by n×64.
	b.Run("matmul-P·C", func(b *testing.B) {
		out := gnn.New(m.enc.P.Rows, m.enc.c.Cols)
		done := timeCPU(b)
		for range b.N {
			gnn.MatMul(out, m.enc.P, m.enc.c)
		}
		done()
	})
	b.Run("matmul-Pᵀ·E", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			gnn.MatMulTN(m.enc.a, m.enc.P, m.enc.E.W)
		}
		done()
	})
	dz := gnn.New(z.Rows, z.Cols)
	normalFill(dz, 1e-3, newRNG(2))
	b.Run("encoder-backward", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.enc.backward(dz)
		}
		done()
	})
	z = m.forwardRows(&pr)
	m.pred.prepare(z)
	b.Run("pred-forward", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.pred.forward(z, m.pu, m.pi, m.s)
		}
		done()
	})
	b.Run("pred-backward", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.pred.backward(z, m.pu, m.pi, m.ds, dz)
		}
		done()
	})
	// The reference one-pair-at-a-time loops the affine ones replace.
	b.Run("pred-forward-ref", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.pred.forwardPairs(z, m.pu, m.pi, m.s)
		}
		done()
	})
	b.Run("pred-pairs-backward-ref", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.pred.backwardPairs(z, m.pu, m.pi, m.ds, dz)
		}
		done()
	})
	b.Run("pred-pairs-backward", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.pred.backwardAffine(z, m.pu, m.pi, m.ds, dz)
		}
		done()
	})
	b.Run("bc-loss", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.bcLoss(&pr, true)
		}
		done()
	})
	b.Run("rmsprop", func(b *testing.B) {
		done := timeCPU(b)
		for range b.N {
			m.opt.Step()
		}
		done()
	})
}

// BenchmarkEvaluate is the full ranking of 1024 test users over all 24k
// items of benchModel (Recall@20 and NDCG@20).
func BenchmarkEvaluate(b *testing.B) {
	m := benchModel(b, LossBC, 16384, 1024)
	done := timeCPU(b)
	for range b.N {
		m.Evaluate()
	}
	done()
}
