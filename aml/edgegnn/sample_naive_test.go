package edgegnn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveSample is the sampler's definition as a plain loop: the seeds,
// then per layer, target by target, up to f of its incoming edges (drawn
// as pickAt draws them) added one at a time, then up to f of its outgoing
// ones, nodes and edges getting rows in the order first met. Maps stand
// in for the scratch rows.
func naiveSample(x *Index, fanOut []int, seeds []int32, rng *rand.Rand) *Batch {
	L := len(fanOut)
	b := &Batch{NumNodes: make([]int, L+1), NumEdges: make([]int, L+1), Blocks: make([]Block, L)}
	nodeRow, edgeRow := map[int32]int32{}, map[int32]int32{}
	node := func(v int32) int32 {
		if r, ok := nodeRow[v]; ok {
			return r
		}
		r := int32(len(b.Nodes))
		nodeRow[v] = r
		b.Nodes, b.Degree = append(b.Nodes, v), append(b.Degree, int32(x.Degree(v)))
		return r
	}
	edge := func(e int32) int32 {
		if r, ok := edgeRow[e]; ok {
			return r
		}
		r := int32(len(b.Edges))
		edgeRow[e] = r
		b.Edges = append(b.Edges, e)
		s, d := node(x.src[e]), node(x.dst[e])
		b.EdgeSrc, b.EdgeDst = append(b.EdgeSrc, s), append(b.EdgeDst, d)
		return r
	}
	for _, e := range seeds {
		edge(e)
	}
	b.NumNodes[L], b.NumEdges[L] = len(b.Nodes), len(b.Edges)
	s := &Sampler{idx: x, scr: new(SampleScratch)}
	for l := L; l >= 1; l-- {
		f, blk, nt := fanOut[L-l], &b.Blocks[l-1], b.NumNodes[l]
		blk.In.Ptr, blk.Out.Ptr = []int{0}, []int{0}
		for t := range nt {
			v := b.Nodes[t]
			for _, p := range s.pickAt(nil, x.inPtr[v], x.inPtr[v+1]-x.inPtr[v], f, rng) {
				e := x.inEdg[p]
				k := edge(e)
				blk.In.Src, blk.In.Edge = append(blk.In.Src, b.EdgeSrc[k]), append(blk.In.Edge, k)
			}
			blk.In.Ptr = append(blk.In.Ptr, len(blk.In.Src))
			for _, p := range s.pickAt(nil, x.outPtr[v], x.outPtr[v+1]-x.outPtr[v], f, rng) {
				e := x.outEdge[p]
				k := edge(e)
				blk.Out.Src, blk.Out.Edge = append(blk.Out.Src, b.EdgeDst[k]), append(blk.Out.Edge, k)
			}
			blk.Out.Ptr = append(blk.Out.Ptr, len(blk.Out.Src))
		}
		b.NumNodes[l-1], b.NumEdges[l-1] = len(b.Nodes), len(b.Edges)
	}
	return b
}

// TestEdgeSamplerNaive checks that Sample's passes (picks drawn for a
// whole hop, entries read with their far endpoints, added in one loop)
// give exactly the batch of the plain loop, on a multigraph with
// self-transfers and parallel edges, with several samplings through one
// scratch.
func TestEdgeSamplerNaive(t *testing.T) {
	rng := newRNG(81)
	src, dst := randMultigraph(rng, 40, 400)
	x, err := NewIndex(40, src, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, fanOut := range [][]int{{3, 2}, {-1, -1}, {5, 5}, {2, 1, 4}} {
		s, err := NewSampler(x, fanOut)
		if err != nil {
			t.Fatal(err)
		}
		var b Batch
		for round := range 4 {
			seeds := []int32{int32(round), 17, int32(100 + round*7), 399}
			if err := s.Sample(&b, seeds, newRNG(uint64(round))); err != nil {
				t.Fatal(err)
			}
			want := naiveSample(x, fanOut, seeds, newRNG(uint64(round)))
			same := slices.Equal(b.Nodes, want.Nodes) && slices.Equal(b.Degree, want.Degree) && slices.Equal(b.Edges, want.Edges) &&
				slices.Equal(b.EdgeSrc, want.EdgeSrc) && slices.Equal(b.EdgeDst, want.EdgeDst) &&
				slices.Equal(b.NumNodes, want.NumNodes) && slices.Equal(b.NumEdges, want.NumEdges)
			for l := range b.Blocks {
				g, w := &b.Blocks[l], &want.Blocks[l]
				same = same && slices.Equal(g.In.Ptr, w.In.Ptr) && slices.Equal(g.In.Src, w.In.Src) && slices.Equal(g.In.Edge, w.In.Edge) &&
					slices.Equal(g.Out.Ptr, w.Out.Ptr) && slices.Equal(g.Out.Src, w.Out.Src) && slices.Equal(g.Out.Edge, w.Out.Edge)
			}
			if !same {
				t.Fatalf("fan-out %v round %d: the sampler's batch differs from the plain loop's", fanOut, round)
			}
		}
	}
}
