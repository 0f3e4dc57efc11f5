package aggregator

import "sort"

// contribution is one update counted in a round's aggregate.
type contribution struct {
	client string
	weight float64 // sample weight times staleness factor
	params []float32
	grad   []float32
}

// weightedAverage returns Σ w_i·θ_i / Σ w_i, accumulated in float64 in
// client-id order so that the result does not depend on arrival order:
// the final model must be a deterministic function of the seed.
func weightedAverage(cs []contribution, n int) ([]float32, float64) {
	return average(cs, n, func(c contribution) []float32 { return c.params })
}

// weightedGradAverage averages the gradient estimators of the contributions
// that carry one, with the same weights; nil when none does.
func weightedGradAverage(cs []contribution, n int) []float32 {
	g, _ := average(cs, n, func(c contribution) []float32 { return c.grad })
	return g
}

func average(cs []contribution, n int, vec func(contribution) []float32) ([]float32, float64) {
	sorted := append([]contribution(nil), cs...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].client < sorted[b].client })
	acc := make([]float64, n)
	var total float64
	for _, c := range sorted {
		v := vec(c)
		if c.weight <= 0 || len(v) != n {
			continue
		}
		total += c.weight
		for i, x := range v {
			acc[i] += c.weight * float64(x)
		}
	}
	if total == 0 {
		return nil, 0
	}
	out := make([]float32, n)
	for i, x := range acc {
		out[i] = float32(x / total)
	}
	return out, total
}
