package edgegnn

import (
	"math"
	"math/rand/v2"
	"testing"

	"graphfed/aml/amlworld"
)

func TestSeedStreamBatches(t *testing.T) {
	g, train := launderingEvery(1000, 100) // 10 laundering transactions in 1000
	for _, tc := range []struct {
		name    string
		frac    float64
		size    int
		wantPos int // laundering seeds per batch; -1: unstratified
	}{
		{"uniform", -1, 100, -1},
		{"zero is uniform", 0, 100, -1},
		{"one in ten", 0.1, 100, 10},
		{"rounded", 0.1, 96, 10},
		{"one in ten of 512 in larger batches", 0.1, 512, 10},
		{"capped by the laundering seeds", 0.5, 100, 10},
		{"at least one", 0.001, 100, 1},
		{"leaves a legitimate seed", 0.999, 8, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSeedStream(g, append([]int32(nil), train...), tc.frac)
			if s.Stratified() != (tc.wantPos >= 0) {
				t.Fatalf("stratified %v", s.Stratified())
			}
			if tc.wantPos >= 0 {
				if share := s.Share(tc.size); share != float64(tc.wantPos)/float64(tc.size) {
					t.Errorf("share %v, batches hold %d of %d", share, tc.wantPos, tc.size)
				}
				if s.BaseRate() != 0.01 {
					t.Errorf("base rate %v, want 0.01", s.BaseRate())
				}
			} else if s.Shift(tc.size, 10) != 0 {
				t.Errorf("unstratified shift %v", s.Shift(tc.size, 10))
			}
			// Every batch holds wantPos laundering seeds, except that a
			// batch ends with the pass over either class: the one
			// finishing a pass over the 10 laundering seeds holds what
			// is left of it (and more legitimate ones), the one
			// finishing a pass over the 990 legitimate ones is short.
			rng := rand.New(rand.NewPCG(1, 1))
			seen := map[int32]int{}
			posDrawn, negDrawn, total := 0, 0, 0
			for b := 0; b < 40; b++ {
				batch := s.Next(tc.size, rng)
				in, pos := map[int32]bool{}, 0
				for _, e := range batch {
					if in[e] {
						t.Fatalf("batch %d: seed %d twice", b, e)
					}
					in[e] = true
					seen[e]++
					pos += int(g.Label[e])
				}
				total += len(batch)
				if tc.wantPos < 0 {
					if len(batch) != tc.size && total%1000 != 0 {
						t.Fatalf("batch %d: %d seeds, want %d", b, len(batch), tc.size)
					}
					continue
				}
				if want := min(tc.wantPos, 10-posDrawn%10); pos != want {
					t.Fatalf("batch %d: %d laundering seeds, want %d", b, pos, want)
				}
				posDrawn += pos
				negDrawn += len(batch) - pos
				if len(batch) != tc.size && negDrawn%990 != 0 {
					t.Fatalf("batch %d: %d seeds, want %d", b, len(batch), tc.size)
				}
			}
			if tc.wantPos < 0 && len(seen) != 1000 {
				t.Errorf("uniform passes covered %d of 1000 seeds", len(seen))
			}
			if tc.wantPos > 0 {
				for e := int32(0); e < 1000; e += 100 {
					if seen[e] == 0 {
						t.Errorf("laundering seed %d never drawn", e)
					}
				}
			}
		})
	}
}

// A stream with one class only falls back to uniform passes.
func TestSeedStreamOneClass(t *testing.T) {
	g := &amlworld.Graph{Label: make([]uint8, 10)}
	s := NewSeedStream(g, []int32{0, 1, 2, 3}, 0.1)
	if s.Stratified() || s.Shift(2, 10) != 0 {
		t.Fatalf("stratified %v, shift %v", s.Stratified(), s.Shift(2, 10))
	}
	if b := s.Next(3, rand.New(rand.NewPCG(1, 1))); len(b) != 3 {
		t.Fatalf("batch %v", b)
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
			flagged := batchLogit+MarginShift(tc.f, tc.pi, tc.w) > 0
			if flagged != (p > cut) {
				t.Errorf("f %v, pi %v, w %v: p(x) = %v flagged %v, want %v", tc.f, tc.pi, tc.w, p, flagged, p > cut)
			}
		}
	}
}

// The stream's shift is MarginShift of its batch share, its training base
// rate and the weight: 1 in 10 of a batch against 1 in 100 of the training
// transactions, laundering weighing w.
func TestSeedStreamShift(t *testing.T) {
	g, train := launderingEvery(1000, 100) // 10 laundering transactions in 1000
	s := NewSeedStream(g, train, 0.1)
	for _, tc := range []struct {
		size int
		w    float64
	}{{100, 10}, {512, 10}, {512, 1}, {96, 3}} {
		want := MarginShift(s.Share(tc.size), 0.01, tc.w)
		if got := s.Shift(tc.size, tc.w); got != want {
			t.Errorf("batch %d, w %v: shift %v, want %v", tc.size, tc.w, got, want)
		}
	}
	// At share 0.1 against 0.01 with weight 10 the shift is
	// log 10 + logit 0.01 − logit 0.1 = log(10·(1/99)·9) = log(90/99).
	if got, want := s.Shift(100, 10), math.Log(90.0/99); math.Abs(got-want) > 1e-12 {
		t.Errorf("shift %v, want %v", got, want)
	}
}
