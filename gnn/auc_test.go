package gnn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestROCAUC(t *testing.T) {
	tests := []struct {
		name   string
		scores []float64
		pos    []bool
		want   float64
	}{
		{"perfect", []float64{0.1, 0.2, 0.8, 0.9}, []bool{false, false, true, true}, 1},
		{"reversed", []float64{0.9, 0.8, 0.2, 0.1}, []bool{false, false, true, true}, 0},
		{"all tied", []float64{0.5, 0.5, 0.5, 0.5}, []bool{false, true, false, true}, 0.5},
		// sklearn.metrics.roc_auc_score([0,0,1,1],[0.1,0.4,0.35,0.8]) = 0.75
		{"sklearn example", []float64{0.1, 0.4, 0.35, 0.8}, []bool{false, false, true, true}, 0.75},
		// one tie between a positive and a negative counts 1/2: pairs (p,n): (0.5,0.5)=.5, (0.5,0.1)=1, (0.9,*)=1,1 → 3.5/4
		{"tie across classes", []float64{0.1, 0.5, 0.5, 0.9}, []bool{false, false, true, true}, 0.875},
		{"no positives", []float64{0.1, 0.2}, []bool{false, false}, math.NaN()},
		{"nan score", []float64{math.NaN(), 0.2}, []bool{true, false}, math.NaN()},
	}
	for _, tt := range tests {
		got := ROCAUC(tt.scores, tt.pos)
		if math.IsNaN(tt.want) != math.IsNaN(got) || !math.IsNaN(tt.want) && math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: ROCAUC = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestROCAUCPairs checks the rank formula against counting every
// positive–negative pair on random scores with many ties.
func TestROCAUCPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 2 + rng.IntN(60)
		s := make([]float64, n)
		p := make([]bool, n)
		for i := range s {
			s[i] = float64(rng.IntN(8))
			p[i] = rng.IntN(3) == 0
		}
		var wins float64
		var pairs int
		for i := range s {
			for j := range s {
				if p[i] && !p[j] {
					pairs++
					switch {
					case s[i] > s[j]:
						wins++
					case s[i] == s[j]:
						wins += 0.5
					}
				}
			}
		}
		got := ROCAUC(s, p)
		if pairs == 0 {
			if !math.IsNaN(got) {
				t.Fatalf("trial %d: one class only, got %v", trial, got)
			}
			continue
		}
		if want := wins / float64(pairs); math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: ROCAUC = %v, pair count gives %v", trial, got, want)
		}
	}
}
