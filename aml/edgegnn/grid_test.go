package edgegnn

import (
	"math/rand/v2"
	"testing"
)

func TestGridCountsMatchCountAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		n    int
		pos  float64
	}{
		{"empty", 0, 0.5},
		{"no positives", 200, 0},
		{"rare positives", 5000, 0.01},
		{"balanced", 1000, 0.5},
	}
	grid := DecisionGrid()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, y := make([]float32, tc.n), make([]int32, tc.n)
			for i := range m {
				if rng.Float64() < tc.pos {
					y[i] = 1
				}
				// Quarter-unit values put margins exactly on grid points,
				// where > and ≤ must split as CountAt does.
				m[i] = float32(rng.IntN(80)-40) / 4
				if y[i] == 1 {
					m[i] += 2
				}
			}
			got, err := GridCounts(m, y, grid)
			if err != nil {
				t.Fatal(err)
			}
			for j, thr := range grid {
				want := CountAt(m, y, thr)
				g := got[j]
				if g.TP != want.TP || g.FP != want.FP || g.FN != want.FN || g.TN != want.TN {
					t.Fatalf("threshold %v: grid %+v, CountAt %+v", thr, g, want)
				}
			}
		})
	}
}

func TestGridCountsErrors(t *testing.T) {
	if _, err := GridCounts([]float32{1}, nil, DecisionGrid()); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := GridCounts(nil, nil, []float32{1, 0}); err == nil {
		t.Error("descending grid accepted")
	}
}

func TestPooledThreshold(t *testing.T) {
	grid := []float32{-1, 0, 1, 2}
	tests := []struct {
		name       string
		tp, fp, fn []float64
		want       int
		wantF1     float64
	}{
		// F1 per point: 2·10/(20+30+0)=.4, 2·9/(18+5+1)=.75, .75 again, 2·2/(4+0+8)=.333
		{"tie keeps nearest arg-max", []float64{10, 9, 9, 2}, []float64{30, 5, 5, 0}, []float64{0, 1, 1, 8}, 1, 0.75},
		{"higher threshold wins", []float64{10, 9, 8, 2}, []float64{30, 20, 1, 0}, []float64{0, 1, 2, 8}, 2, 16.0 / 19},
		{"no positives", []float64{0, 0, 0, 0}, []float64{3, 2, 1, 0}, []float64{0, 0, 0, 0}, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, f1, err := PooledThreshold(grid, tc.tp, tc.fp, tc.fn)
			if err != nil {
				t.Fatal(err)
			}
			if j != tc.want || f1 != tc.wantF1 {
				t.Errorf("got index %d F1 %v, want %d F1 %v", j, f1, tc.want, tc.wantF1)
			}
		})
	}
	if _, _, err := PooledThreshold(grid, nil, nil, nil); err == nil {
		t.Error("missing counts accepted")
	}
}
