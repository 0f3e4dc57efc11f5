// Package ranking scores recommenders by full ranking: for every evaluated
// user all items are ranked by score, the user's training items are left
// out, and the top K is compared with the user's held-out items (Recall@K
// and NDCG@K with binary relevance, the LightGCN definitions). lpsfed and
// lightgcn share it, so that their figures are computed the same way.
//
// Scores arrive in tiles: a block of users × a contiguous range of items,
// item-major, as a matrix product of item embeddings by a block of user
// embeddings produces them. A tile's scores stay in cache while they are
// ranked, and the running top K of each user is kept across the tiles.
package ranking

import (
	"math"
	"slices"
)

// TopK is a user's best K items so far, scores descending (ties go to the
// item inserted first, the lower id), and the position of the next
// training item to skip.
type TopK struct {
	items  []int32
	scores []float32
	next   int
}

// Items is the ranked list, best first (len ≤ K); it aliases t.
func (t *TopK) Items() []int32 { return t.items }

// Reset empties t, keeping its storage.
func (t *TopK) Reset() { t.items, t.scores, t.next = t.items[:0], t.scores[:0], 0 }

// Insert adds item i with score s, dropping the K+1-th.
func (t *TopK) Insert(i int32, s float32, k int) {
	it, ts := t.items, t.scores
	p := len(it)
	for p > 0 && ts[p-1] < s {
		p--
	}
	if p == k {
		return
	}
	if len(it) < k {
		it, ts = append(it, 0), append(ts, 0)
	}
	copy(it[p+1:], it[p:len(it)-1])
	copy(ts[p+1:], ts[p:len(ts)-1])
	it[p], ts[p] = i, s
	t.items, t.scores = it, ts
}

// Block is the running top K of a block of users while the tiles of items
// go by in item order. One goroutine uses a Block at a time; it keeps its
// storage across Reset calls.
type Block struct {
	top   []TopK
	train [][]int32 // per user of the block: sorted training items
	full  []bool    // per user: top K is full
	thr   []float32 // per user: the K-th score, once full
	k     int
}

// Reset starts a block of len(train) users, train[j] the sorted training
// items of user j (excluded from the ranking), keeping the best k items.
// train is kept until the next Reset, not copied.
func (b *Block) Reset(train [][]int32, k int) {
	n := len(train)
	if cap(b.top) < n {
		b.top = make([]TopK, n)
		b.full, b.thr = make([]bool, n), make([]float32, n)
	}
	b.top, b.full, b.thr = b.top[:n], b.full[:n], b.thr[:n]
	for j := range b.top {
		b.top[j].Reset()
	}
	clear(b.full)
	b.train, b.k = train, k
}

// Tile ranks items [lo, lo+len(scores)/n) for the block's n users:
// scores[x*n+j] is user j's score of item lo+x. Tiles must come in
// increasing item order (the training-item pointers only move forward).
func (b *Block) Tile(scores []float32, lo int) {
	n := len(b.top)
	if n == 0 {
		return
	}
	full, thr, k := b.full, b.thr, b.k
	for x := range len(scores) / n {
		i := int32(lo + x)
		// A score that does not beat a full top K is dropped at once; the
		// others are checked against the user's training items and
		// inserted.
		for j, v := range scores[x*n : (x+1)*n] {
			if full[j] && v <= thr[j] {
				continue
			}
			st := &b.top[j]
			train := b.train[j]
			for st.next < len(train) && train[st.next] < i {
				st.next++
			}
			if st.next < len(train) && train[st.next] == i {
				continue
			}
			st.Insert(i, v, k)
			if len(st.items) == k {
				full[j], thr[j] = true, st.scores[k-1]
			}
		}
	}
}

// Top is user j's ranked items, best first; it aliases the block.
func (b *Block) Top(j int) []int32 { return b.top[j].items }

// Metrics is Recall@k = hits/|test| and NDCG@k = DCG/IDCG (binary
// relevance, IDCG over min(|test|, k) hits) of the ranked list top against
// the sorted held-out items test. A user without held-out items scores 0.
func Metrics(top, test []int32, k int) (recall, ndcg float64) {
	if len(test) == 0 {
		return 0, 0
	}
	var dcg, idcg float64
	hits := 0
	for r, i := range top[:min(len(top), k)] {
		if _, ok := slices.BinarySearch(test, i); ok {
			hits++
			dcg += 1 / math.Log2(float64(r)+2)
		}
	}
	for r := range min(len(test), k) {
		idcg += 1 / math.Log2(float64(r)+2)
	}
	return float64(hits) / float64(len(test)), dcg / idcg
}
