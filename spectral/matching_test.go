package spectral

import (
	"slices"
	"testing"
)

// A non-zero Matching permutes the clusters' clients, never to the
// identity, the same way for the same seed.
func TestPermuteMatching(t *testing.T) {
	for _, n := range []int{2, 3, 4, 8} {
		id := make([]int, n)
		for i := range id {
			id[i] = i
		}
		seen := map[string]bool{}
		for seed := uint64(1); seed <= 6; seed++ {
			a, b := slices.Clone(id), slices.Clone(id)
			permuteMatching(a, seed)
			permuteMatching(b, seed)
			if !slices.Equal(a, b) {
				t.Fatalf("n=%d seed %d: %v then %v", n, seed, a, b)
			}
			if slices.Equal(a, id) {
				t.Fatalf("n=%d seed %d: identity", n, seed)
			}
			s := slices.Clone(a)
			slices.Sort(s)
			if !slices.Equal(s, id) {
				t.Fatalf("n=%d seed %d: %v is not a permutation", n, seed, a)
			}
			seen[string(rune(a[0]))+string(rune(a[n-1]))] = true
		}
		if n > 2 && len(seen) < 2 {
			t.Fatalf("n=%d: every seed gave the same permutation", n)
		}
	}
	one := []int{0}
	permuteMatching(one, 5) // a single cluster has nothing to permute
	if one[0] != 0 {
		t.Fatal(one)
	}
}
