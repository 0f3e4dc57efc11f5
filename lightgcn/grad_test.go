package lightgcn

import (
	"fmt"
	"math"
	"testing"

	"graphfed/graph"
)

// tinyTrain is a 4-user × 5-item training graph with an item of degree
// one, a user of degree three and an item nobody has (an empty row of Â).
func tinyTrain(t *testing.T) *graph.CSR {
	t.Helper()
	rows := [][]int32{{0, 1}, {1, 2, 3}, {0}, {2, 3}}
	m := &graph.CSR{Rows: 4, Cols: 5, RowPtr: []int{0}}
	for _, r := range rows {
		m.ColIdx = append(m.ColIdx, r...)
		m.RowPtr = append(m.RowPtr, len(m.ColIdx))
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGradientFiniteDifference checks the propagation + BPR + L2 backward
// against central differences of the loss in every layer-0 coordinate,
// for 0 to 3 layers, with a user and an item repeated in the batch.
func TestGradientFiniteDifference(t *testing.T) {
	train := tinyTrain(t)
	users, pos, neg := []int32{0, 1, 1, 3}, []int32{1, 2, 3, 2}, []int32{4, 0, 0, 1}
	for _, tc := range []struct {
		layers, dim int
		reg         float64
	}{{0, 3, 0}, {1, 3, 0.3}, {2, 3, 0}, {3, 3, 0.3}, {3, 3, 1e-4},
		// 40 columns: the kernels' assembly takes the first 32.
		{3, 40, 0.3}} {
		t.Run(fmt.Sprintf("layers=%d-dim=%d-reg=%g", tc.layers, tc.dim, tc.reg), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Dim, cfg.Layers, cfg.Reg, cfg.InitStd, cfg.Batch = tc.dim, tc.layers, tc.reg, 0.7, 4
			m, err := New(train, cfg)
			if err != nil {
				t.Fatal(err)
			}
			loss := func() float64 {
				l, err := m.gradient(users, pos, neg)
				if err != nil {
					t.Fatal(err)
				}
				return l.BPR + cfg.Reg*l.L2
			}
			loss()
			want := append([]float32(nil), m.grad.Data...)
			const h = 1e-2
			for k := range m.e0.Data {
				x := m.e0.Data[k]
				m.e0.Data[k] = x + h
				up := loss()
				m.e0.Data[k] = x - h
				down := loss()
				m.e0.Data[k] = x
				fd := (up - down) / (2 * h)
				if math.Abs(fd-float64(want[k])) > 2e-3*math.Max(1, math.Abs(fd)) {
					t.Errorf("coordinate %d (node %d, dim %d): backward %v, finite difference %v", k, k/cfg.Dim, k%cfg.Dim, want[k], fd)
				}
			}
		})
	}
}

// TestAdjacencySymmetric checks Â's entries 1/sqrt(d_u·d_i) and symmetry.
func TestAdjacencySymmetric(t *testing.T) {
	train := tinyTrain(t)
	a, err := NormalizedAdjacency(train)
	if err != nil {
		t.Fatal(err)
	}
	dense := func(i, j int) float32 {
		cols, vals := a.Row(i)
		for k, c := range cols {
			if int(c) == j {
				return vals[k]
			}
		}
		return 0
	}
	itemDeg := []int{2, 2, 2, 2, 0}
	for u := range 4 {
		for i := range 5 {
			var want float32
			cols, _ := train.Row(u)
			for _, c := range cols {
				if int(c) == i {
					want = float32(1 / math.Sqrt(float64(train.Degree(u)*itemDeg[i])))
				}
			}
			if got, back := dense(u, 4+i), dense(4+i, u); math.Abs(float64(got-want)) > 1e-7 || got != back {
				t.Errorf("Â(%d, item %d) = %v, transposed %v, want %v", u, i, got, back, want)
			}
		}
	}
	if a.Degree(8) != 0 {
		t.Errorf("the item without users has %d entries", a.Degree(8))
	}
}
