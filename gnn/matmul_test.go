package gnn

import (
	"runtime"
	"slices"
	"testing"
)

// Shapes cover empty, single, odd widths (the 8-, 4- and 3-wide kernel
// paths) and products large enough to run on several goroutines.
var matmulShapes = []struct{ m, k, n int }{
	{0, 3, 4}, {1, 1, 1}, {3, 0, 2}, {2, 3, 5}, {5, 16, 7}, {7, 9, 16},
	{13, 5, 19}, {33, 17, 3}, {300, 64, 40}, {1000, 16, 20},
}

func TestMatMul(t *testing.T) {
	rng := newRNG(1)
	for _, s := range matmulShapes {
		a, b := randTensor(rng, s.m, s.k), randTensor(rng, s.k, s.n)
		// Zero rows and entries exercise the skipping paths.
		if s.m > 2 {
			clear(a.Row(1))
		}
		want := mul64(rows64(a), rows64(b), s.k, s.n)
		got := randTensor(rng, s.m, s.n) // stale contents must be overwritten
		MatMul(got, a, b)
		assertClose(t, "matmul", got, want, 1e-5)

		at := NewFrom(s.k, s.m, flatten64(transpose64(rows64(a), s.k)))
		gotTN := randTensor(rng, s.k, s.n)
		bm := randTensor(rng, s.m, s.n)
		MatMulTN(gotTN, a, bm)
		assertClose(t, "matmul tn", gotTN, mul64(rows64(at), rows64(bm), s.m, s.n), 1e-5)

		bn := randTensor(rng, s.n, s.k)
		gotNT := randTensor(rng, s.m, s.n)
		MatMulNT(gotNT, a, bn)
		assertClose(t, "matmul nt", gotNT, mul64(rows64(a), transpose64(rows64(bn), s.k), s.k, s.n), 1e-5)
	}
}

func flatten64(a [][]float64) []float32 {
	var out []float32
	for _, r := range a {
		for _, v := range r {
			out = append(out, float32(v))
		}
	}
	return out
}

func TestMatMulShapePanics(t *testing.T) {
	cases := []struct {
		name string
		f    func()
	}{
		{"matmul inner", func() { MatMul(New(2, 2), New(2, 3), New(2, 2)) }},
		{"matmul dst", func() { MatMul(New(2, 3), New(2, 2), New(2, 2)) }},
		{"matmul tn", func() { MatMulTN(New(3, 2), New(2, 3), New(3, 2)) }},
		{"matmul nt", func() { MatMulNT(New(2, 2), New(2, 3), New(2, 2)) }},
		{"add", func() { Add(New(2, 2), New(2, 2), New(2, 3)) }},
		{"bias", func() { AddBias(New(2, 2), New(1, 3)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			c.f()
		})
	}
}

// TestKernelsIndependentOfCPUCount checks that splitting work across
// goroutines does not change a single bit of any product.
func TestKernelsIndependentOfCPUCount(t *testing.T) {
	rng := newRNG(2)
	a, b := randTensor(rng, 700, 64), randTensor(rng, 64, 48)
	bt := randTensor(rng, 700, 48)
	s := randCSR(rng, 700, 900, 0.05, false)
	bs := randTensor(rng, 900, 48)
	run := func() [][]float32 {
		c1, c2, c3 := New(700, 48), New(64, 48), New(700, 64)
		MatMul(c1, a, b)
		MatMulTN(c2, a, bt)
		MatMulNT(c3, bt, randTensorSeeded(64, 48))
		c4, c5 := New(700, 48), New(900, 48)
		SpMM(c4, s, bs)
		SpMMT(c5, s, bt)
		return [][]float32{c1.Data, c2.Data, c3.Data, c4.Data, c5.Data}
	}
	prev := runtime.GOMAXPROCS(1)
	one := run()
	runtime.GOMAXPROCS(4)
	four := run()
	runtime.GOMAXPROCS(prev)
	for i := range one {
		if !slices.Equal(one[i], four[i]) {
			t.Errorf("product %d differs between 1 and 4 CPUs", i)
		}
	}
}

func randTensorSeeded(r, c int) *Tensor { return randTensor(newRNG(99), r, c) }

// TestSpMMSkewedSplit multiplies a matrix whose entries sit mostly in one
// hub row, with empty rows around it, on several goroutines: the split by
// stored entries must still cover every row exactly once.
func TestSpMMSkewedSplit(t *testing.T) {
	rng := newRNG(5)
	const rows, cols, n = 1000, 1000, 512
	m := randCSR(rng, rows, cols, 0.002, false)
	// Make row 500 a hub holding every column.
	hub := randCSR(rng, 1, cols, 1, false)
	var col []int32
	var val []float32
	rowPtr := []int{0}
	for i := 0; i < m.Rows; i++ {
		c, v := m.Row(i)
		if i == 500 {
			c, v = hub.ColIdx, hub.Val
		}
		col = append(col, c...)
		val = append(val, v...)
		rowPtr = append(rowPtr, len(col))
	}
	m.RowPtr, m.ColIdx, m.Val = rowPtr, col, val
	b := randTensor(rng, cols, n)
	want := make([][]float64, rows)
	for i := range want {
		want[i] = make([]float64, n)
		c, v := m.Row(i)
		for k := range c {
			for j := 0; j < n; j++ {
				want[i][j] += float64(v[k]) * float64(b.At(int(c[k]), j))
			}
		}
	}
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	if p := ParallelWorkers(rows, m.NNZ()*n); p != 4 {
		t.Fatalf("product split into %d, want 4", p)
	}
	got := New(rows, n)
	SpMM(got, m, b)
	assertClose(t, "spmm hub", got, want, 1e-4) // 1000-term float32 sums
}
