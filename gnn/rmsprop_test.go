package gnn

import (
	"math"
	"testing"
)

// TestRMSPropMatchesFormula replays PyTorch's RMSprop arithmetic in
// float64 for a few steps of changing gradients.
func TestRMSPropMatchesFormula(t *testing.T) {
	p := NewParam("w", 1, 3, false)
	copy(p.W.Data, []float32{1, -2, 0.5})
	opt := NewRMSProp([]*Param{p}, 0.01)
	w := []float64{1, -2, 0.5}
	v := make([]float64, 3)
	grads := [][]float64{{0.1, -0.3, 2}, {0.2, 0.1, -1}, {-0.5, 0, 0.25}}
	for _, g := range grads {
		for j := range g {
			p.G.Data[j] = float32(g[j])
			v[j] = 0.99*v[j] + 0.01*g[j]*g[j]
			w[j] -= 0.01 * g[j] / (math.Sqrt(v[j]) + 1e-8)
		}
		opt.Step()
	}
	for j := range w {
		if d := math.Abs(float64(p.W.Data[j]) - w[j]); d > 1e-5 {
			t.Fatalf("w[%d] = %v, want %v", j, p.W.Data[j], w[j])
		}
	}
	opt.Reset()
	for _, vi := range opt.v[0] {
		if vi != 0 {
			t.Fatal("reset left state")
		}
	}
}

// TestRMSPropMinimizesQuadratic checks convergence on ½‖W - c‖².
func TestRMSPropMinimizesQuadratic(t *testing.T) {
	p := NewParam("w", 2, 2, false)
	c := []float32{1, -1, 0.5, 2}
	opt := NewRMSProp([]*Param{p}, 0.01)
	for range 2000 {
		for j := range c {
			p.G.Data[j] = p.W.Data[j] - c[j]
		}
		opt.Step()
	}
	for j := range c {
		if math.Abs(float64(p.W.Data[j]-c[j])) > 0.05 {
			t.Fatalf("w = %v, want %v", p.W.Data, c)
		}
	}
}
