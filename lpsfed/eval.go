package lpsfed

import (
	"math"
	"math/rand/v2"
	"slices"

	"graphfed/gnn"
	"graphfed/ranking"
)

// Scores are a client's top-K ranking metrics.
type Scores struct {
	Recall, NDCG float64 // means over the evaluated users
	Users        int     // users evaluated (with at least one held-out item)
	TestUsers    int     // users with held-out items; Users < TestUsers when sampled
	K            int
}

// evalUsers returns the users to evaluate: every user with held-out items,
// or a fixed seeded sample of max of them, sorted.
func evalUsers(d *Data, limit int, seed uint64) []int32 {
	var us []int32
	for u := range d.Users {
		if d.Test != nil && len(d.Test[u]) > 0 {
			us = append(us, int32(u))
		}
	}
	if limit <= 0 || len(us) <= limit {
		return us
	}
	rng := rand.New(rand.NewPCG(seed, 0xe7a1))
	rng.Shuffle(len(us), func(i, j int) { us[i], us[j] = us[j], us[i] })
	us = us[:limit]
	slices.Sort(us)
	return us
}

// evalBlock is how many users are scored by one matrix product, and
// evalTile how many items: a block's scores are computed one tile of items
// at a time (a tile's scores stay in cache while they are ranked).
const (
	evalBlock = 256
	evalTile  = 1024
)

// Evaluate ranks, for every evaluated user, all of the client's items by
// the predictive score, leaves out the user's training items, and scores
// the top K against the held-out items: Recall@K = hits/|test| and
// NDCG@K = DCG/IDCG with binary relevance. Ranking by s is ranking by
// R̂ = arccos(tanh(s)) ascending, since the map is decreasing.
//
// Blocks of users are ranked in parallel, each user's top K kept while
// the tiles of items go by in item order; per-user metrics are summed in
// user order at the end, so the result does not depend on the split.
func (m *Model) Evaluate() Scores {
	sc := Scores{K: m.cfg.TopK, Users: len(m.evalUser)}
	for u := range m.data.Users {
		if m.data.Test != nil && len(m.data.Test[u]) > 0 {
			sc.TestUsers++
		}
	}
	if len(m.evalUser) == 0 {
		return sc
	}
	z := m.enc.forward(nil)
	m.pred.prepare(z)
	recall := make([]float64, len(m.evalUser))
	ndcg := make([]float64, len(m.evalUser))
	blocks := (len(m.evalUser) + evalBlock - 1) / evalBlock
	parallelFor(blocks, parts(blocks, minChunk), func(lo, hi int) {
		var e evalWork
		for b := lo; b < hi; b++ {
			ulo := b * evalBlock
			blk := m.evalUser[ulo:min(ulo+evalBlock, len(m.evalUser))]
			m.rankBlock(z, blk, &e, recall[ulo:], ndcg[ulo:])
		}
	})
	for j := range recall {
		sc.Recall += recall[j]
		sc.NDCG += ndcg[j]
	}
	sc.Recall /= float64(len(m.evalUser))
	sc.NDCG /= float64(len(m.evalUser))
	return sc
}

// evalWork is one goroutine's workspace for rankBlock.
type evalWork struct {
	g, scores, gu, pre *gnn.Tensor
	train              [][]int32 // per user of the block: training items
	block              ranking.Block
}

// topK is the shared running top K (ranking.TopK) under the names
// lpsfed's tests use. The user-only terms of the score (ua_u, biases) are
// the same for every item and do not change the ranking, so the
// evaluator leaves them out.
type topK struct {
	items []int32
	t     ranking.TopK
}

func (st *topK) insert(i int32, s float32, k int) { st.t.Insert(i, s, k); st.items = st.t.Items() }

// rankBlock ranks all items for the users blk and writes their recall
// and NDCG to recall[j], ndcg[j].
func (m *Model) rankBlock(z *gnn.Tensor, blk []int32, e *evalWork, recall, ndcg []float64) {
	nu, ni, d, nb, k := m.data.Users, m.data.Items, m.cfg.Dim, len(blk), m.cfg.TopK
	if m.pred.hidden == 0 {
		// s_ui = ua_u + vb_i + Σ_c z_uc·w_c·z_ic + b: one product
		// Z_items·G with G[:, u] = z_u ⊙ w_c.
		e.g = buf(&e.g, d, nb)
		wc := m.pred.W1.W.Data[2*d:]
		for j, u := range blk {
			zu := z.Row(int(u))
			for c := range d {
				e.g.Data[c*nb+j] = zu[c] * wc[c]
			}
		}
	}
	e.train = e.train[:0]
	for _, u := range blk {
		e.train = append(e.train, m.data.Train[u])
	}
	e.block.Reset(e.train, k)
	for lo := 0; lo < ni; lo += evalTile {
		hi := min(lo+evalTile, ni)
		scores := buf(&e.scores, hi-lo, nb)
		if m.pred.hidden == 0 {
			gnn.MatMul(scores, z.Slice(nu+lo, nu+hi), e.g)
			for i := lo; i < hi; i++ {
				row := scores.Row(i - lo)
				v := m.pred.vb.Data[nu+i]
				for j := range row {
					row[j] += v
				}
			}
		} else {
			m.hiddenScores(z, blk, lo, hi, scores, e)
		}
		e.block.Tile(scores.Data, lo)
	}
	for j, u := range blk {
		recall[j], ndcg[j] = ranking.Metrics(e.block.Top(j), m.data.Test[u], k)
	}
}

// hiddenScores fills scores ((hi−lo)×len(blk)) with the scores of items
// [lo, hi) for the users blk through a predictive MLP with a hidden
// layer: per user one product Z_items·diag(z_u)·W_c.
func (m *Model) hiddenScores(z *gnn.Tensor, blk []int32, lo, hi int, scores *gnn.Tensor, e *evalWork) {
	nu, d, h := m.data.Users, m.cfg.Dim, m.pred.hidden
	items := z.Slice(nu+lo, nu+hi)
	wc := m.pred.W1.W.Slice(2*d, 3*d)
	gu := buf(&e.gu, d, h)
	pre := buf(&e.pre, hi-lo, h)
	for j, u := range blk {
		zu := z.Row(int(u))
		for c := range d {
			for k := range h {
				gu.Data[c*h+k] = zu[c] * wc.Data[c*h+k]
			}
		}
		gnn.MatMul(pre, items, gu)
		ua := m.pred.ua.Row(int(u))
		for i := range hi - lo {
			row, vb := pre.Row(i), m.pred.vb.Row(nu+lo+i)
			acc := float64(m.pred.B2.W.Data[0])
			for k, v := range row {
				x := v + ua[k] + vb[k] + m.pred.B1.W.Data[k]
				acc += math.Tanh(float64(x)) * float64(m.pred.W2.W.Data[k])
			}
			scores.Data[i*len(blk)+j] = float32(acc)
		}
	}
}
