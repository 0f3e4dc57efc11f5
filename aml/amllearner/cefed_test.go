package amllearner

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"graphfed/aml/edgegnn"
	"graphfed/gnn"
)

// amlFirstBank is a learner on the first bank of the small two-bank world.
func amlFirstBank(t *testing.T, cfg Config) *Learner {
	t.Helper()
	banks := amlBanks(t)
	cfg.Hidden, cfg.BatchSize, cfg.FanOut, cfg.Seed = 8, 64, []int{3, 3}, 1
	l, err := New(banks[slices.Sorted(maps.Keys(banks))[0]], cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Eq. 5 at every layer: after a training forward pass the stored H̃^1 of a
// boundary account is (1−γ)·H̃^1 + γ·Z^1 with Z^1 the fresh pre-activation
// (layer 1 reads only inputs, so Z^1 is exact); an account without a
// history takes Z^1; γ = 1 keeps no history.
func TestAMLEstimatorGamma(t *testing.T) {
	base := amlFirstBank(t, Config{Release: ReleaseHidden})
	for _, gamma := range []float64{0.1, 0.5, 0.9, 1} {
		l := *base
		l.cfg.Gamma = gamma
		l.own = map[int32]*estimate{}
		var b edgegnn.Batch
		if _, err := l.trainSt.Batch(&b, l.train[:64], nil, rand.New(rand.NewPCG(3, 4))); err != nil {
			t.Fatal(err)
		}
		l.model.Forward(&b, nil, false, nil)
		H := l.cfg.Hidden
		fresh := l.model.PreActivations(1).Clone()
		// Half of the boundary accounts in the batch have a history.
		prev := map[int32][]float32{}
		for r, v := range b.Nodes[:b.NumNodes[1]] {
			if l.facing[v] && r%2 == 0 {
				h := make([]float32, 2*H)
				for j := range h {
					h[j] = float32(j%5) - 2
				}
				l.own[v] = &estimate{h: h, seen: 3}
				prev[v] = slices.Clone(h[:H])
			}
		}
		if len(prev) == 0 {
			t.Fatal("no boundary account in the batch")
		}
		l.model.Forward(&b, l.layerOverrides(&b, true), false, nil)
		l.recordLayers(l.model, &b)
		checked := 0
		for r, v := range b.Nodes[:b.NumNodes[1]] {
			if !l.facing[v] {
				continue
			}
			got := l.own[v].h[:H]
			for j, z := range fresh.Row(r) {
				want := z
				if p, ok := prev[v]; ok {
					want = float32(1-gamma)*p[j] + float32(gamma)*z
				}
				if math.Abs(float64(got[j]-want)) > 1e-5 {
					t.Fatalf("γ=%v: account %d H̃^1[%d] = %v, want %v", gamma, v, j, got[j], want)
				}
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("γ=%v: nothing checked", gamma)
		}
	}
}

// Eq. 9 and line 18: G ← (1−β)·G + β·∇, W ← W − η·G, with ∇ scaled to
// norm at most GradClip.
func TestAMLEstimatorBeta(t *testing.T) {
	for _, tc := range []struct{ beta, eta, clip float64 }{{0.9, 0.2, 1e9}, {1, 0.5, 1e9}, {0.3, 0.01, 1e9}, {0.9, 0.2, 1}, {0.5, 0.1, 3}} {
		l := amlFirstBank(t, Config{Opt: OptCEFed, Beta: tc.beta, Eta: tc.eta, GradClip: tc.clip})
		ps := l.model.Params()
		g0 := make([]float32, len(l.est))
		for i := range g0 {
			g0[i] = float32(i%7) - 3
		}
		copy(l.est, g0)
		w0 := gnn.Flatten(ps)
		off := 0
		for _, p := range ps {
			for i := range p.G.Data {
				p.G.Data[i] = float32((off+i)%3) - 1
			}
			off += len(p.G.Data)
		}
		grad := make([]float32, 0, len(g0))
		for _, p := range ps {
			grad = append(grad, p.G.Data...)
		}
		scale := min(1, tc.clip/norm32(grad))
		if tc.clip < 1e9 && scale == 1 {
			t.Fatalf("clip %v does not bind on ‖∇‖ = %v", tc.clip, norm32(grad))
		}
		l.sgdStep()
		w1 := gnn.Flatten(ps)
		for i := range g0 {
			wantG := float32(1-tc.beta)*g0[i] + float32(tc.beta*scale)*grad[i]
			if math.Abs(float64(l.est[i]-wantG)) > 1e-6 {
				t.Fatalf("β=%v: G[%d] = %v, want %v", tc.beta, i, l.est[i], wantG)
			}
			if want := w0[i] - float32(tc.eta)*wantG; math.Abs(float64(w1[i]-want)) > 1e-6 {
				t.Fatalf("β=%v η=%v: W[%d] = %v, want %v", tc.beta, tc.eta, i, w1[i], want)
			}
		}
	}
}

func TestAMLSetGrad(t *testing.T) {
	l := amlFirstBank(t, Config{Opt: OptCEFed, ShareGrad: true})
	n := l.NumParams()
	good := make([]float32, n)
	good[3] = 0.5
	for _, tc := range []struct {
		name string
		g    []float32
		ok   bool
	}{
		{"NumParams values", good, true},
		{"short", good[1:], false},
		{"long", append(slices.Clone(good), 0), false},
		{"empty", nil, false},
		{"NaN", func() []float32 { g := slices.Clone(good); g[0] = float32(math.NaN()); return g }(), false},
		{"Inf", func() []float32 { g := slices.Clone(good); g[n-1] = float32(math.Inf(-1)); return g }(), false},
	} {
		before := l.Grad()
		err := l.SetGrad(tc.g)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
		if !tc.ok && !slices.Equal(l.Grad(), before) {
			t.Errorf("%s: a refused vector changed G", tc.name)
		}
	}
	if g := l.Grad(); !slices.Equal(g, good) {
		t.Fatal("G is not the loaded vector")
	}
	// A learner that shares no estimator releases none and loads none.
	for _, cfg := range []Config{{Opt: OptAdam, ShareGrad: true}, {Opt: OptCEFed}} {
		l := amlFirstBank(t, cfg)
		if g := l.Grad(); g != nil {
			t.Errorf("%+v: Grad of %d values, want none", cfg, len(g))
		}
		if err := l.SetGrad(good); err == nil {
			t.Errorf("%+v: SetGrad accepted", cfg)
		}
	}
}

// A released row has unit norm with each layer's share 1/L; unpacking a
// noiseless message restores each layer's norm relative to the sender's
// mean and its direction, a noisy one is marked unreliable.
func TestAMLPackUnpack(t *testing.T) {
	const L, H = 3, 4
	scale := []float64{2.5, 1, 0 /* no mean yet: 1 */}
	h := []float32{3, 0, 4, 0 /* norm 5: 2 means */, 0, 0, 0, 0 /* zero layer */, 1, 1, 1, 1 /* norm 2 */}
	lay := uniformLayout(L, H)
	row := packEstimate(nil, h, scale, lay)
	if len(row) != L*(H+1) {
		t.Fatalf("row width %d, want L·(H+1) = %d", len(row), L*(H+1))
	}
	if n := norm32(row); math.Abs(n-1) > 1e-6 {
		t.Fatalf("row norm %v, want 1", n)
	}
	for k := range L {
		if n := norm32(row[k*(H+1) : (k+1)*(H+1)]); math.Abs(n-1/math.Sqrt(L)) > 1e-6 {
			t.Fatalf("layer %d norm %v, want 1/√L", k, n)
		}
	}
	two := slices.Concat(row, row)
	alpha := releaseAlpha(two, 2, lay)
	want := []float32{0.6 * 2, 0, 0.8 * 2, 0, 0, 0, 0, 0, 1, 1, 1, 1}
	got := make([]float32, L*H)
	for i := range 2 {
		decodeRelease(got, two[i*L*(H+1):(i+1)*L*(H+1)], alpha, lay)
		for j, w := range want {
			if g := got[j]; math.Abs(float64(g-w)) > 1e-5 {
				t.Fatalf("row %d value %d: %v, want %v (direction × norm/mean)", i, j, g, w)
			}
		}
	}
	for k, a := range alpha {
		if math.Abs(float64(a)-1) > 1e-5 {
			t.Fatalf("clean layer %d reliability %v, want 1", k, a)
		}
	}
	// A norm far beyond the sender's mean reads as maxReleasedNorm.
	huge := packEstimate(nil, []float32{1e4, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, []float64{1, 1, 1}, lay)
	decodeRelease(got, huge, []float32{1, 1, 1}, lay)
	if g := got[0]; math.Abs(float64(g)-maxReleasedNorm) > 1e-3 {
		t.Fatalf("huge norm read as %v, want the cap %v", g, maxReleasedNorm)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := slices.Concat(row, row)
	for i := range noisy {
		noisy[i] += float32(rng.NormFloat64())
	}
	alpha = releaseAlpha(noisy, 2, lay)
	decodeRelease(got, noisy[:L*(H+1)], alpha, lay)
	for k := range L {
		// shrunk toward the mean norm 1 by α: at most α·8 + 1 − α
		if n := norm32(got[k*H : (k+1)*H]); n > float64(alpha[k])*maxReleasedNorm+1-float64(alpha[k])+1e-4 {
			t.Fatalf("noisy layer %d read with norm %v, beyond its shrunk bound", k, n)
		}
	}
	for k, a := range alpha {
		// squared norm ≈ 1 + (H+1)·L·σ² with σ = 1
		if !(a > 0.02 && a < 0.3) {
			t.Fatalf("noisy layer %d reliability %v, want near 1/(1+(H+1)·L) = %v", k, a, 1/float64(1+(H+1)*L))
		}
	}
	for i, g := range got {
		if math.IsNaN(float64(g)) || math.Abs(float64(g)) > maxReleasedNorm {
			t.Fatalf("noisy value %d = %v, want finite within the cap", i, g)
		}
	}
}

// decodeRelease writes into dst (the layout's values) one released row as
// per-block values in units of the sender's scale (decodeLayer, block by
// block).
func decodeRelease(dst, row []float32, alpha []float32, lay releaseLayout) {
	at := 0
	for k, w := range lay.w {
		decodeLayer(dst[at:at+w], lay.block(row, k), alpha[k], lay.blocks(), 1)
		at += w
	}
}
