package gnn

import (
	"math"
	"testing"
)

// TestVecKernels checks the element-wise passes (AVX-512 over the
// leading multiple of 16 elements where available) against naive loops,
// bit for bit, on lengths around the vector width and on values that
// exercise the edge cases: ±0, NaN of either sign, infinities.
func TestVecKernels(t *testing.T) {
	rng := newRNG(21)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), -float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	same := func(name string, n int, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s n=%d [%d] = %v (%#x), want %v (%#x)", name, n, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
	for _, n := range []int{0, 1, 15, 16, 17, 64, 100} {
		x, y := randTensor(rng, 1, n), randTensor(rng, 1, n)
		for i := range min(n, len(special)) {
			x.Data[(i*7)%n] = special[i]
		}
		got := New(1, n)
		Add(got, x, y)
		want := make([]float32, n)
		for i := range want {
			want[i] = x.Data[i] + y.Data[i]
		}
		same("add", n, got.Data, want)
		acc := x.Clone()
		AddInto(acc.Data, y.Data)
		same("add into", n, acc.Data, want)
		// x += a·y, with NaNs and infinities in both (and a product of
		// 0·∞), against the Go loop with the product rounded first.
		yy := y.Clone()
		for i := range min(n, len(special)) {
			yy.Data[(i*5+3)%n] = special[len(special)-1-i]
		}
		for _, a := range []float32{0.75, -3, 0} {
			acc = x.Clone()
			AddScaled(acc, a, yy)
			for i := range want {
				want[i] = x.Data[i] + float32(a*yy.Data[i])
			}
			same("add scaled", n, acc.Data, want)
		}
		ReLU(got, x)
		for i, v := range x.Data {
			u := math.Float32bits(v)
			want[i] = math.Float32frombits(u &^ uint32(int32(u)>>31))
		}
		same("relu", n, got.Data, want)
		ReLUBackward(got, y, x)
		for i, v := range x.Data {
			want[i] = 0
			if v > 0 {
				want[i] = y.Data[i]
			}
		}
		same("relu backward", n, got.Data, want)
	}
	for _, s := range []struct{ m, n int }{{1, 16}, {5, 32}, {7, 64}, {3, 96}, {9, 136}, {4, 2}} {
		x, b := randTensor(rng, s.m, s.n), randTensor(rng, 1, s.n)
		want := x.Clone()
		for i := range s.m {
			for j := range s.n {
				want.Data[i*s.n+j] += b.Data[j]
			}
		}
		got := x.Clone()
		AddBias(got, b)
		same("add bias", s.n, got.Data, want.Data)
		sums := make([]float32, s.n)
		for j := range s.n {
			for i := range s.m {
				sums[j] += x.Data[i*s.n+j]
			}
		}
		db := New(1, s.n)
		AddBiasGrad(db, x)
		same("col sums", s.n, db.Data, sums)
	}
}
