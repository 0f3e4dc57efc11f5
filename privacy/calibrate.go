package privacy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
)

// Metric-DP calibration (CE-FedGNN §3.3, "Choice of ρ"): the distance ρ at
// which released embeddings are indistinguishable is the q-th percentile of
// d_k(v), the L2 distance from each released embedding v to its k-th
// nearest neighbour among all L2-normalized released embeddings (k = 50,
// q ∈ {50, 90, 95, 99, 100}). The claim reads: for q% of nodes, the release
// is (ε(ρ_q), δ)-indistinguishable from each of its k nearest neighbours.
//
// Exact computation is brute force, O(n²·d): unit vectors have
// d² = 2 − 2·⟨u, v⟩, so distances come from blocked dot products in float64,
// split over goroutines; with all points as queries each pair's dot
// product is computed once and serves both points. Up to MaxExact embeddings (default 20,000) every
// d_k is computed. Beyond, a uniform random sample of query points
// (without replacement) gets its exact d_k against all n points, so every
// sampled value is exact and only the percentile is estimated; the sample
// size keeps the cost at that of MaxExact exact points. The estimate of a
// percentile q < 100 has a rank error of about sqrt(q(1−q)/S); the
// estimate of the 100th percentile (the sample maximum) can only be too
// low, so a sampled ρ_100 is a lower bound, flagged by Calibration.Sampled.
// calibrate_test.go measures the error against exact percentiles.

// DefaultPercentiles are the percentiles of CE-FedGNN Table 6.
func DefaultPercentiles() []float64 { return []float64{50, 90, 95, 99, 100} }

// CalibrateOptions tune Calibrate; zero values take the defaults.
type CalibrateOptions struct {
	K        int       // neighbour rank, default 50
	Q        []float64 // percentiles in (0, 100], default DefaultPercentiles()
	MaxExact int       // largest n computed exactly, default 20000
	Samples  int       // query points beyond MaxExact, default max(1000, MaxExact²/n)
	Seed     uint64    // seed of the query sample (not a privacy mechanism)
	Workers  int       // goroutines, default 2
}

func (o *CalibrateOptions) defaults() {
	if o.K == 0 {
		o.K = 50
	}
	if o.Q == nil {
		o.Q = DefaultPercentiles()
	}
	if o.MaxExact == 0 {
		o.MaxExact = 20000
	}
	if o.Workers == 0 {
		o.Workers = 2
	}
}

// Calibrate measures the metric-DP distances of n = len(flat)/dim released
// embeddings (row-major; they are L2-normalized here, so raw or released
// values both work; a zero row is an error).
func Calibrate(flat []float32, dim int, opt CalibrateOptions) (Calibration, error) {
	const op = "calibrate"
	opt.defaults()
	if dim <= 0 || len(flat)%dim != 0 {
		return Calibration{}, errorf(op, ErrInvalid, fmt.Sprintf("length %d is not a multiple of dim %d", len(flat), dim))
	}
	n := len(flat) / dim
	switch {
	case opt.K < 1 || n <= opt.K:
		return Calibration{}, errorf(op, ErrInvalid, fmt.Sprintf("need more than k=%d embeddings, have %d", opt.K, n))
	case opt.MaxExact < 1 || opt.Samples < 0 || opt.Workers < 1:
		return Calibration{}, errorf(op, ErrInvalid, fmt.Sprintf("max exact %d samples %d workers %d", opt.MaxExact, opt.Samples, opt.Workers))
	}
	for _, q := range opt.Q {
		if !(q > 0 && q <= 100) {
			return Calibration{}, errorf(op, ErrInvalid, fmt.Sprintf("percentile %v outside (0, 100]", q))
		}
	}
	x, err := unitRows(flat, dim)
	if err != nil {
		return Calibration{}, wrapErr(op, ErrInvalid, "", err)
	}
	var queries []int
	sampled := 0
	if n > opt.MaxExact {
		s := opt.Samples
		if s == 0 {
			s = max(1000, int(int64(opt.MaxExact)*int64(opt.MaxExact)/int64(n)))
		}
		s = min(s, n)
		queries = sampleIndices(n, s, opt.Seed)
		sampled = s
	}
	d := knnDistances(x, dim, opt.K, queries, opt.Workers)
	slices.Sort(d)
	c := Calibration{K: opt.K, N: n, Sampled: sampled, Q: slices.Clone(opt.Q), Rho: make([]float64, len(opt.Q))}
	for i, q := range opt.Q {
		c.Rho[i] = Percentile(d, q)
	}
	return c, nil
}

// KNNDistances returns, for every row of flat (n rows of dim values, each
// L2-normalized first), the exact L2 distance to its k-th nearest other
// row, computed with the given number of goroutines.
func KNNDistances(flat []float32, dim, k, workers int) ([]float64, error) {
	const op = "knn distances"
	if dim <= 0 || len(flat)%dim != 0 || k < 1 || len(flat)/dim <= k || workers < 1 {
		return nil, errorf(op, ErrInvalid, fmt.Sprintf("%d values, dim %d, k %d, workers %d", len(flat), dim, k, workers))
	}
	x, err := unitRows(flat, dim)
	if err != nil {
		return nil, wrapErr(op, ErrInvalid, "", err)
	}
	return knnDistances(x, dim, k, nil, workers), nil
}

// Percentile is the q-th percentile (0 ≤ q ≤ 100) of ascending values with
// linear interpolation between closest ranks (NumPy's default).
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := float64(len(sorted)-1) * q / 100
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

func unitRows(flat []float32, dim int) ([]float64, error) {
	x := make([]float64, len(flat))
	for i := 0; i < len(flat); i += dim {
		var s float64
		for _, v := range flat[i : i+dim] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("row %d has a non-finite value", i/dim)
			}
			s += float64(v) * float64(v)
		}
		if s == 0 {
			return nil, fmt.Errorf("row %d is zero and has no direction", i/dim)
		}
		inv := 1 / math.Sqrt(s)
		for j, v := range flat[i : i+dim] {
			x[i+j] = float64(v) * inv
		}
	}
	return x, nil
}

// sampleIndices draws s distinct indices of [0, n) uniformly (partial
// Fisher–Yates), in ascending order.
func sampleIndices(n, s int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := range s {
		j := i + r.IntN(n-i)
		p[i], p[j] = p[j], p[i]
	}
	out := p[:s:s]
	slices.Sort(out)
	return out
}

// Block sizes of the brute-force search: a block of data rows (dataBlock·d
// float64s, 128 KiB at d = 64) stays in cache while a block of queries
// runs against it.
const (
	queryBlock = 64
	dataBlock  = 256
)

// knnDistances computes d_k for the given query rows (nil: all rows, by
// the symmetric search) of the unit rows x, against all rows but the query
// itself.
func knnDistances(x []float64, dim, k int, queries []int, workers int) []float64 {
	if queries == nil {
		return knnAll(x, dim, k, workers)
	}
	out := make([]float64, len(queries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newKNNWorker(dim, k)
			for {
				b := int(next.Add(1)-1) * queryBlock
				if b >= len(queries) {
					return
				}
				e := min(b+queryBlock, len(queries))
				w.run(x, queries[b:e], out[b:e])
			}
		}()
	}
	wg.Wait()
	return out
}
