package edgegnn

import "graphfed/gnn"

// inputFold runs the first layer's message projection on sums of raw
// inputs instead of sums of encoded ones. The encoders are affine,
// h0_v = x_v·W_n + b_n and e0_k = x_k·W_e + b_e, so for a target's
// messages with weights w_k
//
//	Σ_k w_k·h0_{src(k)} = (Σ_k w_k·x_{src(k)})·W_n + (Σ_k w_k)·b_n
//
// and likewise for the edges: the projection of a direction's block,
// (Σ w·h0)·W_blk, is (Σ w·x)·(W_n·W_blk) + (Σ w)·(b_n·W_blk). The layer
// then multiplies a row of NodeIn + EdgeIn + 1 raw sums per direction
// (106 columns for GIN with reverse messages, against 256 encoded ones)
// by folded weights formed once per step, and the encoders only run on
// the rows the layer reads directly: its targets' h0 (the self term) and
// the edges its edge update reads, the first NumNodes[1] and NumEdges[1]
// rows of the batch, a fraction of the NumNodes[0] and NumEdges[0] whose
// inputs the messages gather. Backward needs no gradient for the gathered
// embeddings, so the first layer's input gradient and its scatter to
// every message's source row and edge row are gone; the encoders' and
// the projection's weight gradients follow from xrᵀ·dM by the chain rule.
//
// The sums are associated differently from the unfolded layer's, so the
// results agree to float32 rounding, not bit for bit (foldEquivalence
// tests it). The model folds only when nothing changes h0 or e0 between
// the encoders and the first layer: no layer-0 override, no ego offsets,
// ports or time deltas, and edge inputs in slots.
type inputFold struct {
	nodeEnc, edgeEnc *edgeLinear
	nodeX            *gnn.Tensor // the batch's node inputs, NumNodes[0] rows
	slots            *SlotRows   // the batch's edge inputs, NumEdges[0] rows

	// State of the last forward.
	xr  *gnn.Tensor // nt × width raw sums, layout in foldLayout
	wf  *gnn.Tensor // width × H folded weights
	out *gnn.Tensor // nt × H projection
	// Backward buffers.
	g, hh, nh, dxs *gnn.Tensor
	ws             []float32
	dense          *gnn.Tensor // nt × K sums of the slots' values
	varying        []int       // the slots whose column varies by row
	sink           uint8       // keeps foldRecordSums' touching pass from being optimised away
}

// foldLayout is the column layout of the raw-sum rows: [self (sage and
// gcn: H columns of self-scaled h0)] [node sums per direction, NodeIn
// each] [edge sums per direction, EdgeIn each] [weight sums per
// direction, one each].
type foldLayout struct {
	self, dirs, ni, ei int
	node, edge, sum    int // first columns of the blocks
	width              int
}

func (l *edgeLayer) foldLayout(f *inputFold) foldLayout {
	lay := foldLayout{dirs: l.dirs(), ni: f.nodeEnc.W.W.Rows, ei: f.edgeEnc.W.W.Rows}
	if l.kind != KindGIN {
		lay.self = l.hidden
	}
	lay.node = lay.self
	lay.edge = lay.node + lay.dirs*lay.ni
	lay.sum = lay.edge + lay.dirs*lay.ei
	lay.width = lay.sum + lay.dirs
	return lay
}

// msgRows returns the rows of the projection weights (or their
// gradient) for direction d's node and edge blocks: h at c0 + d·H,
// e at c0 + (dirs + d)·H, with c0 = H for the self block of sage and gcn.
func (l *edgeLayer) msgRows(w *gnn.Tensor, lay foldLayout, d int) (*gnn.Tensor, *gnn.Tensor) {
	H := l.hidden
	h0 := lay.self + d*H
	e0 := lay.self + (lay.dirs+d)*H
	return w.Slice(h0, h0+H), w.Slice(e0, e0+H)
}

// foldForward returns the first layer's projection xr·W' + b (nt×H,
// owned by the fold) for targets nt of block blk, hPrev the targets' h0.
func (l *edgeLayer) foldForward(f *inputFold, blk *Block, hPrev *gnn.Tensor, nt int) *gnn.Tensor {
	H, lay := l.hidden, l.foldLayout(f)
	f.xr = edgeReuse(f.xr, nt, lay.width)
	// W' = [W_self; W_n·W_h(d) …; W_e·W_e(d) …; b_n·W_h(d) + b_e·W_e(d) …].
	f.wf = edgeReuse(f.wf, lay.width, H)
	W := l.node.W.W
	if lay.self > 0 {
		copy(f.wf.Data[:H*H], W.Data[:H*H])
	}
	for d := range lay.dirs {
		wh, we := l.msgRows(W, lay, d)
		gnn.MatMul(f.wf.Slice(lay.node+d*lay.ni, lay.node+(d+1)*lay.ni), f.nodeEnc.W.W, wh)
		gnn.MatMul(f.wf.Slice(lay.edge+d*lay.ei, lay.edge+(d+1)*lay.ei), f.edgeEnc.W.W, we)
		row := f.wf.Slice(lay.sum+d, lay.sum+d+1)
		gnn.MatMul(row, f.nodeEnc.B.W, wh)
		f.hh = edgeReuse(f.hh, 1, H)
		gnn.MatMul(f.hh, f.edgeEnc.B.W, we)
		gnn.Add(row, row, f.hh)
	}
	f.out = edgeReuse(f.out, nt, H)
	msgs := []*Messages{&blk.In, &blk.Out}[:lay.dirs]
	if f.foldRecords(l) {
		f.foldRecordsForward(lay, msgs, l.node.B.W, nt)
		return f.out
	}
	f.xr.Zero()
	if lay.self > 0 {
		edgeGatherRows(f.xr, 0, hPrev, nil, l.self, nt)
	}
	ws := [][]float32{l.wIn, l.wOut}
	for d, m := range msgs {
		gnn.GatherRowsNarrow(f.xr.Data, lay.width, lay.node+d*lay.ni, m.Ptr, m.Src, ws[d], f.nodeX.Data, lay.ni, 0, nt)
		f.foldSlotSums(f.xr, lay.edge+d*lay.ei, lay.sum+d, m, ws[d], nt)
	}
	edgeMatMulBias(f.out, f.xr, f.wf, l.node.B.W)
	return f.out
}

// foldSlotSums adds, for each target t < nt, Σ_k w_k·x_k of its messages'
// edge inputs into columns [c0, c0+Cols) of xr's row t, and Σ_k w_k into
// column cs. With the slots' fixed layout known, the fixed slots are
// summed as dense K-wide rows (register sums, no read-modify-write of a
// column per slot and message) and only the one-hot slots are added one
// by one.
func (f *inputFold) foldSlotSums(xr *gnn.Tensor, c0, cs int, m *Messages, w []float32, nt int) {
	s := f.slots
	s.Complete()
	K, ei, ld := s.K, s.Cols, xr.Cols
	fixed := len(s.fixed) == K
	vary := f.varying[:0]
	if fixed {
		f.dense = edgeReuse(f.dense, nt, K)
		gnn.GatherRowsNarrow(f.dense.Data, K, 0, m.Ptr, m.Edge, w, s.Val, K, 0, nt)
		for j, c := range s.fixed {
			if c < 0 {
				vary = append(vary, j)
			}
		}
	} else {
		for j := range K {
			vary = append(vary, j)
		}
	}
	f.varying = vary
	for t := range nt {
		row := xr.Data[t*ld+c0 : t*ld+c0+ei]
		if fixed {
			for j, v := range f.dense.Row(t) {
				if c := s.fixed[j]; c >= 0 {
					row[c] += v
				}
			}
		}
		var sum float32
		for k := m.Ptr[t]; k < m.Ptr[t+1]; k++ {
			wk, e := w[k], int(m.Edge[k])
			idx, val := s.Idx[e*K:(e+1)*K], s.Val[e*K:(e+1)*K]
			for _, j := range vary {
				row[idx[j]] += wk * val[j]
			}
			sum += wk
		}
		xr.Data[t*ld+cs] = sum
	}
}

// foldBackward takes dM, the gradient w.r.t. the last foldForward's
// projection, and adds the gradients of the projection's weights and
// bias and of both encoders'; for sage and gcn it also adds the self
// block's input gradient into dhPrev's first nt rows.
func (l *edgeLayer) foldBackward(f *inputFold, dM, dhPrev *gnn.Tensor) {
	H, lay := l.hidden, l.foldLayout(f)
	nt := dM.Rows
	gnn.AddBiasGrad(l.node.B.G, dM)
	f.g = edgeReuse(f.g, lay.width, H)
	gnn.MatMulTN(f.g, f.xr, dM)
	W, dW := l.node.W.W, l.node.W.G
	if lay.self > 0 {
		gs := dW.Slice(0, H)
		gnn.Add(gs, gs, f.g.Slice(0, H))
		f.dxs = edgeReuse(f.dxs, nt, H)
		gnn.MatMulNTWork(f.dxs, dM, W.Slice(0, H), &f.ws)
		edgeScatterRows(dhPrev, nil, l.self, f.dxs, 0, nt)
	}
	f.hh = edgeReuse(f.hh, H, H)
	for d := range lay.dirs {
		wh, we := l.msgRows(W, lay, d)
		dwh, dwe := l.msgRows(dW, lay, d)
		gn := f.g.Slice(lay.node+d*lay.ni, lay.node+(d+1)*lay.ni)
		ge := f.g.Slice(lay.edge+d*lay.ei, lay.edge+(d+1)*lay.ei)
		gsum := f.g.Row(lay.sum + d)
		// Projection blocks: dW_h(d) += W_nᵀ·G_n + b_nᵀ·g_sum, dW_e(d) likewise.
		gnn.MatMulTN(f.hh, f.nodeEnc.W.W, gn)
		gnn.Add(dwh, dwh, f.hh)
		foldOuterAdd(dwh, f.nodeEnc.B.W.Data, gsum)
		gnn.MatMulTN(f.hh, f.edgeEnc.W.W, ge)
		gnn.Add(dwe, dwe, f.hh)
		foldOuterAdd(dwe, f.edgeEnc.B.W.Data, gsum)
		// Encoders: dW_n += G_n·W_h(d)ᵀ, db_n += g_sum·W_h(d)ᵀ; the edge encoder likewise.
		f.nh = edgeReuse(f.nh, lay.ni, H)
		gnn.MatMulNTWork(f.nh, gn, wh, &f.ws)
		gnn.Add(f.nodeEnc.W.G, f.nodeEnc.W.G, f.nh)
		f.nh = edgeReuse(f.nh, lay.ei, H)
		gnn.MatMulNTWork(f.nh, ge, we, &f.ws)
		gnn.Add(f.edgeEnc.W.G, f.edgeEnc.W.G, f.nh)
		foldRowTimesTAdd(f.nodeEnc.B.G.Data, gsum, wh)
		foldRowTimesTAdd(f.edgeEnc.B.G.Data, gsum, we)
	}
}

// foldOuterAdd adds the outer product aᵀ·b into dst (len(a)×len(b)).
func foldOuterAdd(dst *gnn.Tensor, a, b []float32) {
	for i, x := range a {
		row := dst.Row(i)
		for j, y := range b {
			row[j] += x * y
		}
	}
}

// foldRowTimesTAdd adds g·Wᵀ (g 1×H, W n×H) into dst (1×n).
func foldRowTimesTAdd(dst, g []float32, w *gnn.Tensor) {
	for i := range dst {
		var s float32
		for j, v := range w.Row(i) {
			s += v * g[j]
		}
		dst[i] += s
	}
}
