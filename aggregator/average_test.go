package aggregator

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// naiveAverage is the average as it was written before blocking: one
// float64 array, the clients in id order.
func naiveAverage(cs []Contribution, n int) ([]float32, float64) {
	sorted := append([]Contribution(nil), cs...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].Client < sorted[b].Client })
	acc := make([]float64, n)
	var total float64
	for _, c := range sorted {
		if c.Weight <= 0 || len(c.Params) != n {
			continue
		}
		total += c.Weight
		for i, x := range c.Params {
			acc[i] += c.Weight * float64(x)
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

// The blocked, parallel average is bit for bit the plain loop's, whatever
// the size (block edges, below and above the parallel threshold), the
// arrival order and the weights that do not count.
func TestAverageMatchesThePlainLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, clients int }{{1, 1}, {5, 3}, {averageBlock - 1, 4}, {averageBlock + 1, 2}, {100_003, 7}, {1 << 18, 3}} {
		var cs []Contribution
		for c := range tc.clients {
			v := make([]float32, tc.n)
			for i := range v {
				v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
			}
			cs = append(cs, Contribution{Client: string(rune('z' - c)), Weight: float64(1 + r.IntN(1000)), Params: v})
		}
		cs = append(cs, Contribution{Client: "neg", Weight: -1, Params: make([]float32, tc.n)},
			Contribution{Client: "short", Weight: 5, Params: make([]float32, tc.n+1)})
		r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		got, gw := weightedAverage(cs, tc.n)
		want, ww := naiveAverage(cs, tc.n)
		if gw != ww || len(got) != len(want) {
			t.Fatalf("n=%d: total %v, want %v", tc.n, gw, ww)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: [%d] = %v, want %v", tc.n, i, got[i], want[i])
			}
		}
	}
	if got, w := weightedAverage([]Contribution{{Client: "a", Weight: 0, Params: []float32{1}}}, 1); got != nil || w != 0 {
		t.Fatalf("no weight: %v, %v", got, w)
	}
}

// BenchmarkAverage8x1M is a FedAvg close of 8 updates of 1M parameters.
func BenchmarkAverage8x1M(b *testing.B) {
	const n = 1 << 20
	var cs []Contribution
	for c := range 8 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%97) * 0.01
		}
		cs = append(cs, Contribution{Client: string(rune('a' + c)), Weight: float64(10 + c), Params: v})
	}
	b.SetBytes(8 * 4 * n)
	b.Run("blocked", func(b *testing.B) {
		for b.Loop() {
			weightedAverage(cs, n)
		}
	})
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			naiveAverage(cs, n)
		}
	})
}
