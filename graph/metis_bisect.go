package graph

import (
	"math"
	"math/rand/v2"
)

// Initial partitioning: the coarsest graph (a few hundred vertices) is cut
// into k parts by recursive bisection, as METIS's k-way driver does. Each
// bisection grows one side greedily from a random seed several times,
// balances and refines each try with Fiduccia–Mattheyses, and keeps the best.

// bisection is a two-way partition of g under refinement.
type bisection struct {
	g      *wgraph
	side   []int32
	w      [2]int // side weights
	target [2]int
	maxW   [2]int
	id, ed []int // weight of edges to the vertex's own / the other side
	cut    int
}

func newBisection(g *wgraph, side []int32, target0 int, ub float64) *bisection {
	b := &bisection{g: g, side: side, id: make([]int, g.n()), ed: make([]int, g.n())}
	b.target = [2]int{target0, g.total - target0}
	for s := range 2 {
		b.maxW[s] = int(math.Floor(float64(b.target[s]) * (1 + ub)))
	}
	b.recompute()
	return b
}

// recompute derives side weights, id/ed and the cut from side.
func (b *bisection) recompute() {
	g := b.g
	b.w, b.cut = [2]int{}, 0
	for v := range g.n() {
		b.w[b.side[v]] += int(g.vwgt[v])
		b.id[v], b.ed[v] = 0, 0
		for e := g.xadj[v]; e < g.xadj[v+1]; e++ {
			if b.side[g.adj[e]] == b.side[v] {
				b.id[v] += int(g.ewgt[e])
			} else {
				b.ed[v] += int(g.ewgt[e])
			}
		}
		b.cut += b.ed[v]
	}
	b.cut /= 2
}

// violation is how far the sides exceed their maximum weights.
func (b *bisection) violation() int {
	return max(0, b.w[0]-b.maxW[0]) + max(0, b.w[1]-b.maxW[1])
}

// move flips v to the other side and keeps id, ed, the cut and the side
// weights exact; onNeighbour sees every neighbour after its update.
func (b *bisection) move(v int32, onNeighbour func(u int32)) {
	g := b.g
	from := b.side[v]
	to := 1 - from
	b.cut -= b.ed[v] - b.id[v]
	b.w[from] -= int(g.vwgt[v])
	b.w[to] += int(g.vwgt[v])
	b.side[v] = to
	b.id[v], b.ed[v] = b.ed[v], b.id[v]
	for e := g.xadj[v]; e < g.xadj[v+1]; e++ {
		u, w := g.adj[e], int(g.ewgt[e])
		if b.side[u] == to {
			b.id[u] += w
			b.ed[u] -= w
		} else {
			b.id[u] -= w
			b.ed[u] += w
		}
		if onNeighbour != nil {
			onNeighbour(u)
		}
	}
}

// balance moves the vertices of best gain off an overweight side, never
// overfilling the other, until no side is over its maximum.
func (b *bisection) balance() {
	for s := range int32(2) {
		if b.w[s] <= b.maxW[s] {
			continue
		}
		q := newGainPQ(b.g.n())
		for v := range int32(b.g.n()) {
			if b.side[v] == s {
				q.set(v, b.ed[v]-b.id[v])
			}
		}
		for b.w[s] > b.maxW[s] && q.len() > 0 {
			v := q.pop()
			if b.w[1-s]+int(b.g.vwgt[v]) > b.maxW[1-s] {
				continue
			}
			b.move(v, func(u int32) {
				if q.contains(u) {
					q.set(u, b.ed[u]-b.id[u])
				}
			})
		}
	}
}

// fm runs up to passes Fiduccia–Mattheyses passes: each moves boundary
// vertices one at a time, always off the side that is heavier than its
// target, locks them, and finally rolls back to the best state seen
// (least violation, then least cut, then closest to target). It stops
// after a pass that improves nothing.
func (b *bisection) fm(passes int) {
	g := b.g
	n := g.n()
	limit := min(max(n/100, 15), 100) // non-improving moves before giving up
	q := [2]*gainPQ{newGainPQ(n), newGainPQ(n)}
	locked := make([]bool, n)
	var moves []int32
	for range passes {
		q[0].reset()
		q[1].reset()
		for v := range int32(n) {
			locked[v] = false
			if b.ed[v] > 0 {
				q[b.side[v]].set(v, b.ed[v]-b.id[v])
			}
		}
		moves = moves[:0]
		bestViol, bestCut, bestDiff, bestAt := b.violation(), b.cut, abs(b.w[0]-b.target[0]), 0
		startCut, startViol := bestCut, bestViol
		for {
			from := int32(1)
			if b.w[0] > b.target[0] {
				from = 0
			}
			if q[from].len() == 0 {
				break
			}
			v := q[from].pop()
			locked[v] = true
			moves = append(moves, v)
			b.move(v, func(u int32) {
				switch {
				case locked[u]:
				case b.ed[u] > 0:
					q[b.side[u]].set(u, b.ed[u]-b.id[u])
				default:
					q[b.side[u]].remove(u)
				}
			})
			viol, diff := b.violation(), abs(b.w[0]-b.target[0])
			if viol < bestViol || viol == bestViol && (b.cut < bestCut || b.cut == bestCut && diff < bestDiff) {
				bestViol, bestCut, bestDiff, bestAt = viol, b.cut, diff, len(moves)
			} else if len(moves)-bestAt > limit {
				break
			}
		}
		for i := len(moves) - 1; i >= bestAt; i-- {
			b.move(moves[i], nil)
		}
		if bestCut >= startCut && bestViol >= startViol {
			return
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// grow puts a greedily grown region of weight about target0 on side 0 and
// the rest on side 1: starting from a random vertex it repeatedly adds the
// frontier vertex whose move lowers the cut most, and jumps to a random
// unreached vertex when the component runs out.
func (g *wgraph) grow(target0 int, rng *rand.Rand) []int32 {
	n := g.n()
	side := make([]int32, n)
	for i := range side {
		side[i] = 1
	}
	conn0 := make([]int, n) // edge weight from each vertex into side 0
	wdeg := make([]int, n)
	for v := range n {
		for e := g.xadj[v]; e < g.xadj[v+1]; e++ {
			wdeg[v] += int(g.ewgt[e])
		}
	}
	q := newGainPQ(n)
	order := rng.Perm(n)
	next, w0 := 0, 0
	for w0 < target0 {
		var v int32
		if q.len() > 0 {
			v = q.pop()
		} else {
			for next < n && side[order[next]] == 0 {
				next++
			}
			if next == n {
				break
			}
			v = int32(order[next])
		}
		// Stop rather than overshoot by more than half the vertex.
		if w0+int(g.vwgt[v])/2 > target0 && w0 > 0 {
			break
		}
		side[v] = 0
		w0 += int(g.vwgt[v])
		for e := g.xadj[v]; e < g.xadj[v+1]; e++ {
			u := g.adj[e]
			if side[u] == 1 {
				conn0[u] += int(g.ewgt[e])
				q.set(u, 2*conn0[u]-wdeg[u])
			}
		}
	}
	return side
}

// bisectCoarsenTo is where the multilevel bisection stops coarsening and
// grows its initial sides (METIS's MlevelBisection also goes down to a
// few dozen vertices).
const bisectCoarsenTo = 40

// bisect splits g into a side 0 of weight share frac0 and a side 1, each
// within (1+ub) of its target. It is multilevel itself, like METIS's
// bisection: it coarsens g by heavy-edge matching to about
// bisectCoarsenTo vertices, keeps the least-cut of tries greedy-growing
// starts there, and refines with FM on the way back up.
func (g *wgraph) bisect(frac0, ub float64, tries, passes int, rng *rand.Rand) []int32 {
	graphs, cmaps := g.coarsen(bisectCoarsenTo, rng)
	coarsest := graphs[len(graphs)-1]
	target0 := int(math.Round(frac0 * float64(g.total)))
	var best *bisection
	for range max(tries, 1) {
		b := newBisection(coarsest, coarsest.grow(target0, rng), target0, ub)
		b.balance()
		b.fm(passes)
		if best == nil || b.violation() < best.violation() ||
			b.violation() == best.violation() && b.cut < best.cut {
			best = b
		}
	}
	side := best.side
	for lvl := len(graphs) - 2; lvl >= 0; lvl-- {
		fine := make([]int32, graphs[lvl].n())
		for u, c := range cmaps[lvl] {
			fine[u] = side[c]
		}
		b := newBisection(graphs[lvl], fine, target0, ub)
		b.balance()
		b.fm(passes)
		side = b.side
	}
	return side
}

// recursiveBisection cuts g into k parts of equal target weight: parts
// [base, base+k/2) go to side 0 of a bisection with share (k/2)/k, the rest
// to side 1, recursively. out receives each vertex's part through ids
// (vertex of g -> index into out; nil for the identity).
func (g *wgraph) recursiveBisection(k int, base int32, out, ids []int32, opt MetisOptions, rng *rand.Rand) {
	if k == 1 || g.n() <= 1 {
		for v := range int32(g.n()) {
			out[pick(ids, v)] = base
		}
		return
	}
	k0 := k / 2
	side := g.bisect(float64(k0)/float64(k), opt.Imbalance, opt.InitTries, opt.RefinePasses, rng)
	for s := range int32(2) {
		h, hids := g.subgraph(side, s)
		for i, v := range hids {
			hids[i] = pick(ids, v)
		}
		kk, bb := k0, base
		if s == 1 {
			kk, bb = k-k0, base+int32(k0)
		}
		h.recursiveBisection(kk, bb, out, hids, opt, rng)
	}
}

func pick(ids []int32, v int32) int32 {
	if ids == nil {
		return v
	}
	return ids[v]
}

// coarsen contracts heavy-edge matchings of g until at most to vertices
// remain or a matching stops shrinking the graph by coarsenFraction. It
// returns the graphs from g to the coarsest and, per contraction, the map
// from a graph's vertices to the next one's. A merged vertex weighs at
// most 1.5 × total/to, so the coarsest graph can still be balanced.
func (g *wgraph) coarsen(to int, rng *rand.Rand) ([]*wgraph, [][]int32) {
	graphs := []*wgraph{g}
	var cmaps [][]int32
	maxVW := int32(max(1, int(1.5*float64(g.total)/float64(to))))
	for cur := g; cur.n() > to; {
		cmap, members := cur.matchHeavyEdges(maxVW, rng)
		if float64(len(members)) > coarsenFraction*float64(cur.n()) {
			break
		}
		cur = cur.contract(cmap, members)
		graphs = append(graphs, cur)
		cmaps = append(cmaps, cmap)
	}
	return graphs, cmaps
}
