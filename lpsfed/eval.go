package lpsfed

import (
	"math"
	"math/rand/v2"
	"slices"

	"graphfed/gnn"
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

// evalBlock is how many users are scored by one matrix product.
const evalBlock = 256

// Evaluate ranks, for every evaluated user, all of the client's items by
// the predictive score, leaves out the user's training items, and scores
// the top K against the held-out items: Recall@K = hits/|test| and
// NDCG@K = DCG/IDCG with binary relevance. Ranking by s is ranking by
// R̂ = arccos(tanh(s)) ascending, since the map is decreasing.
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
	nu, ni, d := m.data.Users, m.data.Items, m.cfg.Dim
	items := z.Slice(nu, nu+ni)
	m.pred.prepare(z)
	top := make([]int32, 0, m.cfg.TopK)
	topS := make([]float32, 0, m.cfg.TopK)
	var scores, g *gnn.Tensor
	for lo := 0; lo < len(m.evalUser); lo += evalBlock {
		blk := m.evalUser[lo:min(lo+evalBlock, len(m.evalUser))]
		scores = buf(&scores, ni, len(blk))
		if m.pred.hidden == 0 {
			// s_ui = ua_u + vb_i + Σ_c z_uc·w_c·z_ic + b: one product
			// Z_items·G with G[:, u] = z_u ⊙ w_c.
			g = buf(&g, d, len(blk))
			wc := m.pred.W1.W.Data[2*d:]
			for j, u := range blk {
				zu := z.Row(int(u))
				for c := range d {
					g.Data[c*len(blk)+j] = zu[c] * wc[c]
				}
			}
			gnn.MatMul(scores, items, g)
			for i := range ni {
				row := scores.Row(i)
				v := m.pred.vb.Data[nu+i]
				for j := range row {
					row[j] += v
				}
			}
		} else {
			m.hiddenScores(z, blk, scores)
		}
		for j, u := range blk {
			r, n := m.rankUser(u, scores, j, &top, &topS)
			sc.Recall += r
			sc.NDCG += n
		}
	}
	sc.Recall /= float64(len(m.evalUser))
	sc.NDCG /= float64(len(m.evalUser))
	return sc
}

// hiddenScores fills column j of scores (items×len(blk)) with the scores
// of user blk[j] through a predictive MLP with a hidden layer: per user
// one product Z_items·diag(z_u)·W_c.
func (m *Model) hiddenScores(z *gnn.Tensor, blk []int32, scores *gnn.Tensor) {
	nu, ni, d, h := m.data.Users, m.data.Items, m.cfg.Dim, m.pred.hidden
	items := z.Slice(nu, nu+ni)
	wc := m.pred.W1.W.Slice(2*d, 3*d)
	gu := gnn.New(d, h)
	pre := gnn.New(ni, h)
	for j, u := range blk {
		zu := z.Row(int(u))
		for c := range d {
			for k := range h {
				gu.Data[c*h+k] = zu[c] * wc.Data[c*h+k]
			}
		}
		gnn.MatMul(pre, items, gu)
		ua := m.pred.ua.Row(int(u))
		for i := range ni {
			row, vb := pre.Row(i), m.pred.vb.Row(nu+i)
			acc := float64(m.pred.B2.W.Data[0])
			for k, v := range row {
				x := v + ua[k] + vb[k] + m.pred.B1.W.Data[k]
				acc += math.Tanh(float64(x)) * float64(m.pred.W2.W.Data[k])
			}
			scores.Data[i*len(blk)+j] = float32(acc)
		}
	}
}

// rankUser takes the top K of column j of scores, skipping u's training
// items, and returns u's recall and NDCG. The user-only terms of the
// score (ua_u, biases) are the same for every item and do not change the
// ranking, so they are left out. Ties go to the lower item id.
func (m *Model) rankUser(u int32, scores *gnn.Tensor, j int, top *[]int32, topS *[]float32) (recall, ndcg float64) {
	k := m.cfg.TopK
	t, ts := (*top)[:0], (*topS)[:0]
	train := m.data.Train[u]
	next := 0 // position in the sorted training list
	cols := scores.Cols
	for i := range m.data.Items {
		if next < len(train) && train[next] == int32(i) {
			next++
			continue
		}
		s := scores.Data[i*cols+j]
		if len(t) == k && s <= ts[k-1] {
			continue
		}
		// Insert keeping ts descending.
		p := len(t)
		for p > 0 && ts[p-1] < s {
			p--
		}
		if len(t) < k {
			t, ts = append(t, 0), append(ts, 0)
		}
		copy(t[p+1:], t[p:len(t)-1])
		copy(ts[p+1:], ts[p:len(ts)-1])
		t[p], ts[p] = int32(i), s
	}
	*top, *topS = t, ts
	test := m.data.Test[u]
	var dcg, idcg float64
	hits := 0
	for r, i := range t {
		if hasItem(test, i) {
			hits++
			dcg += 1 / math.Log2(float64(r)+2)
		}
	}
	for r := range min(len(test), k) {
		idcg += 1 / math.Log2(float64(r)+2)
	}
	return float64(hits) / float64(len(test)), dcg / idcg
}
