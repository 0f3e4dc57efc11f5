package secagg

import (
	"errors"
	"math"
	"testing"
)

func TestFixedPointSumDecodes(t *testing.T) {
	const n, d, C, W = 8, 257, 1.5, 1000
	enc, err := NewEncoding(C, W, n, d, 32)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Scale != math.Exp2(math.Floor(math.Log2(((1<<31-1)/float64(n)-1)/C))) {
		t.Fatalf("scale %g", enc.Scale)
	}
	rng := newDetRand("fixed")
	sum := make([]uint32, enc.Len())
	plain := make([]float64, d)
	var weight uint64
	for i := range n {
		x := make([]float32, d)
		for j := range x {
			x[j] = float32(math.Sin(float64(i*d+j))) * float32(i+1) // some exceed the clip
		}
		w := uint64(100 * (i + 1))
		q, err := enc.Encode(x, w, rng)
		if err != nil {
			t.Fatal(err)
		}
		for j := range sum {
			sum[j] += q[j]
		}
		var norm float64
		for _, v := range x {
			norm += float64(v) * float64(v)
		}
		f := math.Min(1, C/math.Sqrt(norm))
		for j, v := range x {
			plain[j] += float64(w) * float64(v) * f
		}
		weight += w
	}
	got, err := enc.DecodeSum(sum, n)
	if err != nil {
		t.Fatal(err)
	}
	if got.Weight != weight {
		t.Fatalf("weight %d, want %d (exact)", got.Weight, weight)
	}
	bound := enc.ErrorBound(n)
	var worst float64
	for j := range plain {
		worst = math.Max(worst, math.Abs(got.Weighted[j]-plain[j]))
	}
	if worst >= bound {
		t.Fatalf("largest error %g, stated bound %g", worst, bound)
	}
	mean, _ := got.Mean()
	if e := math.Abs(mean[3] - plain[3]/float64(weight)); e >= bound/float64(weight) {
		t.Fatalf("mean error %g", e)
	}
	t.Logf("n=%d C=%g W=%d b=32: scale 2^%g, largest error %.3g of bound %.3g on Σwx; mean error < %.3g",
		n, C, W, math.Log2(enc.Scale), worst, bound, bound/float64(weight))
}

// At the bound: n parties all at +C (or −C) on one coordinate with the
// largest weight, in as few bits as the cohort allows, sum without wrap.
func TestFixedPointNoWrapAtBound(t *testing.T) {
	for _, bits := range []int{8, 12, 32} {
		const n, C = 5, 3.0
		enc, err := NewEncoding(C, 3, n, 2, bits)
		if err != nil {
			t.Fatal(err)
		}
		for _, sign := range []float32{1, -1} {
			sum := make([]uint32, enc.Len())
			rng := newDetRand("wrap")
			for range n {
				q, err := enc.Encode([]float32{sign * 1e6, 0}, 3, rng) // clipped to ±C
				if err != nil {
					t.Fatal(err)
				}
				for j := range sum {
					sum[j] = (sum[j] + q[j]) & wordMask(bits)
				}
			}
			got, err := enc.DecodeSum(sum, n)
			if err != nil {
				t.Fatalf("b=%d: %v", bits, err)
			}
			want := float64(sign) * n * C * 3
			if e := math.Abs(got.Weighted[0] - want); e >= enc.ErrorBound(n) {
				t.Fatalf("b=%d sign %v: %g, want %g (wrapped?)", bits, sign, got.Weighted[0], want)
			}
			if got.Weight != n*3 {
				t.Fatalf("b=%d weight %d", bits, got.Weight)
			}
		}
		if limit := float64(n) * (C*enc.Scale + 1); limit > float64(uint64(1)<<(bits-1)-1) {
			t.Fatalf("b=%d: bound %g does not fit", bits, limit)
		}
	}
}

func TestFixedPointRefusals(t *testing.T) {
	if _, err := NewEncoding(1, 1<<30, 8, 4, 32); !errors.Is(err, ErrBounds) {
		t.Errorf("weight slot overflow: %v", err)
	}
	if _, err := NewEncoding(1, 1, 200, 4, 8); !errors.Is(err, ErrBounds) {
		t.Errorf("200 parties in 8 bits: %v", err)
	}
	if _, err := NewEncoding(0, 1, 2, 4, 32); !errors.Is(err, ErrBounds) {
		t.Errorf("zero clip: %v", err)
	}
	enc, _ := NewEncoding(1, 10, 4, 3, 16)
	rng := newDetRand("refuse")
	for name, c := range map[string]struct {
		x []float32
		w uint64
	}{
		"weight above max": {[]float32{0, 0, 0}, 11},
		"wrong length":     {[]float32{0, 0}, 1},
		"NaN":              {[]float32{0, float32(math.NaN()), 0}, 1},
		"Inf":              {[]float32{float32(math.Inf(-1)), 0, 0}, 1},
	} {
		if _, err := enc.Encode(c.x, c.w, rng); !errors.Is(err, ErrBounds) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Sums no in-bounds cohort produces.
	q, _ := enc.Encode([]float32{1, 0, 0}, 10, rng)
	big := append([]uint32(nil), q...)
	big[0] = uint32(5*enc.bound()) & wordMask(16)
	if _, err := enc.DecodeSum(big, 4); !errors.Is(err, ErrBounds) {
		t.Errorf("coordinate beyond m·B: %v", err)
	}
	heavy := append([]uint32(nil), q...)
	heavy[3] = 11
	if _, err := enc.DecodeSum(heavy, 1); !errors.Is(err, ErrBounds) {
		t.Errorf("weight beyond m·W: %v", err)
	}
	wide := make([]uint32, enc.Len())
	for j := range 3 {
		wide[j] = uint32(enc.bound()) // every coordinate at C: norm C·√3 > C
	}
	if _, err := enc.DecodeSum(wide, 1); !errors.Is(err, ErrBounds) {
		t.Errorf("norm beyond m·C: %v", err)
	}
	if _, err := enc.DecodeSum(q, 1); err != nil {
		t.Errorf("an honest single encoding: %v", err)
	}
}

// Stochastic rounding is unbiased: the mean of many encodings of a value
// between two grid points approaches it.
func TestStochasticRoundingUnbiased(t *testing.T) {
	enc, _ := NewEncoding(1, 1, 1, 1, 8)
	v := float32(0.3) // 0.3·scale is off the grid
	rng := newDetRand("sr")
	var acc float64
	const trials = 20000
	for range trials {
		q, _ := enc.Encode([]float32{v}, 1, rng)
		s, _ := enc.DecodeSum(q, 1)
		acc += s.Weighted[0]
	}
	if e := math.Abs(acc/trials - float64(v)); e > 4/enc.Scale/math.Sqrt(trials) {
		t.Fatalf("mean of roundings %g, want %g", acc/trials, v)
	}
}

// bits = 0: the fewest bits that keep Precision and hold the weight slot.
func TestFixedPointChoosesBits(t *testing.T) {
	for _, C := range []float64{1e-3, 0.1, 1, 1.5, 1.9999999, 2, 3, 1e3} {
		for _, n := range []int{2, 8, 16, 30, 100} {
			for _, W := range []uint64{1, 50, 1 << 20} {
				e, err := NewEncoding(C, W, n, 10, 0)
				if err != nil {
					t.Fatal(err)
				}
				keeps := C*e.Scale >= 1<<Precision
				if e.Bits < 32 && !keeps {
					t.Fatalf("C=%g n=%d W=%d: b=%d with C·s = %g < 2^%d", C, n, W, e.Bits, C*e.Scale, Precision)
				}
				if keeps {
					if f, err := NewEncoding(C, W, n, 10, e.Bits-1); err == nil && C*f.Scale >= 1<<Precision {
						t.Fatalf("C=%g n=%d W=%d: b=%d chosen, %d keeps the precision too", C, n, W, e.Bits, e.Bits-1)
					}
				}
				// C·s in [2^24, 2^25): b−1 ≥ log2(n·(C·s+1)+1).
				lo := 1 + int(math.Ceil(math.Log2(float64(n)*(1<<Precision+1)+1)))
				hi := 1 + int(math.Ceil(math.Log2(float64(n)*(1<<(Precision+1)+1)+1)))
				if W <= 50 && (e.Bits < lo || e.Bits > min(hi, 32)) {
					t.Errorf("C=%g n=%d W=%d: b=%d, want %d..%d", C, n, W, e.Bits, lo, hi)
				}
				if n < 64 && W <= 50 && e.Bits > 31 {
					t.Errorf("C=%g n=%d: b=%d: the upload exceeds float32's", C, n, e.Bits)
				}
			}
		}
	}
	if e, _ := NewEncoding(1, 1, 1000, 10, 0); e.Bits != 32 {
		t.Fatalf("1000 parties: b=%d, want 32 with less precision", e.Bits)
	}
	if _, err := NewEncoding(1, 1<<30, 8, 4, 0); !errors.Is(err, ErrBounds) {
		t.Errorf("weight slot overflow at every b: %v", err)
	}
}
