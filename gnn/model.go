package gnn

import (
	"fmt"
	"math/rand/v2"
)

// Model is a node classifier: features and graph in, one row of class
// logits per node out.
type Model interface {
	// Forward returns the logits (N×Classes), owned by the model and
	// valid until the next Forward. With train set, dropout is active and
	// draws from rng (which may be nil otherwise, or when Dropout is 0).
	Forward(in *Input, train bool, rng *rand.Rand) *Tensor
	// Backward back-propagates dLogits (N×Classes, the loss gradient
	// w.r.t. the last Forward's logits) and adds into Param.G.
	Backward(dLogits *Tensor)
	// Params lists the parameters in a fixed order: the model schema.
	Params() []*Param
	// Config returns the configuration the model was built from.
	Config() ModelConfig
}

// ModelConfig describes a two-layer model: sparse features (In) → Hidden
// → Classes, with ReLU after the first layer and inverted dropout with
// probability Dropout on the input features and on the hidden layer
// (Kipf & Welling's arrangement). Weight decay, when a trainer applies it,
// acts on the first layer's weights only, as in Kipf & Welling.
type ModelConfig struct {
	Kind                string // KindGCN or KindSAGE
	In, Hidden, Classes int
	Dropout             float64
}

// Validate reports a configuration that cannot build a model.
func (c ModelConfig) Validate() error {
	if c.Kind != KindGCN && c.Kind != KindSAGE {
		return fmt.Errorf("gnn: model config: unknown kind %q (want %q or %q)", c.Kind, KindGCN, KindSAGE)
	}
	if c.In <= 0 || c.Hidden <= 0 || c.Classes <= 0 {
		return fmt.Errorf("gnn: model config: dimensions in=%d hidden=%d classes=%d must be positive", c.In, c.Hidden, c.Classes)
	}
	if !(c.Dropout >= 0 && c.Dropout < 1) {
		return fmt.Errorf("gnn: model config: dropout %v outside [0, 1)", c.Dropout)
	}
	return nil
}

// NewModel builds the model cfg.Kind names.
func NewModel(cfg ModelConfig, rng *rand.Rand) (Model, error) {
	var (
		n   *Net
		err error
	)
	switch cfg.Kind {
	case KindGCN:
		n, err = NewGCN(cfg, rng)
	case KindSAGE:
		n, err = NewSAGE(cfg, rng)
	default:
		err = cfg.Validate()
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// NewGCN builds a two-layer GCN (layers "conv1", "conv2") with Glorot
// weights drawn from rng.
func NewGCN(cfg ModelConfig, rng *rand.Rand) (*Net, error) {
	cfg.Kind = KindGCN
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return NewNet(cfg,
		NewGCNLayer("conv1", cfg.In, cfg.Hidden, true, rng),
		NewGCNLayer("conv2", cfg.Hidden, cfg.Classes, false, rng))
}

// NewSAGE builds a two-layer GraphSAGE-mean model (layers "sage1",
// "sage2") with Glorot weights drawn from rng.
func NewSAGE(cfg ModelConfig, rng *rand.Rand) (*Net, error) {
	cfg.Kind = KindSAGE
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return NewNet(cfg,
		NewSAGELayer("sage1", cfg.In, cfg.Hidden, true, rng),
		NewSAGELayer("sage2", cfg.Hidden, cfg.Classes, false, rng))
}

// Net is a stack of message-passing layers over one propagation matrix:
// input dropout, then layer 1, and before every further layer ReLU and
// dropout, all with probability cfg.Dropout. It implements Model; NewGCN
// and NewSAGE build the two-layer instances, NewNet any other stack.
type Net struct {
	cfg    ModelConfig
	layers []Layer
	inDrop SparseDropout
	drops  []Dropout // ReLU and dropout before layers[1:]
	pre    []*Tensor // pre-activations feeding drops (owned by the layers)
	grads  []*Tensor // gradient buffers w.r.t. pre
	params []*Param
}

// NewNet stacks layers for inputs of kind cfg.Kind. The first layer must
// take cfg.In features, each layer's output must feed the next, and the
// last must produce cfg.Classes logits; cfg.Hidden is not consulted.
func NewNet(cfg ModelConfig, layers ...Layer) (*Net, error) {
	if len(layers) == 0 {
		return nil, fmt.Errorf("gnn: new net: no layers")
	}
	c := cfg
	c.Hidden = 1 // not consulted
	if err := c.Validate(); err != nil {
		return nil, err
	}
	want := cfg.In
	for i, l := range layers {
		in, out := l.Dims()
		if in != want {
			return nil, fmt.Errorf("gnn: new net: layer %d takes %d features, gets %d", i+1, in, want)
		}
		want = out
	}
	if want != cfg.Classes {
		return nil, fmt.Errorf("gnn: new net: last layer gives %d outputs for %d classes", want, cfg.Classes)
	}
	n := &Net{cfg: cfg, layers: layers, inDrop: SparseDropout{P: cfg.Dropout}}
	n.drops = make([]Dropout, len(layers)-1)
	for i := range n.drops {
		n.drops[i].P = cfg.Dropout
	}
	n.pre = make([]*Tensor, len(layers)-1)
	n.grads = make([]*Tensor, len(layers)-1)
	for _, l := range layers {
		n.params = append(n.params, l.Params()...)
	}
	return n, nil
}

// Layers returns the layers, first to last.
func (n *Net) Layers() []Layer { return n.layers }

// Config returns the model configuration.
func (n *Net) Config() ModelConfig { return n.cfg }

// Params returns every layer's parameters, first layer first.
func (n *Net) Params() []*Param { return n.params }

// Forward returns the logits (N×Classes). It panics when in was prepared
// for another model kind or has the wrong feature dimension.
func (n *Net) Forward(in *Input, train bool, rng *rand.Rand) *Tensor {
	if in.Kind != n.cfg.Kind {
		panic(fmt.Sprintf("gnn: forward: %s model given an input prepared for %q", n.cfg.Kind, in.Kind))
	}
	x := n.inDrop.Forward(in.X, train, rng)
	h := n.layers[0].Forward(in.Prop, SparseFeatures(x))
	for i, l := range n.layers[1:] {
		n.pre[i] = h
		d := n.drops[i].ForwardReLU(h, train, rng)
		h = l.Forward(in.Prop, DenseFeatures(d))
	}
	return h
}

// Backward back-propagates dLogits through every layer.
func (n *Net) Backward(dLogits *Tensor) {
	g := dLogits
	for i := len(n.layers) - 1; i >= 1; i-- {
		g = n.layers[i].Backward(g)
		n.grads[i-1] = Reuse(n.grads[i-1], g.Rows, g.Cols)
		n.drops[i-1].BackwardReLU(n.grads[i-1], g, n.pre[i-1])
		g = n.grads[i-1]
	}
	n.layers[0].Backward(g)
}
