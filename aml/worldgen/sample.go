package worldgen

import (
	"math"
	"math/rand/v2"
)

// alias is Vose's alias table: O(1) draws from a fixed discrete
// distribution, used for every weighted choice over accounts.
type alias struct {
	prob  []float64
	alias []int32
}

// newAlias builds the table for non-negative weights w (not all zero).
func newAlias(w []float64) *alias {
	n := len(w)
	a := &alias{prob: make([]float64, n), alias: make([]int32, n)}
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	scaled := make([]float64, n)
	small := make([]int32, 0, n)
	large := make([]int32, 0, n)
	for i, x := range w {
		scaled[i] = x * float64(n) / sum
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.prob[s], a.alias[s] = scaled[s], l
		scaled[l] += scaled[s] - 1
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, l := range large {
		a.prob[l] = 1
	}
	for _, s := range small { // rounding leftovers
		a.prob[s] = 1
	}
	return a
}

// draw returns an index with probability proportional to its weight.
func (a *alias) draw(r *rand.Rand) int {
	i := r.IntN(len(a.prob))
	if r.Float64() < a.prob[i] {
		return i
	}
	return int(a.alias[i])
}

// pool is a set of account indices with an alias table over their weights
// (nil table: uniform).
type pool struct {
	ids []int32
	tab *alias
}

func newPool(ids []int32, weight func(int32) float64) pool {
	p := pool{ids: ids}
	if weight != nil && len(ids) > 0 {
		w := make([]float64, len(ids))
		for i, id := range ids {
			w[i] = weight(id)
		}
		p.tab = newAlias(w)
	}
	return p
}

func (p *pool) empty() bool { return len(p.ids) == 0 }

func (p *pool) draw(r *rand.Rand) int32 {
	if p.tab != nil {
		return p.ids[p.tab.draw(r)]
	}
	return p.ids[r.IntN(len(p.ids))]
}

// logNormal draws exp(N(log median, sigma²)).
func logNormal(r *rand.Rand, median, sigma float64) float64 {
	return median * math.Exp(sigma*r.NormFloat64())
}

// pick draws an index from a small table of weights (linear scan).
func pick(r *rand.Rand, w []float64) int {
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	u := r.Float64() * sum
	for i, x := range w {
		if u < x {
			return i
		}
		u -= x
	}
	return len(w) - 1
}

// splitmix is the SplitMix64 finalizer, used to derive per-entity
// constants and RNG seeds.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// stream returns the PCG for one purpose of a seeded world.
func stream(seed, purpose uint64) *rand.Rand {
	return rand.New(rand.NewPCG(splitmix(seed), splitmix(seed^purpose*0x632be59bd9b4e019)))
}

// largestRemainder splits total into integer parts proportional to w.
func largestRemainder(total int64, w []float64) []int64 {
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	out := make([]int64, len(w))
	if sum <= 0 {
		return out
	}
	type rem struct {
		i int
		f float64
	}
	rems := make([]rem, len(w))
	var given int64
	for i, x := range w {
		exact := float64(total) * x / sum
		out[i] = int64(math.Floor(exact))
		given += out[i]
		rems[i] = rem{i, exact - math.Floor(exact)}
	}
	for given < total {
		best := -1
		for k := range rems {
			if best < 0 || rems[k].f > rems[best].f {
				best = k
			}
		}
		out[rems[best].i]++
		rems[best].f = -1
		given++
	}
	return out
}
