package job

import (
	"fmt"

	"graphfed/workload/rec"
)

// PartitioningDir is the directory of partitioning k under `graphfed split
// rec --partitionings K`'s output.
func PartitioningDir(k int) string { return fmt.Sprintf("partitioning-%d", k) }

// recPartitioning is one partitioning SplitRec wrote.
type recPartitioning struct {
	k       int
	out     string
	clients []rec.Client
	stats   rec.SplitStats
}

// report is the partitioning's part of SplitRec's metrics: per client its
// users, items, interactions of each split, and the spread of training
// interactions around the mean share.
func (p recPartitioning) report() map[string]any {
	per := map[string]any{}
	total := 0
	for _, c := range p.clients {
		total += c.Data.Train.NNZ()
	}
	mean := float64(total) / float64(len(p.clients))
	for _, c := range p.clients {
		r := map[string]any{"users": c.Data.Users, "items": c.Data.Items, "train": c.Data.Train.NNZ(),
			"test": c.Data.Test.NNZ(), "test_dropped": c.TestDropped,
			"edge_spread": (float64(c.Data.Train.NNZ()) - mean) / mean}
		if c.Val != nil {
			r["val"], r["val_dropped"] = c.Val.NNZ(), c.ValDropped
		}
		per[c.ID] = r
	}
	return map[string]any{"per_client": per, "moved": p.stats.Moved, "no_train_users": p.stats.NoTrainUsers,
		"partitioning": p.k, "out": p.out}
}

// sameClientShare is the share of users (of those with training
// interactions in both) that a and b put together, under the matching of
// b's clients to a's that agrees most (all matchings are tried up to 8
// clients; beyond, clients are matched by number): 1 for the same
// partition under other client numbers.
func sameClientShare(a, b []rec.Client, users int) float64 {
	owner := func(cs []rec.Client) []int {
		o := make([]int, users)
		for i := range o {
			o[i] = -1
		}
		for c, cl := range cs {
			for _, u := range cl.Users {
				o[u] = c
			}
		}
		return o
	}
	oa, ob := owner(a), owner(b)
	k := max(len(a), len(b))
	conf := make([][]int, k) // conf[i][j]: users in a's client i and b's client j
	for i := range conf {
		conf[i] = make([]int, k)
	}
	n := 0
	for u := range oa {
		if oa[u] >= 0 && ob[u] >= 0 {
			conf[oa[u]][ob[u]]++
			n++
		}
	}
	if n == 0 {
		return 0
	}
	best := 0
	for i := range k {
		best += conf[i][i]
	}
	if k <= 8 {
		best = max(best, bestMatching(conf, 0, make([]bool, k)))
	}
	return float64(best) / float64(n)
}

// bestMatching is the largest sum of conf[i][π(i)] over rows i ≥ row and
// the columns not used.
func bestMatching(conf [][]int, row int, used []bool) int {
	if row == len(conf) {
		return 0
	}
	best := 0
	for j := range conf {
		if !used[j] {
			used[j] = true
			best = max(best, conf[row][j]+bestMatching(conf, row+1, used))
			used[j] = false
		}
	}
	return best
}
