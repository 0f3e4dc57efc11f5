package fedgsp

import (
	"fmt"
	"math"
	"testing"

	"graphfed/gnn"
)

// TestGradientsFiniteDifference checks every entry of every parameter's
// gradient — each c_k, each Dense weight and bias — against central
// differences of the training loss. The cases cover a square (residual)
// hidden layer, a first layer whose input is as wide as the hidden layer
// (residual on the first layer), more layers, and dropout on: the masks
// are then a function of the RNG seed, which each evaluation resets.
func TestGradientsFiniteDifference(t *testing.T) {
	cases := []struct {
		name                string
		dim, hidden, layers int
		orders, classes     int
		dropC, dropM        float64
		noBias              bool
	}{
		{"two layers", 5, 4, 2, 2, 3, 0, 0, false},
		{"residual hidden", 5, 6, 3, 3, 3, 0, 0, false},
		{"residual first layer", 4, 4, 3, 1, 2, 0, 0, false},
		{"four layers", 3, 5, 4, 2, 4, 0, 0, false},
		{"dropout on", 5, 6, 3, 2, 3, 0.3, 0.25, false},
		{"bias-free", 5, 6, 3, 2, 3, 0.3, 0.25, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := newRNG(11)
			const rows = 9
			inputs := make([]*gnn.Tensor, c.orders+1)
			for k := range inputs {
				inputs[k] = gnn.New(rows, c.dim)
				for i := range inputs[k].Data {
					inputs[k].Data[i] = float32(rng.NormFloat64())
				}
			}
			labels := make([]int32, rows)
			for i := range labels {
				labels[i] = int32(rng.IntN(c.classes))
			}
			m := newModel(c.orders, c.dim, c.hidden, c.layers, c.classes, c.dropC, c.dropM, !c.noBias)
			m.init(3)
			// Spread the coefficients so that their gradients differ.
			for _, p := range m.coef {
				for j := range p.W.Data {
					p.W.Data[j] += float32(0.3 * rng.NormFloat64())
				}
			}
			for _, dl := range m.dense {
				if dl.b == nil {
					continue
				}
				for j := range dl.b.W.Data {
					dl.b.W.Data[j] = float32(0.1 * rng.NormFloat64())
				}
			}
			const seed = 99
			ws := m.newWorkspace()
			loss := func() float64 {
				logits := m.forward(ws, inputs, true, newRNG(seed))
				return gnn.SoftmaxCrossEntropy(logits, labels, nil, nil, nil)
			}
			logits := m.forward(ws, inputs, true, newRNG(seed))
			dl := gnn.New(logits.Rows, logits.Cols)
			gnn.SoftmaxCrossEntropy(logits, labels, nil, nil, dl)
			m.backward(ws, dl)
			at := func(p *gnn.Param, i int, v float32) float64 {
				orig := p.W.Data[i]
				p.W.Data[i] = v
				l := loss()
				p.W.Data[i] = orig
				return l
			}
			match := func(a, b float64) bool { return math.Abs(a-b) <= 2e-3+2e-2*math.Abs(b) }
			checked, kinks := 0, 0
			for _, p := range m.params {
				for i := range p.W.Data {
					orig := p.W.Data[i]
					const h = 1e-3
					num := (at(p, i, orig+h) - at(p, i, orig-h)) / (2 * h)
					got := float64(p.G.Data[i])
					checked++
					if match(got, num) {
						continue
					}
					// A ReLU pre-activation within h of zero (a kink) makes the
					// central difference average two slopes; the analytic
					// gradient is then one of the one-sided derivatives.
					const hs = 2e-4
					f0 := at(p, i, orig)
					right := (at(p, i, orig+hs) - f0) / hs
					left := (f0 - at(p, i, orig-hs)) / hs
					if match(got, left) || match(got, right) {
						kinks++
						continue
					}
					t.Errorf("%s[%d]: analytic %.6f, numeric %.6f (left %.6f, right %.6f)", p.Name, i, got, num, left, right)
				}
			}
			if kinks > 2+checked/30 {
				t.Errorf("%d of %d entries sit at a ReLU kink: too many for the check to mean much", kinks, checked)
			}
			if want := gnn.NumParams(m.params); checked != want {
				t.Fatalf("checked %d of %d entries", checked, want)
			}
			if testing.Verbose() {
				fmt.Printf("%s: %d gradient entries checked, %d at a kink\n", c.name, checked, kinks)
			}
		})
	}
}
