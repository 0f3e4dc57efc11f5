package graph

import (
	"math/rand/v2"
)

// kway is a k-way partition of g under refinement: METIS's greedy boundary
// refinement (each pass visits vertices in random order and moves a
// boundary vertex to the adjacent part that lowers the cut most, or keeps
// it equal while improving balance, never filling a part beyond maxPW),
// preceded by an explicit balancing step when a part is overweight.
type kway struct {
	g       *wgraph
	part    []int32
	pw      []int // part weights
	maxPW   int
	conn    []int   // scratch: edge weight from the current vertex to each part
	touched []int32 // scratch: parts with conn > 0
}

func newKway(g *wgraph, part []int32, k, maxPW int) *kway {
	r := &kway{g: g, part: part, pw: make([]int, k), maxPW: maxPW, conn: make([]int, k)}
	for v, p := range part {
		r.pw[p] += int(g.vwgt[v])
	}
	return r
}

// connectivity fills conn and touched for v and returns the weight of v's
// edges inside its own part; clear must be called before the next vertex.
func (r *kway) connectivity(v int32) int {
	g := r.g
	for e := g.xadj[v]; e < g.xadj[v+1]; e++ {
		p := r.part[g.adj[e]]
		if r.conn[p] == 0 {
			r.touched = append(r.touched, p)
		}
		r.conn[p] += int(g.ewgt[e])
	}
	return r.conn[r.part[v]]
}

func (r *kway) clear() {
	for _, p := range r.touched {
		r.conn[p] = 0
	}
	r.touched = r.touched[:0]
}

// bestTarget is the part other than v's own, with room for v, to which
// moving v lowers the cut most (ties: the lighter part, then the lower
// index), among the parts v has edges to; ok is false when none has room.
// connectivity(v) must have been called.
func (r *kway) bestTarget(v int32, own int) (p int32, gain int, ok bool) {
	vw, from := int(r.g.vwgt[v]), r.part[v]
	for _, q := range r.touched {
		if q == from || r.pw[q]+vw > r.maxPW {
			continue
		}
		gq := r.conn[q] - own
		if !ok || gq > gain || gq == gain && (r.pw[q] < r.pw[p] || r.pw[q] == r.pw[p] && q < p) {
			p, gain, ok = q, gq, true
		}
	}
	return p, gain, ok
}

func (r *kway) move(v, to int32) {
	vw := int(r.g.vwgt[v])
	r.pw[r.part[v]] -= vw
	r.pw[to] += vw
	r.part[v] = to
}

// refine balances, then runs greedy passes until one moves nothing. Every
// move lowers the cut, or keeps it and strictly lowers the spread of part
// weights, so the passes terminate even without the pass limit.
func (r *kway) refine(passes int, rng *rand.Rand) {
	r.balance()
	n := r.g.n()
	for range passes {
		moved := 0
		for _, vi := range rng.Perm(n) {
			v := int32(vi)
			own := r.connectivity(v)
			from := r.part[v]
			vw := int(r.g.vwgt[v])
			if p, gain, ok := r.bestTarget(v, own); ok && r.pw[from] > vw &&
				(gain > 0 || gain == 0 && r.pw[from]-r.pw[p] > vw) {
				r.move(v, p)
				moved++
			}
			r.clear()
		}
		if moved == 0 {
			return
		}
	}
}

// balance empties every overweight part down to maxPW: it moves the part's
// vertices in order of least cut increase to an adjacent part with room, or
// to the lightest part when no neighbour has room. Keys are recomputed when
// popped because earlier moves change them. Parts stay overweight only
// when no vertex fits anywhere (possible on coarse levels, where vertices
// are heavy; never with unit weights).
func (r *kway) balance() {
	g := r.g
	var q *gainPQ
	for s := range int32(len(r.pw)) {
		if r.pw[s] <= r.maxPW {
			continue
		}
		if q == nil {
			q = newGainPQ(g.n())
		}
		q.reset()
		for v := range int32(g.n()) {
			if r.part[v] == s {
				_, gain := r.balanceTarget(v)
				q.set(v, gain)
			}
		}
		for r.pw[s] > r.maxPW && q.len() > 0 {
			v := q.pop()
			p, gain := r.balanceTarget(v)
			if p < 0 {
				continue
			}
			if q.len() > 0 && gain < q.key[q.heap[0]] {
				q.set(v, gain) // stale key: try again in its true place
				continue
			}
			r.move(v, p)
		}
	}
}

// balanceTarget is where balance would move v and the resulting gain; p is
// -1 when no part has room for v.
func (r *kway) balanceTarget(v int32) (p int32, gain int) {
	own := r.connectivity(v)
	defer r.clear()
	if p, gain, ok := r.bestTarget(v, own); ok {
		return p, gain
	}
	vw := int(r.g.vwgt[v])
	p = -1
	for q := range int32(len(r.pw)) {
		if q != r.part[v] && r.pw[q]+vw <= r.maxPW && (p < 0 || r.pw[q] < r.pw[p]) {
			p = q
		}
	}
	if p < 0 {
		return -1, 0
	}
	return p, r.conn[p] - own
}

// fillEmpty gives every empty part one vertex taken from the heaviest part,
// the one with the fewest edges inside it (ties: lowest id), so that no
// client is ever empty. Recursive bisection can leave a part empty when the
// coarsest graph has fewer vertices than parts.
func (r *kway) fillEmpty() {
	for p := range int32(len(r.pw)) {
		if r.pw[p] > 0 {
			continue
		}
		heavy := int32(0)
		for q := range int32(len(r.pw)) {
			if r.pw[q] > r.pw[heavy] {
				heavy = q
			}
		}
		best, bestOwn := int32(-1), 0
		for v := range int32(r.g.n()) {
			if r.part[v] != heavy {
				continue
			}
			own := r.connectivity(v)
			r.clear()
			if best < 0 || own < bestOwn {
				best, bestOwn = v, own
			}
		}
		r.move(best, p)
	}
}
