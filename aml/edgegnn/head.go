package edgegnn

import (
	"math/rand/v2"

	"graphfed/gnn"
)

// edgeHead is the transaction classifier on top of the last layer, the
// design's h(e) = φ(W_e·(h_u + h_v)/2) (CE-FedGNN Eq. 3), optionally with
// the edge's own final embedding concatenated (Multi-GNN's readout):
//
//	x   = [(h_u + h_v)/2 | e_uv]          (H or 2H columns)
//	a   = ReLU(x·W_e + b_e)               (H)
//	out = φ(a) = ReLU(a·W1 + b1)·W2 + b2  (2 logits)
//
// with inverted dropout on both hidden ReLU outputs in training. The mean
// of the endpoints is symmetric in u and v; the edge embedding carries the
// direction. CE-FedGNN's cross-client handling (each bank back-propagates
// only through its own endpoint) is an EmbeddingOverride with Keep 0 on
// the remote endpoint's last-layer row.
type edgeHead struct {
	hidden     int
	useEdge    bool
	we         *edgeLinear
	phi1, phi2 *edgeLinear
	drop1      gnn.Dropout
	drop2      gnn.Dropout

	// State of the last forward.
	b       *Batch
	x       *gnn.Tensor
	a1, a2  *gnn.Tensor // pre-activations (owned by we and phi1)
	nodes   int
	half    []float32
	dx, dr1 *gnn.Tensor
	dr2     *gnn.Tensor
	dh, de  *gnn.Tensor
}

func newEdgeHead(hidden, classes int, useEdge bool, dropout float64, rng *rand.Rand) *edgeHead {
	in := hidden
	if useEdge {
		in = 2 * hidden
	}
	return &edgeHead{
		hidden:  hidden,
		useEdge: useEdge,
		we:      newEdgeLinear("head.We", in, hidden, rng),
		phi1:    newEdgeLinear("head.phi1", hidden, hidden, rng),
		phi2:    newEdgeLinear("head.phi2", hidden, classes, rng),
		drop1:   gnn.Dropout{P: dropout},
		drop2:   gnn.Dropout{P: dropout},
	}
}

func (hd *edgeHead) params() []*gnn.Param {
	return append(append(hd.we.params(), hd.phi1.params()...), hd.phi2.params()...)
}

// forward returns the seed logits (NumSeeds×classes) from the last
// layer's node embeddings h (NumNodes[L]×H) and, when the head uses them,
// edge embeddings e (NumSeeds×H).
func (hd *edgeHead) forward(b *Batch, h, e *gnn.Tensor, train bool, rng *rand.Rand) *gnn.Tensor {
	H, s := hd.hidden, b.NumSeeds()
	hd.b, hd.nodes = b, h.Rows
	cols := H
	if hd.useEdge {
		cols = 2 * H
	}
	hd.x = edgeReuse(hd.x, s, cols)
	hd.half = gnn.Grow(&hd.half, s)
	edgeFill(hd.half, 0.5)
	edgeGatherRows(hd.x, 0, h, b.EdgeSrc, hd.half, s)
	for i := range s {
		d, hv := edgeCols(hd.x, i, 0, H), h.Row(int(b.EdgeDst[i]))
		for j, v := range hv {
			d[j] += 0.5 * v
		}
	}
	if hd.useEdge {
		edgeGatherRows(hd.x, H, e, nil, nil, s)
	}
	hd.a1 = hd.we.forward(hd.x)
	r1 := hd.drop1.ForwardReLU(hd.a1, train, rng)
	hd.a2 = hd.phi1.forward(r1)
	r2 := hd.drop2.ForwardReLU(hd.a2, train, rng)
	return hd.phi2.forward(r2)
}

// backward accumulates the head's parameter gradients from dLogits and
// returns the gradients w.r.t. h and e (nil without the edge), owned by
// the head.
func (hd *edgeHead) backward(dLogits *gnn.Tensor) (*gnn.Tensor, *gnn.Tensor) {
	H, b := hd.hidden, hd.b
	s := b.NumSeeds()
	dr2 := hd.phi2.backward(dLogits, true)
	hd.dr2 = edgeReuse(hd.dr2, dr2.Rows, dr2.Cols)
	hd.drop2.BackwardReLU(hd.dr2, dr2, hd.a2)
	dr1 := hd.phi1.backward(hd.dr2, true)
	hd.dr1 = edgeReuse(hd.dr1, dr1.Rows, dr1.Cols)
	hd.drop1.BackwardReLU(hd.dr1, dr1, hd.a1)
	dx := hd.we.backward(hd.dr1, true)
	hd.dh = edgeReuse(hd.dh, hd.nodes, H)
	hd.dh.Zero()
	edgeScatterRows(hd.dh, b.EdgeSrc, hd.half, dx, 0, s)
	edgeScatterRows(hd.dh, b.EdgeDst, hd.half, dx, 0, s)
	if !hd.useEdge {
		return hd.dh, nil
	}
	hd.de = edgeReuse(hd.de, s, H)
	hd.de.Zero()
	edgeScatterRows(hd.de, nil, nil, dx, H, s)
	return hd.dh, hd.de
}
