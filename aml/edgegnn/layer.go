package edgegnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"graphfed/gnn"
)

// edgeLayer is one message-passing layer of the edge model: a node update
// over the batch block's messages, then an edge update. Hidden width H in
// and out. With x^in_v and x^out_v the aggregated incoming and outgoing
// messages' [h_u | e_uv] (weights by kind, below) and s_v the self term:
//
//	sage: Z_v = [s_v | x^in_v | x^out_v]·W + b          (5H×H), mean per direction, s_v = h_v
//	gcn:  same, with a_vu = (d_v/m_v)/sqrt((1+d_v)(1+d_u)) and s_v = h_v/(1+d_v)
//	gin:  Z_v = MLP((1+ε)·h_v + [x^in_v | x^out_v]·W + b) (4H×H), plain sums
//
// and h'_v = ReLU(Z_v). A message is linear in [h_u | e_uv] with separate
// weights per direction (reverse message passing), so aggregating first
// and projecting once per target is exact. For gcn, d is a node's visible
// degree (both directions) and m_v the number of messages v received in
// the block: with full neighbourhoods d_v = m_v and the weights are the
// symmetric normalisation with self-loops; under sampling the factor
// d_v/m_v keeps the sum's scale.
//
// Without reverse message passing the x^out_v blocks are absent (3H×H for
// sage and gcn, 2H×H for gin): messages follow the edges only. For gcn the
// scale d_v/m_v then counts incoming messages only.
//
// Edge update (when enabled) for every edge the next layer or the head
// needs:
//
//	e'_uv = e_uv + ReLU([h'_u | h'_v | e_uv]·U + c)  (3H×H)
type edgeLayer struct {
	kind    string
	hidden  int
	reverse bool        // aggregate outgoing messages too, with their own weights
	node    *edgeLinear // sage/gcn: 5H→H; gin: the message projection 4H→H
	eps     *gnn.Param  // gin: ε, 1×1
	mlp1    *edgeLinear // gin
	mlp2    *edgeLinear // gin
	update  *edgeUpdate // nil: no edge update
	// fold, set by the model for the first layer of a step, runs the
	// message projection on sums of raw inputs (fold.go); nil otherwise.
	fold *inputFold

	// State of the last forward.
	b            *Batch
	layer        int
	hPrev, ePrev *gnn.Tensor
	ovs          []EmbeddingOverride
	wIn, wOut    []float32   // per-message weights
	self         []float32   // per-target self scale (sage/gcn)
	x, z, h      *gnn.Tensor // concatenated aggregate, pre-activation, output
	inner, r     *gnn.Tensor // gin: MLP input (in the message projection's output), ReLU of its hidden layer
	e            *gnn.Tensor // edge update output
	// Gradient buffers.
	dh, dz, da, dhPrev, dePrev *gnn.Tensor
}

// newEdgeLayer builds layer name of the given kind; update enables the
// edge update, reverse the outgoing messages.
func newEdgeLayer(name, kind string, hidden int, update, reverse bool, rng *rand.Rand) (*edgeLayer, error) {
	l := &edgeLayer{kind: kind, hidden: hidden, reverse: reverse}
	switch kind {
	case gnn.KindSAGE, gnn.KindGCN:
		l.node = newEdgeLinear(name+".node", (1+l.dirs()*2)*hidden, hidden, rng)
	case KindGIN:
		l.node = newEdgeLinear(name+".msg", l.dirs()*2*hidden, hidden, rng)
		l.eps = gnn.NewParam(name+".eps", 1, 1, false)
		l.mlp1 = newEdgeLinear(name+".mlp1", hidden, hidden, rng)
		l.mlp2 = newEdgeLinear(name+".mlp2", hidden, hidden, rng)
	default:
		return nil, fmt.Errorf("gnn: new edge layer: unknown kind %q (want %q, %q or %q)", kind, gnn.KindSAGE, KindGIN, gnn.KindGCN)
	}
	if update {
		l.update = newEdgeUpdate(name+".edge", hidden, rng)
	}
	return l, nil
}

// dirs is the number of message directions aggregated: 2 with reverse
// message passing, else 1.
func (l *edgeLayer) dirs() int {
	if l.reverse {
		return 2
	}
	return 1
}

// params lists the parameters: node projection, [ε, MLP,] edge update.
func (l *edgeLayer) params() []*gnn.Param {
	ps := l.node.params()
	if l.kind == KindGIN {
		ps = append(ps, l.eps)
		ps = append(append(ps, l.mlp1.params()...), l.mlp2.params()...)
	}
	if l.update != nil {
		ps = append(ps, l.update.params()...)
	}
	return ps
}

// forward runs layer `layer` (1..L) of batch b on the previous layer's
// node embeddings hPrev (NumNodes[layer−1]×H) and edge embeddings ePrev
// (NumEdges[layer−1]×H); with a fold, on the first NumNodes[1] and
// NumEdges[1] rows of h0 and e0 only. It returns h (NumNodes[layer]×H,
// after ovs) and, with the edge update, e (NumEdges[layer]×H), else nil;
// both owned by l.
func (l *edgeLayer) forward(b *Batch, layer int, hPrev, ePrev *gnn.Tensor, ovs []EmbeddingOverride) (*gnn.Tensor, *gnn.Tensor) {
	H := l.hidden
	nt, ns, ne := b.NumNodes[layer], b.NumNodes[layer-1], b.NumEdges[layer-1]
	if l.fold != nil {
		ns, ne = nt, b.NumEdges[layer]
	}
	if hPrev.Rows != ns || hPrev.Cols != H || ePrev.Rows != ne || ePrev.Cols != H {
		gnn.ShapePanic("edge layer forward", "inputs %v and %v for %d nodes and %d edges of width %d",
			hPrev, ePrev, ns, ne, H)
	}
	l.b, l.layer, l.hPrev, l.ePrev, l.ovs = b, layer, hPrev, ePrev, ovs
	blk := &b.Blocks[layer-1]
	l.prepare(b, blk, nt)
	var proj *gnn.Tensor
	if l.fold != nil {
		proj = l.foldForward(l.fold, blk, hPrev, nt)
	} else {
		proj = l.project(blk, hPrev, ePrev, nt)
	}
	if l.kind == KindGIN {
		l.z = l.ginForward(proj, hPrev, nt)
	} else {
		l.z = proj
	}
	applyOverrides(l.z, ovs, layer, true)
	l.h = edgeReuse(l.h, nt, H)
	edgeReLU(l.h, l.z)
	applyOverrides(l.h, ovs, layer, false)
	if l.update == nil {
		return l.h, nil
	}
	l.e = l.update.forward(l.h, ePrev, b.EdgeSrc, b.EdgeDst, b.NumEdges[layer])
	return l.h, l.e
}

// project returns the layer's projection x·W + b (nt×H, owned by l.node)
// of the concatenated aggregates x (for gin without the self term, which
// ginForward adds).
func (l *edgeLayer) project(blk *Block, hPrev, ePrev *gnn.Tensor, nt int) *gnn.Tensor {
	H, c0, k := l.hidden, 0, l.dirs()
	if l.kind == KindGIN {
		l.x = edgeReuse(l.x, nt, 2*k*H)
	} else {
		l.x = edgeReuse(l.x, nt, (1+2*k)*H)
		edgeGatherRows(l.x, 0, hPrev, nil, l.self, nt)
		c0 = H
	}
	// Columns: [h in | (h out) | e in | (e out)].
	edgeGatherMsgs(l.x, c0, &blk.In, blk.In.Src, l.wIn, hPrev)
	edgeGatherMsgs(l.x, c0+k*H, &blk.In, blk.In.Edge, l.wIn, ePrev)
	if l.reverse {
		edgeGatherMsgs(l.x, c0+H, &blk.Out, blk.Out.Src, l.wOut, hPrev)
		edgeGatherMsgs(l.x, c0+3*H, &blk.Out, blk.Out.Edge, l.wOut, ePrev)
	}
	return l.node.forward(l.x)
}

// prepare computes the per-message weights and self scales of the kind.
func (l *edgeLayer) prepare(b *Batch, blk *Block, nt int) {
	l.wIn = gnn.Grow(&l.wIn, len(blk.In.Src))
	l.wOut = gnn.Grow(&l.wOut, len(blk.Out.Src))
	l.self = gnn.Grow(&l.self, nt)
	if l.kind == KindGIN { // every weight 1: three fills, not two calls per target
		edgeFill(l.wIn, 1)
		edgeFill(l.wOut, 1)
		edgeFill(l.self, 1)
		return
	}
	for t := range nt {
		i0, i1 := blk.In.Ptr[t], blk.In.Ptr[t+1]
		o0, o1 := blk.Out.Ptr[t], blk.Out.Ptr[t+1]
		wi, wo := l.wIn[i0:i1], l.wOut[o0:o1]
		l.self[t] = 1
		switch l.kind {
		case gnn.KindSAGE:
			edgeFill(wi, 1/float32(max(i1-i0, 1)))
			edgeFill(wo, 1/float32(max(o1-o0, 1)))
		case KindGIN:
			edgeFill(wi, 1)
			edgeFill(wo, 1)
		case gnn.KindGCN:
			d := float64(b.Degree[t])
			scale := 1.0
			m := i1 - i0
			if l.reverse {
				m += o1 - o0
			}
			if m > 0 {
				scale = d / float64(m)
			}
			scale /= math.Sqrt(1 + d)
			for k, s := range blk.In.Src[i0:i1] {
				wi[k] = float32(scale / math.Sqrt(1+float64(b.Degree[s])))
			}
			for k, s := range blk.Out.Src[o0:o1] {
				wo[k] = float32(scale / math.Sqrt(1+float64(b.Degree[s])))
			}
			l.self[t] = float32(1 / (1 + d))
		}
	}
}

// backward takes the loss gradients w.r.t. the last forward's h and e (nil
// without the edge update), accumulates the parameter gradients, and
// returns the gradients w.r.t. hPrev and ePrev (owned by l).
func (l *edgeLayer) backward(dH, dE *gnn.Tensor) (*gnn.Tensor, *gnn.Tensor) {
	H, b, layer := l.hidden, l.b, l.layer
	nt := b.NumNodes[layer]
	if dH.Rows != nt || dH.Cols != H {
		gnn.ShapePanic("edge layer backward", "gradient %v for %d nodes of width %d", dH, nt, H)
	}
	l.dh = edgeReuse(l.dh, nt, H)
	l.dePrev = edgeReuse(l.dePrev, l.ePrev.Rows, H)
	if l.update != nil {
		ne := b.NumEdges[layer]
		if dE == nil || dE.Rows != ne || dE.Cols != H {
			gnn.ShapePanic("edge layer backward", "edge gradient %v for %d edges of width %d", dE, ne, H)
		}
		dh, _ := l.update.backward(dE, l.dePrev) // writes all of dePrev
		gnn.Add(l.dh, dH, dh)
	} else {
		l.dh.Copy(dH)
		l.dePrev.Zero()
	}
	scaleOverrideGrads(l.dh, l.ovs, layer, false)
	l.dz = edgeReuse(l.dz, nt, H)
	gnn.ReLUBackward(l.dz, l.dh, l.z)
	scaleOverrideGrads(l.dz, l.ovs, layer, true)
	l.dhPrev = edgeReuse(l.dhPrev, l.hPrev.Rows, H)
	l.dhPrev.Zero()
	if l.fold != nil {
		dM := l.dz
		if l.kind == KindGIN {
			dM = l.ginBackward(l.dz, nt)
		}
		l.foldBackward(l.fold, dM, l.dhPrev)
		return l.dhPrev, l.dePrev
	}
	var dx *gnn.Tensor
	c0 := 0
	if l.kind == KindGIN {
		dx = l.node.backward(l.ginBackward(l.dz, nt), true)
	} else {
		dx = l.node.backward(l.dz, true)
		edgeScatterRows(l.dhPrev, nil, l.self, dx, 0, nt)
		c0 = H
	}
	blk := &b.Blocks[layer-1]
	k := l.dirs()
	edgeScatterMsgs(l.dhPrev, blk.In.Src, l.wIn, &blk.In, dx, c0)
	edgeScatterMsgs(l.dePrev, blk.In.Edge, l.wIn, &blk.In, dx, c0+k*H)
	if l.reverse {
		edgeScatterMsgs(l.dhPrev, blk.Out.Src, l.wOut, &blk.Out, dx, c0+H)
		edgeScatterMsgs(l.dePrev, blk.Out.Edge, l.wOut, &blk.Out, dx, c0+3*H)
	}
	return l.dhPrev, l.dePrev
}

func edgeFill(x []float32, v float32) {
	for i := range x {
		x[i] = v
	}
}
