package node

import "graphfed/gnn"

// step is one full-batch local step: Adam on the loss (plus FedProx's
// proximal gradient μ·(w − w_g)), then weight decay decoupled from the
// gradient as AdamW applies it, W ← W − lr·wd·W. Kipf's L2 term inside
// Adam's gradient breaks federated averaging on sparse features: a client
// that never sees a feature has no data gradient on its weights, so Adam
// normalises the decay term alone and shrinks them by about lr every
// step. Averaged over clients that each see a few of the features, the
// first layer collapses (Cora, 10 METIS clients, one local step a round:
// the global model fell to a constant class, test accuracy 0.30).
func (l *Learner) step() float64 {
	params := l.model.Params()
	gnn.ZeroGrad(params)
	logits := l.model.Forward(l.in, true, l.rng)
	l.dLogits = gnn.Reuse(l.dLogits, logits.Rows, logits.Cols)
	loss := gnn.SoftmaxCrossEntropy(logits, l.data.Labels, l.train, nil, l.dLogits)
	l.model.Backward(l.dLogits)
	if l.cfg.Prox > 0 && len(l.global) > 0 {
		addProxGrad(params, l.global, l.cfg.Prox)
	}
	l.trainer.Opt.Step()
	decoupledDecay(params, l.cfg.LR*l.cfg.WeightDecay)
	return loss
}

// decoupledDecay shrinks the decaying parameters by the factor 1 − rate.
func decoupledDecay(params []*gnn.Param, rate float64) {
	if rate == 0 {
		return
	}
	f := float32(1 - rate)
	for _, p := range params {
		if p.Decay {
			for i := range p.W.Data {
				p.W.Data[i] *= f
			}
		}
	}
}

// addProxGrad adds the gradient of (μ/2)·‖w − anchor‖² to params' G;
// anchor is the flat parameter vector (gnn.Flatten order).
func addProxGrad(params []*gnn.Param, anchor []float32, mu float64) {
	off := 0
	m := float32(mu)
	for _, p := range params {
		a := anchor[off : off+len(p.W.Data)]
		for i, w := range p.W.Data {
			p.G.Data[i] += m * (w - a[i])
		}
		off += len(p.W.Data)
	}
}

// headParams counts the parameters of m's last layer: FedPer's personal
// head. A model that does not expose its layers has none.
func headParams(m gnn.Model) int {
	net, ok := m.(interface{ Layers() []gnn.Layer })
	if !ok || len(net.Layers()) == 0 {
		return 0
	}
	layers := net.Layers()
	return gnn.NumParams(layers[len(layers)-1].Params())
}
