package amllearner

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"graphfed/aml/edgegnn"
)

// A clean layer-0 release puts the sender's view of its own accounts (all
// their transactions) in place of the receiver's partial view, in both
// stages; a release drowned in noise leaves the receiver's view almost as
// it was, by the measured signal share.
func TestAMLFeatureRelease(t *testing.T) {
	banks := amlBanks(t)
	ids := slices.Sorted(maps.Keys(banks))
	aID, bID := ids[0], ids[1]
	for _, tc := range []struct {
		name      string
		release   string
		sigma     float64
		wantAlpha func(a float32) bool
	}{
		{"features, clean", ReleaseFeatures, 0, func(a float32) bool { return a > 0.99 }},
		{"all, clean", ReleaseAll, 0, func(a float32) bool { return a > 0.99 }},
		{"features, σ0 = 2", ReleaseFeatures, 2, func(a float32) bool { return a < 0.2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Hidden: 8, BatchSize: 64, FanOut: []int{3, 3}, Seed: 1, Release: tc.release}
			a, err := New(banks[aID], cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, err := New(banks[bID], cfg)
			if err != nil {
				t.Fatal(err)
			}
			a.Train(20) // ReleaseAll needs every layer's estimate
			gids, rows, dim := a.Boundary(bID)
			wantDim := featureWidth + 1
			if tc.release == ReleaseAll {
				wantDim += 2 * (8 + 1) // L = 2 hidden blocks of H = 8
			}
			if dim != wantDim || len(rows) != dim*len(gids) || len(gids) == 0 {
				t.Fatalf("%d rows of width %d (%d values), want width %d", len(gids), dim, len(rows), wantDim)
			}
			rng := rand.New(rand.NewPCG(7, 8))
			for i := range rows {
				rows[i] += float32(tc.sigma * rng.NormFloat64())
			}
			before := map[int32][]float32{}
			partial := 0
			for _, g := range gids {
				acct := b.byID[g]
				before[acct] = b.appendFeatures(nil, acct)
				if !slices.Equal(before[acct], a.appendFeatures(nil, a.byGlobal(g))) {
					partial++
				}
			}
			if partial == 0 {
				t.Fatal("the receiver already saw every released account in full; the test world shows nothing")
			}
			if err := b.Receive(aID, gids, rows, dim); err != nil {
				t.Fatal(err)
			}
			alpha := b.alpha[aID][0]
			if !tc.wantAlpha(alpha) {
				t.Fatalf("layer-0 α %v", alpha)
			}
			for _, g := range gids {
				acct := b.byID[g]
				got, own, theirs := b.appendFeatures(nil, acct), before[acct], a.appendFeatures(nil, a.byGlobal(g))
				for j := range got {
					if tc.sigma == 0 {
						if d := math.Abs(float64(got[j] - theirs[j])); d > 0.02*(1+math.Abs(float64(theirs[j]))) {
							t.Fatalf("account %d feature %d: %v, want the sender's %v", g, j, got[j], theirs[j])
						}
						continue
					}
					if d := math.Abs(float64(got[j] - own[j])); d > float64(alpha)*(math.Abs(float64(own[j]))+maxReleasedNorm) {
						t.Fatalf("account %d feature %d: %v moved from our %v by more than α = %v allows", g, j, got[j], own[j], alpha)
					}
				}
				if r := b.trainSt.NodeX.Row(int(acct)); r[edgegnn.NodeColOne] != 1 {
					t.Fatalf("constant column overwritten: %v", r)
				}
			}
		})
	}
}

// byGlobal returns our account with global id g , -1 if none.
func (l *Learner) byGlobal(g int64) int32 {
	for a, id := range l.d.Global {
		if id == g {
			return int32(a)
		}
	}
	return -1
}
