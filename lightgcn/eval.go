package lightgcn

import (
	"fmt"

	"graphfed/gnn"
	"graphfed/graph"
	"graphfed/ranking"
)

// Scores are full-ranking top-K metrics over the test users.
type Scores struct {
	Recall, NDCG float64 // means over the evaluated users
	Users        int     // users with at least one test item
	K            int
}

// evalBlock users are scored by one matrix product, evalTile items at a
// time, so that a tile's scores stay in cache while they are ranked (the
// sizes lpsfed's evaluator uses).
const (
	evalBlock = 256
	evalTile  = 1024
)

// Evaluate ranks all items for every user with test items (test is Users
// × Items) by the dot product of final embeddings, leaves out the user's
// training items, and returns the mean Recall@K and NDCG@K of the top K,
// the LightGCN definitions (ranking.Metrics). Blocks of users run in
// parallel; per-user metrics are summed in user order, so the result does
// not depend on the number of CPUs.
func (m *Model) Evaluate(test *graph.CSR) (Scores, error) {
	sc := Scores{K: m.cfg.TopK}
	if err := test.Validate(); err != nil {
		return sc, fmt.Errorf("lightgcn: evaluate: %w", err)
	}
	if test.Rows != m.users || test.Cols != m.items {
		return sc, fmt.Errorf("lightgcn: evaluate: test interactions %dx%d for a model of %d users × %d items", test.Rows, test.Cols, m.users, m.items)
	}
	var users []int32
	for u := range test.Rows {
		if test.Degree(u) > 0 {
			users = append(users, int32(u))
		}
	}
	sc.Users = len(users)
	if len(users) == 0 {
		return sc, nil
	}
	fin := gnn.New(m.e0.Rows, m.e0.Cols)
	m.prop.forwardAll(m.e0, fin)
	recall := make([]float64, len(users))
	ndcg := make([]float64, len(users))
	blocks := (len(users) + evalBlock - 1) / evalBlock
	work := func(lo, hi int) {
		var w evalWork
		for b := lo; b < hi; b++ {
			ulo := b * evalBlock
			blk := users[ulo:min(ulo+evalBlock, len(users))]
			m.rankBlock(fin, test, blk, &w, recall[ulo:], ndcg[ulo:])
		}
	}
	if p := gnn.ParallelWorkers(blocks, blocks<<20); p > 1 {
		gnn.ParallelSplit(blocks, p, work)
	} else {
		work(0, blocks)
	}
	for j := range recall {
		sc.Recall += recall[j]
		sc.NDCG += ndcg[j]
	}
	sc.Recall /= float64(len(users))
	sc.NDCG /= float64(len(users))
	return sc, nil
}

// evalWork is one goroutine's workspace for rankBlock.
type evalWork struct {
	g, scores *gnn.Tensor
	train     [][]int32
	block     ranking.Block
}

// rankBlock ranks all items for the users blk against the final
// embeddings fin and writes their metrics to recall[j], ndcg[j].
func (m *Model) rankBlock(fin *gnn.Tensor, test *graph.CSR, blk []int32, w *evalWork, recall, ndcg []float64) {
	nu, d, nb := m.users, fin.Cols, len(blk)
	if w.g == nil || w.g.Cols != nb {
		w.g = gnn.New(d, nb)
	}
	for j, u := range blk {
		for c, v := range fin.Row(int(u)) {
			w.g.Data[c*nb+j] = v
		}
	}
	w.train = w.train[:0]
	for _, u := range blk {
		items, _ := m.train.Row(int(u))
		w.train = append(w.train, items)
	}
	w.block.Reset(w.train, m.cfg.TopK)
	for lo := 0; lo < m.items; lo += evalTile {
		hi := min(lo+evalTile, m.items)
		if w.scores == nil || w.scores.Rows != hi-lo || w.scores.Cols != nb {
			w.scores = gnn.New(hi-lo, nb)
		}
		gnn.MatMul(w.scores, fin.Slice(nu+lo, nu+hi), w.g)
		w.block.Tile(w.scores.Data, lo)
	}
	for j, u := range blk {
		t, _ := test.Row(int(u))
		recall[j], ndcg[j] = ranking.Metrics(w.block.Top(j), t, m.cfg.TopK)
	}
}
