package fedgsp

import (
	"slices"
	"testing"
)

// TestDescriptorCache builds learners in the order a selection does (a
// candidate, a variant with other rates and τ, one on raw features, one
// with other orders, and one on other data) over one cache: each serves
// exactly the descriptors a learner without the cache computes, and only
// what the descriptors depend on (data, feature format, orders, principal
// directions) computes them anew.
func TestDescriptorCache(t *testing.T) {
	rng := newRNG(3)
	a := randomDataset(t, rng, 40, 12, 3, 40, true)
	b := randomDataset(t, rng, 40, 12, 3, 40, true)
	base := DefaultConfig()
	base.Orders, base.Principal, base.Hidden = 3, 2, 8
	withRates := base
	withRates.LR1, withRates.LR2, withRates.Tau = base.LR1/10, base.LR2/10, 0.3
	raw := base
	raw.RawFeatures = true
	orders := base
	orders.Orders = 4
	cache := NewDescriptorCache()
	for _, c := range []struct {
		name     string
		cfg      Config
		onB      bool
		computed int
	}{
		{"candidate", base, false, 1},
		{"slower rates and another tau share it", withRates, false, 1},
		{"raw features", raw, false, 2},
		{"more orders", orders, false, 3},
		{"the candidate again", base, false, 3},
		{"other data", base, true, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := a
			if c.onB {
				ds = b
			}
			alone, err := NewLearner(ds, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			shared, err := NewLearner(ds, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			shared.ShareDescriptors(cache)
			want, ok := alone.Descriptors()
			if !ok {
				t.Fatal("no descriptors without the cache")
			}
			got, ok := shared.Descriptors()
			if !ok {
				t.Fatal("no descriptors from the cache")
			}
			if got.Orders != want.Orders || got.Principal != want.Principal || got.Dim != want.Dim || !slices.Equal(got.Rows, want.Rows) {
				t.Fatalf("cached descriptors differ from those computed alone")
			}
			if n := cache.Computed(); n != c.computed {
				t.Fatalf("cache computed %d descriptors, want %d", n, c.computed)
			}
			// A learner's copy is its own: changing it leaves the cache's.
			got.Rows[0] += 1
			if again, _ := shared.Descriptors(); again.Rows[0] != want.Rows[0] {
				t.Fatal("a caller's change to its descriptors reached the cache")
			}
			shared.DescriptorsReleased()
			if _, ok := shared.Descriptors(); ok {
				t.Fatal("descriptors offered again after their release")
			}
		})
	}
}
