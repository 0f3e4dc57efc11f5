package privacy

import (
	"context"
	"math"
	"slices"
	"testing"
)

// Statistical tests of the Gaussian sampler. Each uses a fixed seed, so it
// is deterministic; the thresholds are chosen so that a correct sampler
// would fail on a random seed with the stated probability:
//
//   - mean: |x̄| ≤ 4.5/√n (two-sided normal tail at 4.5σ: 6.8e-6);
//   - variance: |s² − 1| ≤ 4.5·√(2/n) (s² is asymptotically normal with
//     variance 2/n for normal data: 6.8e-6);
//   - Kolmogorov–Smirnov against Φ: √n·D ≤ 2.5 (Kolmogorov distribution,
//     P(K > 2.5) = 2Σ(−1)^(k−1)·e^(−2k²·6.25) ≈ 7.5e-6);
//   - tail mass: the fraction beyond |z| > 3 within 4.5 binomial standard
//     errors of 2·Φ(−3) (6.8e-6).

const sampleSize = 200_000

func checkStandardNormal(t *testing.T, z []float64) {
	t.Helper()
	n := float64(len(z))
	var sum, sq float64
	tail := 0
	for _, v := range z {
		sum += v
		if math.Abs(v) > 3 {
			tail++
		}
	}
	mean := sum / n
	for _, v := range z {
		sq += (v - mean) * (v - mean)
	}
	variance := sq / (n - 1)
	if lim := 4.5 / math.Sqrt(n); math.Abs(mean) > lim {
		t.Errorf("mean %v beyond ±%v", mean, lim)
	}
	if lim := 4.5 * math.Sqrt(2/n); math.Abs(variance-1) > lim {
		t.Errorf("variance %v beyond 1±%v", variance, lim)
	}
	p := 2 * normCDF(-3)
	if lim := 4.5 * math.Sqrt(p*(1-p)/n); math.Abs(float64(tail)/n-p) > lim {
		t.Errorf("tail mass %v, want %v±%v", float64(tail)/n, p, lim)
	}
	d := ksStatistic(z)
	k := math.Sqrt(n) * d
	if k > 2.5 {
		t.Errorf("Kolmogorov–Smirnov √n·D = %.3f > 2.5 (p ≈ %.2g)", k, kolmogorovPValue(k))
	}
	t.Logf("n=%d mean %+.5f variance %.5f tail>3σ %.5f KS √n·D %.3f (p ≈ %.2f)", len(z), mean, variance, float64(tail)/n, k, kolmogorovPValue(k))
}

// ksStatistic is sup_x |F_n(x) − Φ(x)|.
func ksStatistic(z []float64) float64 {
	s := slices.Clone(z)
	slices.Sort(s)
	n := float64(len(s))
	var d float64
	for i, v := range s {
		f := normCDF(v)
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d
}

// kolmogorovPValue is P(K > k) for the Kolmogorov distribution.
func kolmogorovPValue(k float64) float64 {
	var p float64
	for j := 1; j <= 100; j++ {
		term := 2 * math.Exp(-2*float64(j*j)*k*k)
		if j%2 == 0 {
			term = -term
		}
		p += term
	}
	return math.Min(1, math.Max(0, p))
}

func TestSamplerIsStandardNormal(t *testing.T) {
	seed := uint64(20260101)
	src := newNoiseSource(&seed)
	z := make([]float64, sampleSize)
	for i := range z {
		z[i] = src.normal()
	}
	checkStandardNormal(t, z)
}

// The noise a gate adds, divided by σ, is standard normal too (this also
// covers the float32 rounding of the released values).
func TestGateNoiseIsGaussian(t *testing.T) {
	seed := uint64(7)
	g := newTestGate(t, Config{Seed: &seed}, NewMemLedger())
	const sigma, dim = 2.5, 1000
	rows := make([][]float32, sampleSize/dim)
	for i := range rows {
		rows[i] = make([]float32, dim) // zeros: clipping leaves them alone
	}
	r, err := g.Release(context.Background(), Request{Channel: ChannelModel, Rows: rows, Sigma: sigma, Clip: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := r.Data()
	z := make([]float64, len(data))
	for i, v := range data {
		z[i] = float64(v) / sigma
	}
	checkStandardNormal(t, z)
}

func TestNoiseSeeding(t *testing.T) {
	draw := func(src *noiseSource) []float64 {
		out := make([]float64, 8)
		for i := range out {
			out[i] = src.normal()
		}
		return out
	}
	s1, s2 := uint64(1), uint64(2)
	if !slices.Equal(draw(newNoiseSource(&s1)), draw(newNoiseSource(&s1))) {
		t.Error("a fixed seed is not reproducible")
	}
	if slices.Equal(draw(newNoiseSource(&s1)), draw(newNoiseSource(&s2))) {
		t.Error("different seeds give the same noise")
	}
	if slices.Equal(draw(newNoiseSource(nil)), draw(newNoiseSource(nil))) {
		t.Error("two crypto/rand seeds give the same noise")
	}
	src := newNoiseSource(&s1)
	for range 100000 {
		if u := src.uniform53(); !(u > 0 && u <= 1) {
			t.Fatalf("uniform %v outside (0, 1]", u)
		}
	}
}

func BenchmarkAddGaussian(b *testing.B) {
	src := newNoiseSource(nil)
	buf := make([]float32, 64*10000)
	b.SetBytes(int64(4 * len(buf)))
	for b.Loop() {
		src.addGaussian(buf, 1)
	}
}

// Under a fixed seed a release's noise depends on what it releases
// (channel, round, index in the round), not on the gate's history: a gate
// rebuilt from the ledger after a crash adds the noise an uninterrupted
// gate adds, and no two releases share a stream.
func TestSeededNoiseSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	seed := uint64(42)
	type rel struct {
		ch    Channel
		round uint64
	}
	plan := []rel{{ChannelModel, 1}, {ChannelMargin, 1}, {ChannelMargin, 1}, {ChannelModel, 2}, {ChannelMargin, 2}, {ChannelModel, 3}}
	release := func(g *Gate, r rel) []float32 {
		t.Helper()
		out, err := g.Release(ctx, Request{Channel: r.ch, Round: r.round, Flat: make([]float32, 4), Dim: 4, Sigma: 1, Clip: 1})
		if err != nil {
			t.Fatal(err)
		}
		return out.Data()
	}
	whole := newTestGate(t, Config{Seed: &seed}, NewMemLedger())
	var want [][]float32
	for _, r := range plan {
		want = append(want, release(whole, r))
	}
	for crashAt := 1; crashAt < len(plan); crashAt++ {
		l := NewMemLedger()
		g := newTestGate(t, Config{Seed: &seed}, l)
		for i, r := range plan {
			if i == crashAt {
				g = newTestGate(t, Config{Seed: &seed}, l) // the restart replays the ledger
			}
			if got := release(g, r); !slices.Equal(got, want[i]) {
				t.Fatalf("crash before release %d: release %d (%s round %d) noise %v, uninterrupted %v", crashAt, i, r.ch, r.round, got, want[i])
			}
		}
	}
	for i := range want {
		for j := range i {
			if slices.Equal(want[i], want[j]) {
				t.Errorf("releases %d and %d share a noise stream", j, i)
			}
		}
	}
	other := uint64(43)
	if got := release(newTestGate(t, Config{Seed: &other}, NewMemLedger()), plan[0]); slices.Equal(got, want[0]) {
		t.Error("another seed gives the same noise")
	}
}
