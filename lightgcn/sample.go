package lightgcn

import (
	"math/rand/v2"
	"slices"

	"graphfed/graph"
)

// sampler draws BPR triples as the official code's UniformSample_original
// does: a user uniformly among all users, one of the user's training items
// uniformly, and a negative item uniformly among the items the user has
// not interacted with (by rejection). The official code skips a drawn
// user without training items; here such a user is redrawn, so an epoch
// always has the same number of triples.
type sampler struct {
	train *graph.CSR
	users []int32 // users with at least one training item
	rng   *rand.Rand
}

func newSampler(train *graph.CSR, seed uint64) *sampler {
	s := &sampler{train: train, rng: rand.New(rand.NewPCG(seed, 0x11c6))}
	for u := range train.Rows {
		// Users that have every item cannot have a negative.
		if d := train.Degree(u); d > 0 && d < train.Cols {
			s.users = append(s.users, int32(u))
		}
	}
	return s
}

// fill sets users[b], pos[b], neg[b] (item ids) to fresh triples for
// every b < len(users).
func (s *sampler) fill(users, pos, neg []int32) {
	pos, neg = pos[:len(users)], neg[:len(users)]
	ni := s.train.Cols
	for b := range users {
		u := s.users[s.rng.IntN(len(s.users))]
		items, _ := s.train.Row(int(u))
		users[b], pos[b] = u, items[s.rng.IntN(len(items))]
		for {
			j := int32(s.rng.IntN(ni))
			if _, in := slices.BinarySearch(items, j); !in {
				neg[b] = j
				break
			}
		}
	}
}
