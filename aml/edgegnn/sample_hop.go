package edgegnn

import "math/rand/v2"

// hop fills blk with the messages to the first nt nodes of b (the layer's
// targets): up to f of each target's incoming and of its outgoing visible
// edges, adding the new edges and nodes to b. It draws and adds in the
// order one target at a time would, so batches and draws are those of
// the plain loop, but in passes over the hop: draw every target's picks
// as positions in the adjacency arrays (the draws need only the degrees);
// read the entries there (edge and far endpoint); touch the scratch entries of every picked edge
// and of its endpoints; add them. The graph-sized arrays are read at random, one cache miss per
// read, and a short loop of independent reads keeps many misses in
// flight where the adding loop, long and branchy, kept a few (measured on
// the evaluation step, where sampling was over a third of the time).
func (s *Sampler) hop(b *Batch, blk *Block, nt, f int, rng *rand.Rand) {
	s.reset(&blk.In, nt)
	s.reset(&blk.Out, nt)
	idx, scr := s.idx, s.scr
	sink := scr.sink
	for _, v := range b.Nodes[:nt] {
		sink += uint32(idx.inPtr[v] + idx.outPtr[v])
	}
	cand := scr.cand[:0]
	nIn, nOut := 0, 0
	for t, v := range b.Nodes[:nt] {
		c0 := len(cand)
		lo := idx.inPtr[v]
		cand = s.pickAt(cand, lo, idx.inPtr[v+1]-lo, f, rng)
		nIn += len(cand) - c0
		blk.In.Ptr[t+1] = nIn
		c0 = len(cand)
		lo = idx.outPtr[v]
		cand = s.pickAt(cand, lo, idx.outPtr[v+1]-lo, f, rng)
		nOut += len(cand) - c0
		blk.Out.Ptr[t+1] = nOut
	}
	// Read the picked entries: each edge with its far endpoint.
	picks := scr.picks[:0]
	at := 0
	for t := range nt {
		n := blk.In.Ptr[t+1] - blk.In.Ptr[t]
		for _, p := range cand[at : at+n] {
			picks = append(picks, idx.inAdj[p])
		}
		at += n
		n = blk.Out.Ptr[t+1] - blk.Out.Ptr[t]
		for _, p := range cand[at : at+n] {
			picks = append(picks, idx.outAdj[p])
		}
		at += n
	}
	scr.cand, scr.picks = cand, picks
	// The near endpoint is a target, already in the batch: only the edge
	// and the far endpoint can miss.
	for _, a := range picks {
		sink += scr.edgeRow[a.edge].stamp + scr.nodeRow[a.other].stamp
	}
	scr.sink = sink
	at = 0
	for t := range nt {
		ni := blk.In.Ptr[t+1] - blk.In.Ptr[t]
		for _, a := range picks[at : at+ni] {
			k, u := s.addEdgeAt(b, a, int32(t), true)
			blk.In.Src = append(blk.In.Src, u)
			blk.In.Edge = append(blk.In.Edge, k)
		}
		at += ni
		no := blk.Out.Ptr[t+1] - blk.Out.Ptr[t]
		for _, a := range picks[at : at+no] {
			k, w := s.addEdgeAt(b, a, int32(t), false)
			blk.Out.Src = append(blk.Out.Src, w)
			blk.Out.Edge = append(blk.Out.Edge, k)
		}
		at += no
	}
}
