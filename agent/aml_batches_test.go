package agent

import (
	"math"
	"math/rand/v2"
	"testing"

	"graphfed/graph"
)

func TestSeedStreamBatches(t *testing.T) {
	g := &graph.AMLGraph{Label: make([]uint8, 1000)}
	for e := 0; e < 1000; e += 100 {
		g.Label[e] = 1 // 10 laundering transactions in 1000
	}
	train := make([]int32, 1000)
	for i := range train {
		train[i] = int32(i)
	}
	for _, tc := range []struct {
		name    string
		frac    float64
		size    int
		wantPos int // laundering seeds per batch
	}{
		{"uniform", -1, 100, -1},
		{"one in ten", 0.1, 100, 10},
		{"capped by the laundering seeds", 0.5, 100, 10},
		{"at least one", 0.001, 100, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeedStream(g, append([]int32(nil), train...), tc.frac)
			rng := rand.New(rand.NewPCG(1, 1))
			seen := map[int32]int{}
			for b := 0; b < 20; b++ {
				batch := s.next(tc.size, rng)
				if len(batch) != tc.size {
					t.Fatalf("batch %d: %d seeds, want %d", b, len(batch), tc.size)
				}
				in, pos := map[int32]bool{}, 0
				for _, e := range batch {
					if in[e] {
						t.Fatalf("batch %d: seed %d twice", b, e)
					}
					in[e] = true
					seen[e]++
					pos += int(g.Label[e])
				}
				if tc.wantPos >= 0 && pos != tc.wantPos {
					t.Fatalf("batch %d: %d laundering seeds, want %d", b, pos, tc.wantPos)
				}
			}
			if tc.wantPos < 0 && len(seen) != 1000 {
				t.Errorf("uniform passes covered %d of 1000 seeds in two passes", len(seen))
			}
		})
	}
}

// A model that learned its batches' log-odds, shifted, flags exactly the
// transactions the weighted objective flags: p(x) > 1/(1+w).
func TestMarginShiftKeepsTheWeightedDecision(t *testing.T) {
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	for _, tc := range []struct{ f, pi, w float64 }{{0.1, 1.0 / 900, 10}, {0.1, 0.01, 10}, {0.3, 0.2, 2}, {0.0996, 1.0 / 900, 1}} {
		cut := 1 / (1 + tc.w)
		for _, p := range []float64{cut * 0.9, cut * 0.99, cut * 1.01, cut * 1.1, 0.5, 0.99} {
			batchLogit := logit(p) + logit(tc.f) - logit(tc.pi)
			flagged := batchLogit+marginShift(tc.f, tc.pi, tc.w) > 0
			if flagged != (p > cut) {
				t.Errorf("f %v, pi %v, w %v: p(x) = %v flagged %v, want %v", tc.f, tc.pi, tc.w, p, flagged, p > cut)
			}
		}
	}
}
