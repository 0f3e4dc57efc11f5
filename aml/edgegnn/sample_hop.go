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
// same), and lists their messages. The batch's and the block's slices
// live in locals for the loop: appending to the fields through b and blk
// stored and reloaded every slice header at every append.
func (s *Sampler) addPicks(b *Batch, blk *Block, picks []adjEntry, nt int) {
	stamp, edgeRow, nodeRow, deg := s.scr.stamp, s.scr.edgeRow, s.scr.nodeRow, s.idx.deg
	edges, esrc, edst, nodes, degs := b.Edges, b.EdgeSrc, b.EdgeDst, b.Nodes, b.Degree
	inSrc, inEdge, outSrc, outEdge := blk.In.Src, blk.In.Edge, blk.Out.Src, blk.Out.Edge
	at := 0
	for t := range nt {
		tt := int32(t)
		ni, no := blk.In.Ptr[t+1]-blk.In.Ptr[t], blk.Out.Ptr[t+1]-blk.Out.Ptr[t]
		for j, a := range picks[at : at+ni+no] {
			in := j < ni
			var k, o int32
			if p := edgeRow[a.edge]; p.stamp == stamp {
				k = p.row
				if in {
					o = esrc[k]
				} else {
					o = edst[k]
				}
			} else {
				k = int32(len(edges))
				edgeRow[a.edge] = sampleRow{stamp, k}
				edges = append(edges, a.edge)
				if q := nodeRow[a.other]; q.stamp == stamp {
					o = q.row
				} else {
					o = int32(len(nodes))
					nodeRow[a.other] = sampleRow{stamp, o}
					nodes = append(nodes, a.other)
					degs = append(degs, deg[a.other])
				}
				if in {
					esrc, edst = append(esrc, o), append(edst, tt)
				} else {
					esrc, edst = append(esrc, tt), append(edst, o)
				}
			}
			if in {
				inSrc, inEdge = append(inSrc, o), append(inEdge, k)
			} else {
				outSrc, outEdge = append(outSrc, o), append(outEdge, k)
			}
		}
		at += ni + no
	}
	b.Edges, b.EdgeSrc, b.EdgeDst, b.Nodes, b.Degree = edges, esrc, edst, nodes, degs
	blk.In.Src, blk.In.Edge, blk.Out.Src, blk.Out.Edge = inSrc, inEdge, outSrc, outEdge
}
