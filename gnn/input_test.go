package gnn

import (
	"math"
	"strings"
	"testing"

	"graphfed/graph"
)

func TestGCNNorm(t *testing.T) {
	rng := newRNG(20)
	weighted := randGraph(t, rng, 9, 3)
	weighted.Val = make([]float32, weighted.NNZ())
	for k := range weighted.Val {
		weighted.Val[k] = 2 // symmetric weights
	}
	// Edge 0–1 and a stored self loop on node 2.
	withLoop := &graph.CSR{Rows: 3, Cols: 3, RowPtr: []int{0, 1, 2, 3}, ColIdx: []int32{1, 0, 2}}
	for _, tc := range []struct {
		name string
		adj  *graph.CSR
	}{
		{"unweighted with isolated node", randGraph(t, rng, 12, 3)},
		{"weighted", weighted},
		{"stored self loop", withLoop},
		{"empty", &graph.CSR{RowPtr: []int{0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GCNNorm(tc.adj)
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
			a := dense(tc.adj)
			n := len(a)
			deg := make([]float64, n)
			for i := range a {
				a[i][i]++
				for _, v := range a[i] {
					deg[i] += v
				}
			}
			want := make([][]float64, n)
			for i := range want {
				want[i] = make([]float64, n)
				for j := range want[i] {
					want[i][j] = a[i][j] / math.Sqrt(deg[i]*deg[j])
				}
			}
			gd := dense(got)
			for i := range want {
				for j := range want[i] {
					if math.Abs(gd[i][j]-want[i][j]) > 1e-6 {
						t.Fatalf("Â(%d,%d) = %v, want %v", i, j, gd[i][j], want[i][j])
					}
				}
			}
		})
	}
	neg := &graph.CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1, 2}, ColIdx: []int32{1, 0}, Val: []float32{-1, -1}}
	if _, err := GCNNorm(neg); err == nil {
		t.Errorf("negative weights accepted")
	}
}

func TestMeanNorm(t *testing.T) {
	rng := newRNG(21)
	adj := randGraph(t, rng, 15, 4)
	m, err := MeanNorm(adj)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < m.Rows; i++ {
		_, vals := m.Row(i)
		var s float64
		for _, v := range vals {
			s += float64(v)
		}
		if len(vals) == 0 {
			if i != m.Rows-1 {
				t.Errorf("row %d unexpectedly empty", i)
			}
			continue
		}
		if math.Abs(s-1) > 1e-6 {
			t.Errorf("row %d sums to %v", i, s)
		}
	}
	// The isolated node gets a zero neighbour mean.
	h := randTensor(rng, 15, 3)
	out := New(15, 3)
	SpMM(out, m, h)
	if !allZero(out.Row(14)) {
		t.Errorf("isolated node mean %v, want zeros", out.Row(14))
	}
}

func TestNewInput(t *testing.T) {
	rng := newRNG(22)
	adj := randGraph(t, rng, 10, 3)
	feat := randCSR(rng, 10, 6, 0.3, true)
	for _, kind := range []string{KindGCN, KindSAGE} {
		in, err := NewInput(kind, adj, feat)
		if err != nil {
			t.Fatal(err)
		}
		if in.N() != 10 || in.Features() != 6 || in.Kind != kind || in.X.M.Val == nil {
			t.Errorf("%s: N=%d F=%d kind=%q", kind, in.N(), in.Features(), in.Kind)
		}
	}
	for _, tc := range []struct {
		name, kind string
		adj, feat  *graph.CSR
		want       string
	}{
		{"unknown kind", "gat", adj, feat, "unknown model kind"},
		{"nil", KindGCN, nil, feat, "nil"},
		{"not square", KindGCN, randCSR(rng, 10, 9, 0.2, true), feat, "not square"},
		{"row mismatch", KindGCN, adj, randCSR(rng, 9, 6, 0.3, true), "feature rows"},
		{"bad features", KindSAGE, adj, &graph.CSR{Rows: 10, Cols: 6, RowPtr: make([]int, 10)}, "features"},
		{"bad adjacency", KindSAGE, &graph.CSR{Rows: 10, Cols: 10, RowPtr: make([]int, 11), ColIdx: []int32{3}}, feat, "adjacency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewInput(tc.kind, tc.adj, tc.feat)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gnn: new input") {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
