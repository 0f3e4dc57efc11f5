package amllearner

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Pooling n noisy releases of the same rows leaves the noise variance of
// the running mean at the predicted share of one release's: 1/n while the
// weights are 1/n, then the moving average's w/(2−w) in the limit; and
// releaseAlpha, measured on the pooled rows, rises to match. Weight 1, or a
// release reliable enough to read alone, keeps the latest release only.
func TestPoolReleaseNoise(t *testing.T) {
	const L, H, rowsN, sigma = 2, 16, 400, 0.5
	W := H + 1
	rng := rand.New(rand.NewPCG(3, 4))
	clean := make([]float32, 0, rowsN*L*W)
	for range rowsN {
		h := make([]float32, L*H)
		for i := range h {
			h[i] = float32(rng.NormFloat64())
		}
		clean = packEstimate(clean, h, []float64{4, 4}, uniformLayout(L, H))
	}
	for _, tc := range []struct {
		name      string
		releases  int
		minWeight float64
		fresh     []float32 // each new release's own reliability per layer
		wantVar   float64   // noise variance of the pooled rows, as a share of one release's
	}{
		{"one release", 1, 0.25, []float32{0.1, 0.1}, 1},
		{"mean of four", 4, 0.25, []float32{0.1, 0.1}, 1.0 / 4},
		{"moving average in the limit", 60, 0.25, []float32{0.1, 0.1}, 0.25 / (2 - 0.25)},
		{"latest only", 10, 1, []float32{0.1, 0.1}, 1},
		{"a clean release replaces", 10, 0.25, []float32{1, 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pooled := make([]float32, len(clean))
			for n := 1; n <= tc.releases; n++ {
				noisy := make([]float32, len(clean))
				for i, x := range clean {
					noisy[i] = x + float32(sigma*rng.NormFloat64())
				}
				if n == 1 {
					copy(pooled, noisy)
					continue
				}
				for r := range rowsN {
					poolRelease(pooled[r*L*W:(r+1)*L*W], noisy[r*L*W:(r+1)*L*W], n, []float64{tc.minWeight, tc.minWeight}, tc.fresh, uniformLayout(L, H))
				}
			}
			var ss float64
			for i, x := range pooled {
				d := float64(x - clean[i])
				ss += d * d
			}
			got := ss / float64(len(clean)) / (sigma * sigma)
			if math.Abs(got-tc.wantVar) > 0.08*tc.wantVar {
				t.Fatalf("pooled noise variance %.4f of one release's, want %.4f", got, tc.wantVar)
			}
			// α = 1/(1 + W·L·σ²·share), what releaseAlpha should read.
			wantAlpha := 1 / (1 + float64(W*L)*sigma*sigma*tc.wantVar)
			for k, a := range releaseAlpha(pooled, rowsN, uniformLayout(L, H)) {
				if math.Abs(float64(a)-wantAlpha) > 0.1*wantAlpha {
					t.Fatalf("layer %d: α %.4f on the pooled rows, want about %.4f", k, a, wantAlpha)
				}
			}
		})
	}
}

// A bank that receives the same account twice reads the mean of the two
// releases (through the 8-bit store), and α is measured on that mean.
func TestAMLReceivePoolsReleases(t *testing.T) {
	banks := amlBanks(t)
	ids := slices.Sorted(maps.Keys(banks))
	aID, bID := ids[0], ids[1]
	a, err := New(banks[aID], Config{Hidden: 8, BatchSize: 64, FanOut: []int{3, 3}, Seed: 1, Release: ReleaseHidden})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(banks[bID], Config{Hidden: 8, BatchSize: 64, FanOut: []int{3, 3}, Seed: 1, Release: ReleaseHidden})
	if err != nil {
		t.Fatal(err)
	}
	a.Train(20)
	gids, rows, dim := a.Boundary(bID)
	if len(gids) == 0 {
		t.Fatal("bank released nothing")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	first, second := slices.Clone(rows), slices.Clone(rows)
	for i := range rows {
		first[i] += float32(0.3 * rng.NormFloat64())
		second[i] += float32(0.3 * rng.NormFloat64())
	}
	// At σ = 0.3 on rows of width 18 a release alone has α ≈ 0.38 < 1/2,
	// so the second enters with weight 1/2.
	if al := releaseAlpha(second, len(gids), uniformLayout(2, 8)); al[0] >= 0.5 || al[1] >= 0.5 {
		t.Fatalf("test release too clean: α %v", al)
	}
	if err := b.Receive(aID, gids, first, dim); err != nil {
		t.Fatal(err)
	}
	if err := b.Receive(aID, gids, second, dim); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, dim)
	for i, g := range gids {
		acct := b.byID[g]
		if n := b.remote.count(acct); n != 2 {
			t.Fatalf("account %d: %d releases counted, want 2", g, n)
		}
		b.remote.row(acct, got)
		for j := range got {
			want := (first[i*dim+j] + second[i*dim+j]) / 2
			if d := math.Abs(float64(got[j] - want)); d > 0.03 {
				t.Fatalf("account %d coordinate %d: read %v, want the mean %v", g, j, got[j], want)
			}
		}
	}
	if al := b.alpha[aID]; len(al) != 2 || !(al[0] > 0 && al[0] <= 1) {
		t.Fatalf("α %v after two releases", al)
	}
}
