package gnn

import (
	"testing"

	"graphfed/graph"
)

var spmmShapes = []struct {
	r, c, n int
	density float64
}{
	{0, 4, 3, 0.5}, {4, 0, 3, 0.5}, {1, 1, 1, 1}, {5, 7, 16, 0.3}, {9, 4, 7, 0.6},
	{20, 30, 19, 0.1}, {2000, 1500, 16, 0.01}, {3000, 300, 8, 0.2},
}

func TestSpMM(t *testing.T) {
	rng := newRNG(3)
	for _, s := range spmmShapes {
		for _, ones := range []bool{false, true} {
			m := randCSR(rng, s.r, s.c, s.density, ones)
			md := dense(m)
			b := randTensor(rng, s.c, s.n)
			got := randTensor(rng, s.r, s.n)
			SpMM(got, m, b)
			assertClose(t, "spmm", got, mul64(md, rows64(b), s.c, s.n), 1e-5)

			bt := randTensor(rng, s.r, s.n)
			if s.r > 3 {
				clear(bt.Row(2)) // a zero row is skipped by the scatter
			}
			want := mul64(transpose64(md, s.c), rows64(bt), s.r, s.n)
			gotT := randTensor(rng, s.c, s.n)
			SpMMT(gotT, m, bt)
			assertClose(t, "spmmt", gotT, want, 1e-5)

			sp, err := NewSparse(m)
			if err != nil {
				t.Fatal(err)
			}
			sp.Mul(got, b)
			assertClose(t, "sparse mul", got, mul64(md, rows64(b), s.c, s.n), 1e-5)
			sp.MulT(gotT, bt)
			assertClose(t, "sparse mult", gotT, want, 1e-5)
			// Mostly-zero gradients take the scatter path.
			for i := 0; i < bt.Rows; i++ {
				if i%3 != 0 {
					clear(bt.Row(i))
				}
			}
			sp.MulT(gotT, bt)
			assertClose(t, "sparse mult (scatter)", gotT, mul64(transpose64(md, s.c), rows64(bt), s.r, s.n), 1e-5)
		}
	}
}

func TestNewSparse(t *testing.T) {
	rng := newRNG(4)
	sym := randGraph(t, rng, 30, 4)
	s, err := NewSparse(sym)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Symmetric() || s.M.Val == nil {
		t.Errorf("symmetric unweighted graph: symmetric=%v, val set=%v", s.Symmetric(), s.M.Val != nil)
	}
	if sym.Val != nil {
		t.Errorf("NewSparse modified its input")
	}
	asym := randCSR(rng, 6, 9, 0.4, false)
	s, err = NewSparse(asym)
	if err != nil {
		t.Fatal(err)
	}
	if s.Symmetric() || s.T.Rows != 9 || s.T.Cols != 6 {
		t.Errorf("rectangular: symmetric=%v, T %dx%d", s.Symmetric(), s.T.Rows, s.T.Cols)
	}
	if err := s.T.Validate(); err != nil {
		t.Errorf("transpose invalid: %v", err)
	}
	bad := &graph.CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1, 1}, ColIdx: []int32{5}}
	if _, err := NewSparse(bad); err == nil {
		t.Errorf("out-of-range column accepted")
	}
}
