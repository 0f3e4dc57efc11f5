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
	s.addPicks(b, blk, picks, nt)
}

// addPicks adds the picked entries of a hop, target by target, in then
// out, as addEdge one edge at a time would (the rows and appends are the
// same), and lists their messages. Every pick may add an edge and a node,
// and each target's message slots are known from the block's Ptr, so the
// slices are sized first and written by index, in- and out-picks in loops
// of their own: the appends (eleven slice headers, more than the
// registers) and the branch on the direction cost more than the lookups.
func (s *Sampler) addPicks(b *Batch, blk *Block, picks []adjEntry, nt int) {
	stamp, edgeRow, nodeRow, deg := s.scr.stamp, s.scr.edgeRow, s.scr.nodeRow, s.idx.deg
	ne, nn := len(b.Edges), len(b.Nodes)
	edges := sampleGrow(b.Edges, ne+len(picks))
	esrc := sampleGrow(b.EdgeSrc, ne+len(picks))
	edst := sampleGrow(b.EdgeDst, ne+len(picks))
	nodes := sampleGrow(b.Nodes, nn+len(picks))
	degs := sampleGrow(b.Degree, nn+len(picks))
	inSrc, inEdge := sampleGrow(blk.In.Src, blk.In.Ptr[nt]), sampleGrow(blk.In.Edge, blk.In.Ptr[nt])
	outSrc, outEdge := sampleGrow(blk.Out.Src, blk.Out.Ptr[nt]), sampleGrow(blk.Out.Edge, blk.Out.Ptr[nt])
	at := 0
	for t := range nt {
		tt := int32(t)
		for k := blk.In.Ptr[t]; k < blk.In.Ptr[t+1]; k++ {
			a := picks[at]
			at++
			var r, o int32
			if p := edgeRow[a.edge]; p.stamp == stamp {
				r, o = p.row, esrc[p.row]
			} else {
				r = int32(ne)
				edgeRow[a.edge] = sampleRow{stamp, r}
				if q := nodeRow[a.other]; q.stamp == stamp {
					o = q.row
				} else {
					o = int32(nn)
					nodeRow[a.other] = sampleRow{stamp, o}
					nodes[nn], degs[nn] = a.other, deg[a.other]
					nn++
				}
				edges[ne], esrc[ne], edst[ne] = a.edge, o, tt
				ne++
			}
			inSrc[k], inEdge[k] = o, r
		}
		for k := blk.Out.Ptr[t]; k < blk.Out.Ptr[t+1]; k++ {
			a := picks[at]
			at++
			var r, o int32
			if p := edgeRow[a.edge]; p.stamp == stamp {
				r, o = p.row, edst[p.row]
			} else {
				r = int32(ne)
				edgeRow[a.edge] = sampleRow{stamp, r}
				if q := nodeRow[a.other]; q.stamp == stamp {
					o = q.row
				} else {
					o = int32(nn)
					nodeRow[a.other] = sampleRow{stamp, o}
					nodes[nn], degs[nn] = a.other, deg[a.other]
					nn++
				}
				edges[ne], esrc[ne], edst[ne] = a.edge, tt, o
				ne++
			}
			outSrc[k], outEdge[k] = o, r
		}
	}
	b.Edges, b.EdgeSrc, b.EdgeDst, b.Nodes, b.Degree = edges[:ne], esrc[:ne], edst[:ne], nodes[:nn], degs[:nn]
	blk.In.Src, blk.In.Edge, blk.Out.Src, blk.Out.Edge = inSrc, inEdge, outSrc, outEdge
}

// sampleGrow returns x extended to length n (n ≥ len(x)), keeping its
// contents and reallocating, with an eighth to spare, when short; the
// elements past len(x) are unspecified.
func sampleGrow(x []int32, n int) []int32 {
	if cap(x) >= n {
		return x[:n]
	}
	y := make([]int32, n, n+n/8)
	copy(y, x)
	return y
}
