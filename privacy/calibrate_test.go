package privacy

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// clusteredEmbeddings draws n points in R^dim from a mixture of Gaussian
// clusters with different spreads, like trained embeddings: dense cores and
// outliers, so d_k varies over an order of magnitude.
func clusteredEmbeddings(n, dim int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	const clusters = 40
	centers := make([]float64, clusters*dim)
	for i := range centers {
		centers[i] = r.NormFloat64()
	}
	out := make([]float32, n*dim)
	for i := range n {
		c := r.IntN(clusters)
		spread := 0.05 + 0.6*float64(c)/clusters
		if r.IntN(50) == 0 {
			spread = 2 // outliers
		}
		for j := range dim {
			out[i*dim+j] = float32(centers[c*dim+j] + spread*r.NormFloat64())
		}
	}
	return out
}

// naiveKNN sorts all distances per point: the reference implementation.
func naiveKNN(flat []float32, dim, k int) []float64 {
	x, err := unitRows(flat, dim)
	if err != nil {
		panic(err)
	}
	n := len(x) / dim
	out := make([]float64, n)
	d := make([]float64, 0, n)
	for i := range n {
		d = d[:0]
		for j := range n {
			if j == i {
				continue
			}
			var s float64
			for t := range dim {
				v := x[i*dim+t] - x[j*dim+t]
				s += v * v
			}
			d = append(d, math.Sqrt(s))
		}
		slices.Sort(d)
		out[i] = d[k-1]
	}
	return out
}

func TestKNNDistancesMatchNaive(t *testing.T) {
	for _, tc := range []struct{ n, dim, k, workers int }{
		{n: 300, dim: 8, k: 5, workers: 2},
		{n: 301, dim: 7, k: 1, workers: 1},    // odd sizes: ragged kernel edges
		{n: 67, dim: 3, k: 66, workers: 3},    // k = n−1: the farthest point
		{n: 1000, dim: 64, k: 50, workers: 2}, // several data blocks
	} {
		flat := clusteredEmbeddings(tc.n, tc.dim, uint64(tc.n))
		got, err := KNNDistances(flat, tc.dim, tc.k, tc.workers)
		if err != nil {
			t.Fatal(err)
		}
		want := naiveKNN(flat, tc.dim, tc.k)
		// The query-by-query search (used for samples) agrees too.
		x, _ := unitRows(flat, tc.dim)
		queries := sampleIndices(tc.n, tc.n/3, 1)
		for qi, d := range knnDistances(x, tc.dim, tc.k, queries, tc.workers) {
			if math.Abs(d-want[queries[qi]]) > 1e-7 {
				t.Fatalf("%+v: query %d: d_k %v, naive %v", tc, queries[qi], d, want[queries[qi]])
			}
		}
		for i := range want {
			// Dot-product distances lose precision only through
			// 2−2·dot: absolute error ~1e-8 near 0.
			if math.Abs(got[i]-want[i]) > 1e-7 {
				t.Fatalf("%+v: point %d: d_k %v, naive %v", tc, i, got[i], want[i])
			}
		}
	}
}

func TestPercentile(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	for _, tc := range []struct{ q, want float64 }{{0, 1}, {50, 3}, {90, 4.6}, {100, 5}, {12.5, 1.5}} {
		if got := Percentile(x, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Percentile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("empty input should give NaN")
	}
}

func TestCalibrateExact(t *testing.T) {
	const n, dim = 700, 12
	flat := clusteredEmbeddings(n, dim, 3)
	c, err := Calibrate(flat, dim, CalibrateOptions{K: 10})
	if err != nil {
		t.Fatal(err)
	}
	all := naiveKNN(flat, dim, 10)
	slices.Sort(all)
	if c.K != 10 || c.N != n || c.Sampled != 0 || !slices.Equal(c.Q, DefaultPercentiles()) {
		t.Fatalf("calibration header %+v", c)
	}
	for i, q := range c.Q {
		if want := Percentile(all, q); math.Abs(c.Rho[i]-want) > 1e-7 {
			t.Errorf("ρ_%v = %v, want %v", q, c.Rho[i], want)
		}
	}
	// Scaling rows does not change anything: rows are normalized first.
	scaled := slices.Clone(flat)
	for i := range scaled {
		scaled[i] *= 3
	}
	c2, err := Calibrate(scaled, dim, CalibrateOptions{K: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Rho {
		if math.Abs(c.Rho[i]-c2.Rho[i]) > 1e-7 {
			t.Errorf("ρ changed under scaling: %v vs %v", c.Rho[i], c2.Rho[i])
		}
	}
}

func TestCalibrateRejects(t *testing.T) {
	ok := clusteredEmbeddings(60, 4, 1)
	zero := slices.Clone(ok)
	clear(zero[8:12])
	nan := slices.Clone(ok)
	nan[5] = float32(math.NaN())
	for name, tc := range map[string]struct {
		flat []float32
		dim  int
		opt  CalibrateOptions
	}{
		"ragged":       {ok[:7], 4, CalibrateOptions{}},
		"too few":      {ok, 4, CalibrateOptions{K: 60}},
		"zero row":     {zero, 4, CalibrateOptions{K: 5}},
		"nan":          {nan, 4, CalibrateOptions{K: 5}},
		"bad q":        {ok, 4, CalibrateOptions{K: 5, Q: []float64{0}}},
		"bad workers":  {ok, 4, CalibrateOptions{K: 5, Workers: -1}},
		"dim not set":  {ok, 0, CalibrateOptions{K: 5}},
		"bad max":      {ok, 4, CalibrateOptions{K: 5, MaxExact: -3}},
		"bad samples:": {ok, 4, CalibrateOptions{K: 5, Samples: -3}},
	} {
		if _, err := Calibrate(tc.flat, tc.dim, tc.opt); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
}

// TestCalibrateSampledError measures the sampling approximation against
// the exact percentiles, on 12,000 clustered points with MaxExact 4,000
// (so 1,333 sampled queries, the cost of 4,000 exact ones; the same ratio
// as 60,000 points at the default MaxExact of 20,000), over 10 sample seeds.
//
// The distribution-free measure is the rank error: the fraction of exact
// d_k values below the sampled ρ_q, minus q/100. For a uniform sample of S
// points its standard error is sqrt(q(1−q)/S); the test fails beyond 4.5
// standard errors (a false-failure rate of about 7e-6 per check for a
// correct sampler). The relative error in ρ itself depends on the density
// of d_k and is logged. The sampled maximum can only undershoot.
func TestCalibrateSampledError(t *testing.T) {
	if testing.Short() {
		t.Skip("O(n²) exact reference")
	}
	const n, dim, maxExact = 12000, 16, 4000
	flat := clusteredEmbeddings(n, dim, 42)
	all, err := KNNDistances(flat, dim, 50, 2)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	exact := Calibration{Q: DefaultPercentiles()}
	for _, q := range exact.Q {
		exact.Rho = append(exact.Rho, Percentile(all, q))
	}
	s := maxExact * maxExact / n
	worstRel := make([]float64, len(exact.Q))
	worstRank := make([]float64, len(exact.Q))
	for seed := range uint64(10) {
		approx, err := Calibrate(flat, dim, CalibrateOptions{MaxExact: maxExact, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if approx.Sampled != s {
			t.Fatalf("sampled %d queries, want %d", approx.Sampled, s)
		}
		for i, q := range exact.Q {
			rel := (approx.Rho[i] - exact.Rho[i]) / exact.Rho[i]
			if math.Abs(rel) > math.Abs(worstRel[i]) {
				worstRel[i] = rel
			}
			if q == 100 {
				if approx.Rho[i] > exact.Rho[i] {
					t.Errorf("sampled maximum %v above the exact maximum %v", approx.Rho[i], exact.Rho[i])
				}
				continue
			}
			below, _ := slices.BinarySearch(all, approx.Rho[i])
			rank := float64(below)/float64(n) - q/100
			if math.Abs(rank) > math.Abs(worstRank[i]) {
				worstRank[i] = rank
			}
			se := math.Sqrt(q / 100 * (1 - q/100) / float64(s))
			if math.Abs(rank) > 4.5*se {
				t.Errorf("seed %d q=%v: rank error %+.4f beyond 4.5 standard errors (%.4f)", seed, q, rank, 4.5*se)
			}
		}
	}
	for i, q := range exact.Q {
		t.Logf("q=%3v exact ρ=%.4f sampled (S=%d): worst relative error %+.2f%%, worst rank error %+.4f",
			q, exact.Rho[i], s, 100*worstRel[i], worstRank[i])
	}
}

func BenchmarkCalibrateExact20k(b *testing.B) {
	const n, dim = 20000, 64
	flat := clusteredEmbeddings(n, dim, 7)
	b.ResetTimer()
	for b.Loop() {
		c, err := Calibrate(flat, dim, CalibrateOptions{})
		if err != nil || c.Sampled != 0 {
			b.Fatal(err, c.Sampled)
		}
	}
	b.ReportMetric(float64(n)*float64(n-1)/(b.Elapsed().Seconds()/float64(b.N))/1e6, "Mpairs/s")
}

func BenchmarkCalibrateSampled100k(b *testing.B) {
	const n, dim = 100000, 64
	flat := clusteredEmbeddings(n, dim, 7)
	b.ResetTimer()
	for b.Loop() {
		c, err := Calibrate(flat, dim, CalibrateOptions{})
		if err != nil || c.Sampled != 4000 {
			b.Fatal(err, c.Sampled)
		}
	}
}
