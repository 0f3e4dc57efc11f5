package rec

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"graphfed/graph"
)

// WorldConfig describes a synthetic user–item world with community
// structure, for tests and demos of federated recommendation: users and
// items belong to Communities blocks, a user draws most of its items from
// its own block, and the last HoldOut share of each user's items is held
// out as test interactions, as the LightGCN split does.
type WorldConfig struct {
	Users, Items, Communities int
	MinDegree, MaxDegree      int     // items per user, uniform in [MinDegree, MaxDegree]
	InBlock                   float64 // probability an item comes from the user's block
	HoldOut                   float64 // share of a user's items held out (at least one when it has 3 or more)
	Seed                      uint64
}

// DefaultWorld is a world small enough for unit tests.
func DefaultWorld() WorldConfig {
	return WorldConfig{Users: 240, Items: 160, Communities: 4, MinDegree: 6, MaxDegree: 14, InBlock: 0.85, HoldOut: 0.2, Seed: 1}
}

// GenerateWorld draws the world; it is deterministic in cfg.Seed.
func GenerateWorld(cfg WorldConfig) (*graph.Interactions, error) {
	c := cfg
	if c.Users < 1 || c.Communities < 1 || c.Items < 2*c.Communities || c.MinDegree < 1 || c.MaxDegree < c.MinDegree ||
		c.MaxDegree > c.Items/c.Communities || !(c.InBlock >= 0 && c.InBlock <= 1) || !(c.HoldOut >= 0 && c.HoldOut < 1) {
		return nil, fmt.Errorf("scenarios: rec world: invalid config %+v", cfg)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x7ec))
	block := c.Items / c.Communities
	train := &graph.CSR{Rows: c.Users, Cols: c.Items, RowPtr: make([]int, c.Users+1)}
	test := &graph.CSR{Rows: c.Users, Cols: c.Items, RowPtr: make([]int, c.Users+1)}
	for u := range c.Users {
		deg := c.MinDegree + rng.IntN(c.MaxDegree-c.MinDegree+1)
		lo := (u % c.Communities) * block
		seen := map[int32]bool{}
		var order []int32 // draw order: the last ones are held out
		for len(order) < deg {
			i := int32(lo + rng.IntN(block))
			if rng.Float64() >= c.InBlock {
				i = int32(rng.IntN(c.Items))
			}
			if !seen[i] {
				seen[i] = true
				order = append(order, i)
			}
		}
		hold := int(float64(deg) * c.HoldOut)
		if hold == 0 && deg >= 3 && c.HoldOut > 0 {
			hold = 1
		}
		tr, te := slices.Clone(order[:deg-hold]), slices.Clone(order[deg-hold:])
		slices.Sort(tr)
		slices.Sort(te)
		train.ColIdx = append(train.ColIdx, tr...)
		train.RowPtr[u+1] = len(train.ColIdx)
		test.ColIdx = append(test.ColIdx, te...)
		test.RowPtr[u+1] = len(test.ColIdx)
	}
	d := &graph.Interactions{Name: "recworld", Users: c.Users, Items: c.Items, Train: train, Test: test}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("scenarios: rec world: %w", err)
	}
	return d, nil
}
