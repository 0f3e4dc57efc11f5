package lpsfed

import (
	"fmt"
	"testing"

	"graphfed/gnn"
)

// TestModelGradients checks every parameter's hand-written gradient of
// the batch loss against finite differences, for both losses, both MLP
// shapes, 1–3 layers, batches encoded by row gathers and by the whole
// graph, and with and without the server's margin.
func TestModelGradients(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		loss                 string
		layers, pool, pred   int
		users, items, batch  int
		global               bool
		wantGather, wantFull bool
		gamma                float64 // 0: the default
		fallback             bool
	}{
		{name: "bpr-affine-gather", loss: LossBPR, layers: 2, users: 30, items: 40, batch: 3, wantGather: true},
		{name: "bpr-hidden-full", loss: LossBPR, layers: 2, pool: 5, pred: 4, users: 6, items: 7, batch: 8, wantFull: true},
		{name: "bc-affine", loss: LossBC, layers: 2, users: 30, items: 40, batch: 3, wantGather: true},
		{name: "bc-hidden-global", loss: LossBC, layers: 2, pool: 6, pred: 3, users: 8, items: 9, batch: 6, global: true},
		{name: "bc-one-layer-global", loss: LossBC, layers: 1, users: 7, items: 6, batch: 5, global: true},
		{name: "bc-three-layers", loss: LossBC, layers: 3, pred: 2, users: 9, items: 8, batch: 4},
		// γ = 3 makes Eq. 8's guard bind for most positives.
		{name: "bc-fallback", loss: LossBC, layers: 2, users: 30, items: 40, batch: 6, wantGather: true, gamma: 3, fallback: true},
		{name: "bc-fallback-global", loss: LossBC, layers: 2, pred: 3, users: 8, items: 9, batch: 6, global: true, gamma: 3, fallback: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := newRNG(7)
			d := randomData(rng, tc.users, tc.items, 4, false)
			p, _ := denseEigen(t, d, min(6, d.Nodes()-1))
			cfg := DefaultConfig()
			cfg.Dim, cfg.Layers, cfg.PoolHidden, cfg.PredHidden, cfg.Loss = 4, tc.layers, tc.pool, tc.pred, tc.loss
			cfg.Negatives, cfg.Tau, cfg.Seed = 2, 0.5, 3
			cfg.InitStd = 0.5
			if tc.gamma > 0 {
				cfg.Gamma = tc.gamma
			}
			cfg.MarginFallback = tc.fallback
			m, err := NewModel(d, p, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m.InitShared(11)
			// Kernels away from the all-ones start, so that the products
			// κ_l are tested with distinct factors.
			for _, k := range m.enc.K {
				for i := range k.W.Data {
					k.W.Data[i] = float32(0.5 + rng.Float64())
				}
			}
			if tc.global {
				m.SetGlobalMargin(0.4)
			}
			var b pairs
			m.smp.epochBatches(tc.batch)
			m.smp.batch(&b, tc.batch, cfg.Negatives)
			m.forwardRows(&b)
			if gathered := m.enc.rows != nil; (tc.wantGather && !gathered) || (tc.wantFull && gathered) {
				t.Fatalf("batch encoded with gather=%v", gathered)
			}
			if m.pop != nil {
				// ξ̂ is a constant of the BC loss: hold it at its current value
				// so that differences in the popularity tables see only the
				// bias loss, as the analytic gradient does.
				m.fixedXi = make([]float64, len(b.User))
				for i := range b.User {
					m.fixedXi[i] = angle(m.pop.cos(b.User[i], b.Pos[i]))
				}
			}
			gnn.ZeroGrad(m.all)
			m.batchLoss(&b, true)
			loss := func() float64 { return m.batchLoss(&b, false) }
			for _, prm := range m.all {
				checkGrad(t, prm.Name, prm.W.Data, prm.G.Data, loss)
			}
		})
	}
}

// TestLowPassMatchesLayers compares the folded encoder with Eq. 3–4
// evaluated literally: Z⁽ˡ⁾ = P̄·diag(k⁽ˡ⁾)·P̄ᵀ·Z⁽ˡ⁻¹⁾ layer by layer, then
// tanh([Z⁽⁰⁾, Z⁽¹⁾, Z⁽²⁾]·W + b), on all rows and on a gathered subset.
func TestLowPassMatchesLayers(t *testing.T) {
	rng := newRNG(3)
	d := randomData(rng, 10, 12, 5, false)
	p, _ := denseEigen(t, d, 7)
	for _, hidden := range []int{0, 3} {
		t.Run(fmt.Sprintf("hidden=%d", hidden), func(t *testing.T) {
			lp, err := newLowPass(p, 4, 2, hidden, rng, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			lp.initShared(rng)
			for _, k := range lp.K {
				for i := range k.W.Data {
					k.W.Data[i] = float32(rng.NormFloat64())
				}
			}
			n, dim := p.Rows, 4
			zs := []*gnn.Tensor{lp.E.W}
			for l := range 2 {
				coef := gnn.New(p.Cols, dim)
				gnn.MatMulTN(coef, p, zs[l])
				for i := range p.Cols {
					for j := range dim {
						coef.Set(i, j, coef.At(i, j)*lp.K[l].W.Data[i])
					}
				}
				z := gnn.New(n, dim)
				gnn.MatMul(z, p, coef)
				zs = append(zs, z)
			}
			cat := gnn.New(n, 3*dim)
			for v := range n {
				for l, z := range zs {
					copy(cat.Row(v)[l*dim:(l+1)*dim], z.Row(v))
				}
			}
			want := gnn.New(n, lp.W1.W.Cols)
			gnn.MatMul(want, cat, lp.W1.W)
			gnn.AddBias(want, lp.B1.W)
			tanhInPlace(want)
			if hidden > 0 {
				h := want
				want = gnn.New(n, dim)
				gnn.MatMul(want, h, lp.W2.W)
				gnn.AddBias(want, lp.B2.W)
				tanhInPlace(want)
			}
			got := lp.forward(nil).Clone()
			assertClose(t, "all rows", got.Data, want.Data)
			rows := []int32{5, 0, 17, 3}
			sub := lp.forward(rows)
			for k, r := range rows {
				assertClose(t, fmt.Sprintf("row %d", r), sub.Row(k), want.Row(int(r)))
			}
		})
	}
}

func assertClose(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
