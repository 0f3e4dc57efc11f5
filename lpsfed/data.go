package lpsfed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Data is one client's user–item subgraph in local ids: users 0..Users-1,
// items 0..Items-1. As a bipartite graph its nodes are the users followed
// by the items (node Users+i is item i), the order of Z = [U; V].
type Data struct {
	Users, Items int
	// Train[u] lists user u's training items, sorted and distinct.
	Train [][]int32
	// Test[u] lists u's held-out items, sorted and distinct, disjoint from
	// Train[u]; nil for users without any. Only items of this client's
	// catalog can appear: a held-out item the client never saw cannot be
	// ranked by it.
	Test [][]int32
	// Val[u], when Val is not nil, lists u's validation items, as Test
	// lists its test items: scored by Learner.Evaluate as val_<metric>
	// for model selection (heldout.go).
	Val [][]int32
}

// Nodes is the number of nodes of the bipartite graph, Users+Items.
func (d *Data) Nodes() int { return d.Users + d.Items }

// NumTrain is the number of training interactions.
func (d *Data) NumTrain() int {
	n := 0
	for _, it := range d.Train {
		n += len(it)
	}
	return n
}

// Validate checks ids, order and disjointness.
func (d *Data) Validate() error {
	if d.Users < 1 || d.Items < 1 {
		return fmt.Errorf("lpsfed: data: %d users and %d items", d.Users, d.Items)
	}
	if len(d.Train) != d.Users || (d.Test != nil && len(d.Test) != d.Users) {
		return fmt.Errorf("lpsfed: data: %d train and %d test lists for %d users", len(d.Train), len(d.Test), d.Users)
	}
	check := func(what string, u int, it []int32) error {
		for k, i := range it {
			if i < 0 || int(i) >= d.Items || (k > 0 && it[k-1] >= i) {
				return fmt.Errorf("lpsfed: data: %s items of user %d are not sorted distinct ids below %d", what, u, d.Items)
			}
		}
		return nil
	}
	for u := range d.Users {
		if err := check("train", u, d.Train[u]); err != nil {
			return err
		}
		if d.Test == nil {
			continue
		}
		if err := check("test", u, d.Test[u]); err != nil {
			return err
		}
		for _, i := range d.Test[u] {
			if hasItem(d.Train[u], i) {
				return fmt.Errorf("lpsfed: data: item %d of user %d is both train and test", i, u)
			}
		}
	}
	return d.validateVal()
}

// hasItem reports whether the sorted list holds item i.
func hasItem(sorted []int32, i int32) bool {
	_, ok := slices.BinarySearch(sorted, i)
	return ok
}

// Degrees returns the training degree of every user and item.
func (d *Data) Degrees() (users, items []int) {
	users = make([]int, d.Users)
	items = make([]int, d.Items)
	for u, it := range d.Train {
		users[u] = len(it)
		for _, i := range it {
			items[i]++
		}
	}
	return users, items
}

// popBucket maps a popularity (training degree) to the index of its
// popularity embedding: four buckets per doubling, so that popularity
// levels rather than identities are encoded (ξ̂ must depend on how
// popular a pair is, not on who it is) while the tables stay small.
func popBucket(deg int) int32 { return int32(math.Floor(4 * math.Log2(1+float64(deg)))) }

// buckets maps degrees to popularity buckets and returns them with the
// number of buckets (the largest index plus one).
func buckets(deg []int) ([]int32, int) {
	b := make([]int32, len(deg))
	n := 0
	for i, g := range deg {
		b[i] = popBucket(g)
		n = max(n, int(b[i])+1)
	}
	return b, n
}

// pairs is one training batch: B positives (User[b], Pos[b]) and K
// negatives Neg[b*K : (b+1)*K] of user User[b].
type pairs struct {
	User, Pos, Neg []int32
	K              int
}

// sampler deals the training interactions in a fresh random order every
// epoch and draws negatives uniformly among the items a user has not
// interacted with in training.
type sampler struct {
	d     *Data
	users []int32 // user of interaction e
	items []int32 // item of interaction e
	order []int
	next  int
	rng   *rand.Rand
}

func newSampler(d *Data, rng *rand.Rand) *sampler {
	s := &sampler{d: d, rng: rng}
	for u, it := range d.Train {
		for _, i := range it {
			s.users = append(s.users, int32(u))
			s.items = append(s.items, i)
		}
	}
	s.order = make([]int, len(s.users))
	for e := range s.order {
		s.order[e] = e
	}
	s.next = len(s.order)
	return s
}

// epochBatches starts an epoch and returns its number of batches of size b.
func (s *sampler) epochBatches(b int) int {
	s.rng.Shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
	s.next = 0
	return (len(s.order) + b - 1) / b
}

// batch fills p with up to b positives of the current epoch and k
// negatives each.
func (s *sampler) batch(p *pairs, b, k int) {
	hi := min(s.next+b, len(s.order))
	p.User, p.Pos, p.Neg, p.K = p.User[:0], p.Pos[:0], p.Neg[:0], k
	for _, e := range s.order[s.next:hi] {
		u := s.users[e]
		p.User = append(p.User, u)
		p.Pos = append(p.Pos, s.items[e])
		for range k {
			p.Neg = append(p.Neg, s.negative(u))
		}
	}
	s.next = hi
}

// negative draws an item u has not trained on. A user who has trained on
// (almost) every item gets a random item after a bounded number of tries.
func (s *sampler) negative(u int32) int32 {
	train := s.d.Train[u]
	var j int32
	for range 64 {
		j = int32(s.rng.IntN(s.d.Items))
		if !hasItem(train, j) {
			return j
		}
	}
	return j
}
