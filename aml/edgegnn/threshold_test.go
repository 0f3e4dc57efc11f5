package edgegnn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBestThreshold(t *testing.T) {
	tests := []struct {
		name    string
		margins []float32
		labels  []int32
		wantF1  float64
	}{
		{"separable", []float32{-3, -2, -1, 1, 2}, []int32{0, 0, 0, 1, 1}, 1},
		{"shifted", []float32{-5, -4, -3, -2.5, -2}, []int32{0, 0, 0, 1, 1}, 1},
		{"overlap", []float32{-1, 0.5, 0.6, 0.7}, []int32{0, 1, 0, 1}, 0.8},
		{"no positives", []float32{-1, 1}, []int32{0, 0}, 0},
		{"ties", []float32{1, 1, 1, -1}, []int32{1, 0, 1, 0}, 0.8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			thr, f1, err := BestThreshold(tc.margins, tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(f1-tc.wantF1) > 1e-12 {
				t.Fatalf("F1 %v, want %v", f1, tc.wantF1)
			}
			// The reported F1 is what the threshold gives when applied.
			if got := CountAt(tc.margins, tc.labels, thr).F1; math.Abs(got-f1) > 1e-12 {
				t.Fatalf("threshold %v gives F1 %v, reported %v", thr, got, f1)
			}
		})
	}
	if _, _, err := BestThreshold([]float32{1}, nil); err == nil {
		t.Fatal("length mismatch accepted")
	}
}

// No threshold beats the one found, checked by brute force over every cut.
func TestBestThresholdIsBest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 50; trial++ {
		n := 1 + r.IntN(40)
		m := make([]float32, n)
		y := make([]int32, n)
		for i := range m {
			m[i] = float32(r.IntN(9) - 4)
			if r.Float64() < 0.3 {
				y[i] = 1
				m[i] += 1
			}
		}
		_, f1, err := BestThreshold(m, y)
		if err != nil {
			t.Fatal(err)
		}
		for _, thr := range []float32{-10, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 10} {
			if g := CountAt(m, y, thr).F1; g > f1+1e-12 {
				t.Fatalf("trial %d: threshold %v gives F1 %v > best %v", trial, thr, g, f1)
			}
		}
	}
}
