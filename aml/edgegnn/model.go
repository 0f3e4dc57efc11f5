package edgegnn

import (
	"fmt"
	"math/rand/v2"

	"graphfed/gnn"
)

// Config describes an edge classifier: linear encoders of the node
// and edge inputs to Hidden columns, Layers message-passing layers of
// aggregation Kind with edge updates, and the edge head.
type Config struct {
	Kind    string // KindSAGE, KindGIN or KindGCN
	NodeIn  int    // node input features (NodeFeatureDim)
	EdgeIn  int    // edge input features (EdgeFeatureDim)
	Hidden  int    // embedding width H
	Layers  int    // message-passing layers L
	Classes int    // logits per edge (2: licit, laundering)
	// HeadEdge concatenates each seed's final edge embedding to its
	// endpoint mean in the head; without it the head is exactly
	// φ(W_e·(h_u + h_v)/2) and the last layer has no edge update.
	HeadEdge bool
	Dropout  float64 // inverted dropout on the head's hidden units

	// Multi-GNN's adaptations for directed multigraphs (Egressy et al.
	// 2024), each its own switch for ablations. DefaultConfig turns
	// on ReverseMP and EdgeUpdates only (the federated schema).
	//
	// ReverseMP aggregates incoming and outgoing messages separately,
	// with their own weights; without it messages follow the edges only
	// (each node hears its in-neighbours), as in a plain directed MPNN.
	ReverseMP bool
	// EdgeUpdates updates edge embeddings in every layer from their
	// endpoints (edgeUpdate); without it every layer and the head read
	// the encoded edge inputs.
	EdgeUpdates bool
	// Ports adds each edge's in-port and out-port numbers (EdgeOrd
	// columns; the batch must carry them: Featurizer.EnableOrder) to
	// the edge encoder, through its own weights "enc.port".
	Ports bool
	// TimeDeltas adds the time since the previous transaction into the
	// destination and out of the source (EdgeOrd columns), through
	// "enc.tdelta".
	TimeDeltas bool
	// EgoIDs marks the seed edges' endpoints (the first NumNodes[L]
	// rows of a batch) with a learned offset "enc.ego" on their encoded
	// input: the same as a 0/1 input column.
	EgoIDs bool
}

// DefaultConfig is the AML setup: 2 layers of 64 units over the
// NodeFeatures and EdgeFeatures inputs, 2 classes, edge embedding in the
// head, no dropout, reverse message passing and edge updates.
func DefaultConfig(kind string) Config {
	return Config{Kind: kind, NodeIn: NodeFeatureDim, EdgeIn: EdgeFeatureDim, Hidden: 64, Layers: 2, Classes: 2, HeadEdge: true,
		ReverseMP: true, EdgeUpdates: true}
}

// Validate reports a configuration that cannot build a model.
func (c Config) Validate() error {
	switch c.Kind {
	case gnn.KindSAGE, KindGIN, gnn.KindGCN:
	default:
		return fmt.Errorf("gnn: edge config: unknown kind %q (want %q, %q or %q)", c.Kind, gnn.KindSAGE, KindGIN, gnn.KindGCN)
	}
	if c.NodeIn <= 0 || c.EdgeIn <= 0 || c.Hidden <= 0 || c.Layers <= 0 || c.Classes <= 0 {
		return fmt.Errorf("gnn: edge config: node in=%d edge in=%d hidden=%d layers=%d classes=%d must be positive",
			c.NodeIn, c.EdgeIn, c.Hidden, c.Layers, c.Classes)
	}
	if !(c.Dropout >= 0 && c.Dropout < 1) {
		return fmt.Errorf("gnn: edge config: dropout %v outside [0, 1)", c.Dropout)
	}
	return nil
}

// Model classifies the seed edges of a Batch. Its parameters, in
// order (the model schema): "enc.node", "enc.edge" (W, b each), then
// "enc.port.W", "enc.tdelta.W", "enc.ego.b" when enabled, then per layer l
// "l<l>.node" (sage, gcn) or "l<l>.msg", "l<l>.eps", "l<l>.mlp1",
// "l<l>.mlp2" (gin), and "l<l>.edge" (edge update), then "head.We",
// "head.phi1", "head.phi2". The default configuration's schema is the one
// from before the Multi-GNN switches existed. Like the other models it owns the tensors it
// returns until its next Forward and is not safe for concurrent use.
type Model struct {
	cfg     Config
	nodeEnc *edgeLinear
	edgeEnc *edgeLinear
	port    *edgeAux   // Ports: EdgeOrd in/out port columns
	tdelta  *edgeAux   // TimeDeltas: EdgeOrd time-delta columns
	ego     *gnn.Param // EgoIDs: 1×H offset of the seed endpoints
	layers  []*edgeLayer
	head    *edgeHead
	params  []*gnn.Param

	// State of the last Forward.
	b        *Batch
	ovs      []EmbeddingOverride
	h0, e0   *gnn.Tensor
	dh0, de0 *gnn.Tensor // gradients w.r.t. h0 and e0 of the last Backward
	deAcc    *gnn.Tensor // without edge updates: e0's gradient, summed over readers
	fold     inputFold   // the first layer's raw-input sums (fold.go)
	slots1   SlotRows    // with a fold: the first NumEdges[1] rows of the batch's edge inputs
	noFold   bool        // tests: always encode every row and gather encoded messages
}

// NewModel builds the model cfg describes with Glorot weights drawn
// from rng.
func NewModel(cfg Config, rng *rand.Rand) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model{
		cfg:     cfg,
		nodeEnc: newEdgeLinear("enc.node", cfg.NodeIn, cfg.Hidden, rng),
		edgeEnc: newEdgeLinear("enc.edge", cfg.EdgeIn, cfg.Hidden, rng),
	}
	m.edgeEnc.sparseIn = cfg.EdgeIn <= gnn.MaxCompact
	m.params = append(m.nodeEnc.params(), m.edgeEnc.params()...)
	if cfg.Ports {
		m.port = newEdgeAux("enc.port", EdgeOrdInPort, 2, cfg.Hidden, rng)
		m.params = append(m.params, m.port.W)
	}
	if cfg.TimeDeltas {
		m.tdelta = newEdgeAux("enc.tdelta", EdgeOrdInDelta, 2, cfg.Hidden, rng)
		m.params = append(m.params, m.tdelta.W)
	}
	if cfg.EgoIDs {
		m.ego = gnn.NewParam("enc.ego.b", 1, cfg.Hidden, false)
		m.params = append(m.params, m.ego)
	}
	for l := 1; l <= cfg.Layers; l++ {
		update := cfg.EdgeUpdates && (l < cfg.Layers || cfg.HeadEdge)
		layer, err := newEdgeLayer(fmt.Sprintf("l%d", l), cfg.Kind, cfg.Hidden, update, cfg.ReverseMP, rng)
		if err != nil {
			return nil, err
		}
		m.layers = append(m.layers, layer)
		m.params = append(m.params, layer.params()...)
	}
	m.head = newEdgeHead(cfg.Hidden, cfg.Classes, cfg.HeadEdge, cfg.Dropout, rng)
	m.params = append(m.params, m.head.params()...)
	return m, nil
}

// Config returns the configuration the model was built from.
func (m *Model) Config() Config { return m.cfg }

// Params lists the parameters in schema order.
func (m *Model) Params() []*gnn.Param { return m.params }

// CheckBatch reports a batch the model cannot run: a different layer
// count or input shapes.
func (m *Model) CheckBatch(b *Batch) error {
	const op = "gnn: edge model"
	if b.Layers() != m.cfg.Layers || len(b.NumNodes) != m.cfg.Layers+1 || len(b.NumEdges) != m.cfg.Layers+1 {
		return fmt.Errorf("%s: batch of %d layers for a %d-layer model", op, b.Layers(), m.cfg.Layers)
	}
	if b.NodeX == nil || b.NodeX.Rows != b.NumNodes[0] || b.NodeX.Cols != m.cfg.NodeIn {
		return fmt.Errorf("%s: node inputs %v for %d nodes of %d features", op, b.NodeX, b.NumNodes[0], m.cfg.NodeIn)
	}
	if s := b.EdgeSlots; s != nil {
		if s.Rows != b.NumEdges[0] || s.Cols != m.cfg.EdgeIn || s.K > gnn.MaxCompact || len(s.Idx) != s.Rows*s.K || len(s.Val) != len(s.Idx) {
			return fmt.Errorf("%s: edge inputs %dx%d in %d slots for %d edges of %d features",
				op, s.Rows, s.Cols, s.K, b.NumEdges[0], m.cfg.EdgeIn)
		}
		if !s.filled { // FillSlots' columns are in range by construction
			for _, c := range s.Idx {
				if c < 0 || int(c) >= s.Cols {
					return fmt.Errorf("%s: edge input column %d outside [0,%d)", op, c, s.Cols)
				}
			}
		}
	} else if b.EdgeX == nil || b.EdgeX.Rows != b.NumEdges[0] || b.EdgeX.Cols != m.cfg.EdgeIn {
		return fmt.Errorf("%s: edge inputs %v for %d edges of %d features", op, b.EdgeX, b.NumEdges[0], m.cfg.EdgeIn)
	}
	if (m.cfg.Ports || m.cfg.TimeDeltas) && (b.EdgeOrd == nil || b.EdgeOrd.Rows != b.NumEdges[0] || b.EdgeOrd.Cols != EdgeOrdDim) {
		return fmt.Errorf("%s: ports or time deltas need %d×%d edge order inputs, have %v (EdgeFeaturizer.EnableOrder)",
			op, b.NumEdges[0], EdgeOrdDim, b.EdgeOrd)
	}
	return nil
}

// CheckOverrides reports an override that does not fit batch b: a layer
// outside [0, L], a row outside that layer's nodes, values of the wrong
// shape or not finite, Keep outside [0, 1].
func (m *Model) CheckOverrides(b *Batch, ovs []EmbeddingOverride) error {
	for i := range ovs {
		if err := ovs[i].check(b, m.cfg.Hidden); err != nil {
			return fmt.Errorf("gnn: edge model: override %d: %w", i, err)
		}
	}
	return nil
}

// Forward returns the logits of b's seed edges (NumSeeds×Classes), with
// the node embeddings of every layer overridden as ovs says (nil for
// none; see EmbeddingOverride). ovs and b must stay unchanged until
// Backward. With train set, head dropout is active and draws from rng
// (which may be nil otherwise or when Dropout is 0). It panics when b or
// ovs do not fit the model (CheckBatch and CheckOverrides say why).
func (m *Model) Forward(b *Batch, ovs []EmbeddingOverride, train bool, rng *rand.Rand) *gnn.Tensor {
	if err := m.CheckBatch(b); err != nil {
		panic(err.Error())
	}
	if err := m.CheckOverrides(b, ovs); err != nil {
		panic(err.Error())
	}
	m.b, m.ovs = b, ovs
	if m.canFold(b, ovs) {
		return m.forwardFolded(b, ovs, train, rng)
	}
	m.layers[0].fold = nil
	m.h0 = m.nodeEnc.forward(b.NodeX)
	if m.ego != nil {
		for r := range b.NumNodes[len(b.NumNodes)-1] {
			gnn.AddInto(m.h0.Row(r), m.ego.W.Data)
		}
	}
	applyOverrides(m.h0, ovs, 0, false)
	if b.EdgeSlots != nil {
		m.e0 = m.edgeEnc.forwardSlots(b.EdgeSlots)
	} else {
		m.e0 = m.edgeEnc.forward(b.EdgeX)
	}
	if m.port != nil {
		m.port.forward(m.e0, b.EdgeOrd)
	}
	if m.tdelta != nil {
		m.tdelta.forward(m.e0, b.EdgeOrd)
	}
	return m.forwardLayers(b, ovs, train, rng)
}

// canFold reports whether the first layer may aggregate raw inputs
// (inputFold): h0 and e0 are the encoders' outputs unchanged, and the edge
// inputs are in slots.
func (m *Model) canFold(b *Batch, ovs []EmbeddingOverride) bool {
	if m.noFold || b.EdgeSlots == nil || m.ego != nil || m.port != nil || m.tdelta != nil {
		return false
	}
	for i := range ovs {
		if ovs[i].Layer == 0 {
			return false
		}
	}
	return true
}

// forwardFolded encodes only the first layer's targets and the edges its
// edge update reads (the first NumNodes[1] and NumEdges[1] rows) and lets
// the first layer sum the raw inputs of its messages.
func (m *Model) forwardFolded(b *Batch, ovs []EmbeddingOverride, train bool, rng *rand.Rand) *gnn.Tensor {
	n1, e1 := b.NumNodes[1], b.NumEdges[1]
	m.h0 = m.nodeEnc.forward(b.NodeX.Slice(0, n1))
	s := b.EdgeSlots
	if e1 > s.written() {
		s.Complete()
	}
	m.slots1.Rows, m.slots1.Cols, m.slots1.K, m.slots1.filled = e1, s.Cols, s.K, s.filled
	m.slots1.Idx, m.slots1.Val = s.Idx[:e1*s.K], s.Val[:e1*s.K]
	m.e0 = m.edgeEnc.forwardSlots(&m.slots1)
	m.fold.nodeEnc, m.fold.edgeEnc, m.fold.nodeX, m.fold.slots = m.nodeEnc, m.edgeEnc, b.NodeX, s
	m.layers[0].fold = &m.fold
	return m.forwardLayers(b, ovs, train, rng)
}

// forwardLayers runs the layers and the head on m.h0 and m.e0.
func (m *Model) forwardLayers(b *Batch, ovs []EmbeddingOverride, train bool, rng *rand.Rand) *gnn.Tensor {
	h, e := m.h0, m.e0
	for i, l := range m.layers {
		var next *gnn.Tensor
		h, next = l.forward(b, i+1, h, e, ovs)
		if m.cfg.EdgeUpdates {
			e = next
		} else {
			e = m.e0.Slice(0, b.NumEdges[i+1])
		}
	}
	return m.head.forward(b, h, e, train, rng)
}

// Backward back-propagates dLogits (the loss gradient w.r.t. the last
// Forward's logits) and adds into Param.G. Rows overridden with Keep 0
// pass no gradient on; others pass Keep times theirs.
func (m *Model) Backward(dLogits *gnn.Tensor) {
	if m.b == nil {
		panic("gnn: edge model backward: no forward")
	}
	if want := m.b.NumSeeds(); dLogits.Rows != want || dLogits.Cols != m.cfg.Classes {
		gnn.ShapePanic("edge model backward", "gradient %v for %d seeds and %d classes", dLogits, want, m.cfg.Classes)
	}
	dh, de := m.head.backward(dLogits)
	if m.cfg.EdgeUpdates {
		for i := len(m.layers) - 1; i >= 0; i-- {
			dh, de = m.layers[i].backward(dh, de)
		}
	} else {
		// Every layer and the head read (a prefix of) e0: sum their
		// gradients.
		m.deAcc = edgeReuse(m.deAcc, m.e0.Rows, m.cfg.Hidden)
		m.deAcc.Zero()
		if de != nil {
			acc := m.deAcc.Slice(0, de.Rows)
			gnn.Add(acc, acc, de)
		}
		for i := len(m.layers) - 1; i >= 0; i-- {
			dh, de = m.layers[i].backward(dh, nil)
			acc := m.deAcc.Slice(0, de.Rows)
			gnn.Add(acc, acc, de)
		}
		de = m.deAcc
	}
	scaleOverrideGrads(dh, m.ovs, 0, false)
	m.dh0, m.de0 = dh, de
	if m.ego != nil {
		for r := range m.b.NumNodes[len(m.b.NumNodes)-1] {
			gnn.AddInto(m.ego.G.Data, dh.Row(r))
		}
	}
	if m.port != nil {
		m.port.backward(de)
	}
	if m.tdelta != nil {
		m.tdelta.backward(de)
	}
	m.nodeEnc.backward(dh, false)
	m.edgeEnc.backward(de, false)
}

// NodeEmbeddings returns layer l's node embeddings h^l of the last Forward
// (NumNodes[l]×Hidden, after overrides): l = 0 is the encoded input, l = L
// what the head reads. When the first layer folded its inputs (fold.go),
// l = 0 holds the first NumNodes[1] rows only: the others were never
// encoded. Owned by the model.
func (m *Model) NodeEmbeddings(l int) *gnn.Tensor {
	if l == 0 {
		return m.h0
	}
	return m.layers[l-1].h
}

// PreActivations returns layer l's Z^l of the last Forward (NumNodes[l]×
// Hidden, after Pre overrides), with h^l = ReLU(Z^l); for l = 0 the
// encoded input. Owned by the model.
func (m *Model) PreActivations(l int) *gnn.Tensor {
	if l == 0 {
		return m.h0
	}
	return m.layers[l-1].z
}

// EdgeEmbeddings returns the edge embeddings after layer l of the last
// Forward (NumEdges[l]×Hidden; l = 0 the encoded edge features, the first
// NumEdges[1] rows only when the first layer folded its inputs), or nil
// for the last layer when the head does not use them. Owned by the model.
func (m *Model) EdgeEmbeddings(l int) *gnn.Tensor {
	if l == 0 {
		return m.e0
	}
	return m.layers[l-1].e
}
