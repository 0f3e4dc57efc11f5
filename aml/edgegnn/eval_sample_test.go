package edgegnn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSampleEval(t *testing.T) {
	g, all := launderingEvery(100, 10) // 10 laundering, 90 legitimate
	for _, tc := range []struct {
		name      string
		limit     int
		wantSeeds int
		wantScale float64
	}{
		{"all when negative", -1, 100, 1},
		{"all when the legitimate fit", 90, 100, 1},
		{"sampled", 30, 40, 3},
		{"one legitimate", 1, 11, 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := SampleEval(g, slices.Clone(all), tc.limit, rand.New(rand.NewPCG(1, 2)))
			if len(s.Seeds) != tc.wantSeeds || s.NegScale != tc.wantScale {
				t.Fatalf("%d seeds, scale %v; want %d, %v", len(s.Seeds), s.NegScale, tc.wantSeeds, tc.wantScale)
			}
			pos, seen := 0, map[int32]bool{}
			for _, e := range s.Seeds {
				if seen[e] {
					t.Fatalf("seed %d twice", e)
				}
				seen[e] = true
				pos += int(g.Label[e])
			}
			if pos != 10 {
				t.Errorf("%d laundering seeds kept, want all 10", pos)
			}
		})
	}
}

// WeightedF1 of a sample whose legitimate rows stand for negScale each is
// the F1 of the split with those counts.
func TestWeightedF1(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     Scores
		scale float64
		want  float64
	}{
		{"unweighted", Scores{TP: 6, FP: 2, FN: 2}, 1, 0.75},
		{"legitimate weighed", Scores{TP: 6, FP: 2, FN: 2, TN: 90}, 4, 12.0 / 22},
		{"no true positives", Scores{FP: 3, FN: 5}, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WeightedF1(tc.s, tc.scale); math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("WeightedF1 = %v, want %v", got, tc.want)
			}
		})
	}
}
