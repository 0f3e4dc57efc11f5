package edgegnn

import (
	"math/rand/v2"

	"graphfed/aml/amlworld"
	"graphfed/gnn"
)

// EvalSample is a split's transactions as scored when scoring all of them
// costs too much: every laundering transaction and a fixed seeded sample of
// the legitimate ones, whose counts weigh NegScale so that F1 computed from
// them (WeightedF1) estimates the full split's. Laundering is rare, so
// keeping all of it keeps the estimate's variance where it matters.
type EvalSample struct {
	Seeds    []int32
	NegScale float64 // legitimate transactions in the split / in Seeds
}

// SampleEval draws the evaluation sample of split s of g: all of s when
// limit < 0 or its legitimate transactions number at most limit. s may be
// reordered.
func SampleEval(g *amlworld.Graph, s []int32, limit int, rng *rand.Rand) EvalSample {
	var pos, neg []int32
	for _, e := range s {
		if g.Label[e] != 0 {
			pos = append(pos, e)
		} else {
			neg = append(neg, e)
		}
	}
	if limit < 0 || len(neg) <= limit {
		return EvalSample{Seeds: s, NegScale: 1}
	}
	// A partial Fisher–Yates shuffle picks limit of them uniformly.
	for i := 0; i < limit; i++ {
		j := i + rng.IntN(len(neg)-i)
		neg[i], neg[j] = neg[j], neg[i]
	}
	return EvalSample{Seeds: append(pos, neg[:limit]...), NegScale: float64(len(neg)) / float64(limit)}
}

// WeightedF1 is the laundering F1 of s with its legitimate counts (FP)
// weighed by negScale: the full split's F1 as estimated from an
// EvalSample.
func WeightedF1(s Scores, negScale float64) float64 {
	return gnn.F1(float64(s.TP), float64(s.FP)*negScale, float64(s.FN))
}
