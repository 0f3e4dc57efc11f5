package fedgsp

import (
	"math"
	"testing"

	"graphfed/graph"
)

func TestPropagatorHandGraph(t *testing.T) {
	// 0–1, 1–2 given in one direction only, a self loop on 2 and a duplicate
	// 1–0; node 3 is isolated.
	adj := &graph.CSR{Rows: 4, Cols: 4, RowPtr: []int{0, 1, 3, 4, 4}, ColIdx: []int32{1, 0, 2, 2}}
	p := denseP(newPropagator(adj))
	s := 1 / math.Sqrt(2)
	want := [][]float64{
		{0, s, 0, 0},
		{s, 0, s, 0},
		{0, s, 0, 0},
		{0, 0, 0, 0},
	}
	for i := range want {
		for j := range want[i] {
			if !approx(p[i][j], want[i][j], 1e-12) {
				t.Errorf("P[%d][%d] = %v, want %v", i, j, p[i][j], want[i][j])
			}
		}
	}
}

func TestEstimateHomophily(t *testing.T) {
	// Path 0–1–2–3–4 plus 0–2 and 1–4. Train nodes 0,1,2,4; node 3 val.
	// Train–train edges: 0–1 (same), 1–2 (diff), 0–2 (diff), 1–4 (same).
	edges := []graph.Edge{{U: 0, V: 1}, {U: 1, V: 2}, {U: 2, V: 3}, {U: 3, V: 4}, {U: 0, V: 2}, {U: 1, V: 4}}
	adj, err := graph.FromEdges(5, edges, true)
	if err != nil {
		t.Fatal(err)
	}
	labels := []int32{0, 0, 1, 1, 0}
	tr, va := graph.SplitTrain, graph.SplitVal
	cases := []struct {
		name  string
		split []graph.Split
		h     float64
		edges int
	}{
		{"four train-train edges", []graph.Split{tr, tr, tr, va, tr}, 0.5, 4},
		{"all train", []graph.Split{tr, tr, tr, tr, tr}, 3.0 / 6, 6},
		{"no train-train edge", []graph.Split{tr, va, va, tr, va}, DefaultHomophily, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, e := EstimateHomophily(adj, labels, c.split)
			if h != c.h || e != c.edges {
				t.Errorf("got ĥ=%v over %d edges, want %v over %d", h, e, c.h, c.edges)
			}
		})
	}
}

// TestHeterophilyBasesAngle checks Algorithm 1's property: per feature
// column, U_0..U_K are unit vectors and any two of them meet at the fixed
// angle θ = π/2·(1−ĥ) (appendix II: "the fixed angle between any pair of
// bases is θ"), in particular every consecutive pair U_{k−1}, U_k.
func TestHeterophilyBasesAngle(t *testing.T) {
	rng := newRNG(1)
	ds := randomDataset(t, rng, 80, 6, 3, 120, false)
	p := newPropagator(ds.Adj)
	x := denseFeatures(ds.Features)
	const d, K = 6, 8
	for _, h := range []float64{0.1, 0.23, 0.5, 0.8, 0.97} {
		theta := Angle(h)
		us := [][]float64{append([]float64(nil), x...)}
		scaleCols(us[0], d, inverse(colNorms(us[0], d)))
		walkBases(p, x, d, K, theta, func(k int, hm, u []float64) {
			us = append(us, append([]float64(nil), u...))
		})
		for j := 0; j < d; j++ {
			for a := range us {
				ua := column(us[a], d, j)
				if !approx(norm(ua), 1, 1e-9) {
					t.Fatalf("ĥ=%v col %d: ‖U_%d‖ = %v", h, j, a, norm(ua))
				}
				for b := 0; b < a; b++ {
					cos := dot(ua, column(us[b], d, j))
					if !approx(cos, math.Cos(theta), 1e-7) {
						t.Errorf("ĥ=%v col %d: cos∠(U_%d,U_%d) = %.9f, want cos θ = %.9f", h, j, b, a, cos, math.Cos(theta))
					}
				}
			}
		}
	}
}

// TestHomophilyBasesArePowers checks HM_k = P^k X against dense powers.
func TestHomophilyBasesArePowers(t *testing.T) {
	rng := newRNG(2)
	ds := randomDataset(t, rng, 30, 4, 2, 40, false)
	prop := newPropagator(ds.Adj)
	P := denseP(prop)
	x := denseFeatures(ds.Features)
	const d, K = 4, 5
	want := append([]float64(nil), x...)
	walkBases(prop, x, d, K, Angle(0.5), func(k int, hm, u []float64) {
		next := make([]float64, len(want))
		for i := range P {
			for l, w := range P[i] {
				for j := 0; j < d; j++ {
					next[i*d+j] += w * want[l*d+j]
				}
			}
		}
		want = next
		for i := range hm {
			if !approx(hm[i], want[i], 1e-12) {
				t.Fatalf("HM_%d[%d] = %v, want %v", k, i, hm[i], want[i])
			}
		}
	})
}

// TestHeterophilyBasesDegenerate: a zero column stays zero, and a column
// whose Krylov space is exhausted (two isolated edges) stays finite.
func TestHeterophilyBasesDegenerate(t *testing.T) {
	adj, err := graph.FromEdges(4, []graph.Edge{{U: 0, V: 1}, {U: 2, V: 3}}, true)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{1, 0, 2, 0, 0, 0, 0, 0} // 4×2: column 1 is zero
	walkBases(newPropagator(adj), x, 2, 6, Angle(0.3), func(k int, hm, u []float64) {
		for i, v := range u {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("U_%d[%d] = %v", k, i, v)
			}
			if i%2 == 1 && v != 0 {
				t.Fatalf("U_%d of a zero column has %v at %d", k, v, i)
			}
		}
		if n := norm(column(u, 2, 0)); !approx(n, 1, 1e-9) {
			t.Fatalf("U_%d column 0 norm %v", k, n)
		}
	})
}
