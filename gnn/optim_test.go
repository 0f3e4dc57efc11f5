package gnn

import (
	"math"
	"testing"
)

// TestAdamMatchesReference runs Adam against the update written out in
// float64 (PyTorch's formulation) for a few steps with changing gradients.
func TestAdamMatchesReference(t *testing.T) {
	p := NewParam("w", 1, 3, false)
	copy(p.W.Data, []float32{0.5, -1, 2})
	opt := NewAdam([]*Param{p}, 0.1)
	w := []float64{0.5, -1, 2}
	m, v := make([]float64, 3), make([]float64, 3)
	grads := [][]float64{{1, -2, 0.5}, {0.3, 0, -4}, {-1, 1, 1e-3}, {0, 0, 0}}
	for step, g := range grads {
		for j := range g {
			p.G.Data[j] = float32(g[j])
		}
		opt.Step()
		tt := float64(step + 1)
		for j := range w {
			m[j] = 0.9*m[j] + 0.1*g[j]
			v[j] = 0.999*v[j] + 0.001*g[j]*g[j]
			bc1, bc2 := 1-math.Pow(0.9, tt), 1-math.Pow(0.999, tt)
			w[j] -= 0.1 / bc1 * m[j] / (math.Sqrt(v[j])/math.Sqrt(bc2) + 1e-8)
		}
		for j := range w {
			if math.Abs(float64(p.W.Data[j])-w[j]) > 1e-5 {
				t.Fatalf("step %d: w[%d] = %v, want %v", step+1, j, p.W.Data[j], w[j])
			}
		}
	}
	// The first step of Adam moves every coordinate by about lr.
	opt.Reset()
	q := NewParam("q", 1, 1, false)
	a := NewAdam([]*Param{q}, 0.01)
	q.G.Data[0] = 123
	a.Step()
	if math.Abs(float64(q.W.Data[0])+0.01) > 1e-6 {
		t.Errorf("first step moved to %v, want -0.01", q.W.Data[0])
	}
}

func TestSGD(t *testing.T) {
	for _, tc := range []struct {
		name     string
		momentum float64
		want     []float64 // w after steps with gradients 1, 2, 3
	}{
		{"plain", 0, []float64{1 - 0.1*1, 1 - 0.1*3, 1 - 0.1*6}},
		// b1 = 1, b2 = 0.5·1+2 = 2.5, b3 = 0.5·2.5+3 = 4.25.
		{"momentum", 0.5, []float64{1 - 0.1, 1 - 0.1 - 0.25, 1 - 0.1 - 0.25 - 0.425}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewParam("w", 1, 1, false)
			p.W.Data[0] = 1
			opt := NewSGD([]*Param{p}, 0.1, tc.momentum)
			for i, want := range tc.want {
				p.G.Data[0] = float32(i + 1)
				opt.Step()
				if math.Abs(float64(p.W.Data[0])-want) > 1e-6 {
					t.Fatalf("step %d: %v, want %v", i+1, p.W.Data[0], want)
				}
			}
			opt.Reset()
			p.W.Data[0] = 0
			p.G.Data[0] = 1
			opt.Step()
			if math.Abs(float64(p.W.Data[0])+0.1) > 1e-6 {
				t.Errorf("after reset: %v, want -0.1", p.W.Data[0])
			}
		})
	}
}

// TestOptimizersMinimise checks that each optimizer drives a convex
// quadratic ½‖W - target‖² to its minimum.
func TestOptimizersMinimise(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func([]*Param) Optimizer
	}{
		{"adam", func(p []*Param) Optimizer { return NewAdam(p, 0.05) }},
		{"sgd", func(p []*Param) Optimizer { return NewSGD(p, 0.1, 0) }},
		{"sgd-momentum", func(p []*Param) Optimizer { return NewSGD(p, 0.05, 0.9) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := newRNG(40)
			p := NewParam("w", 4, 3, true)
			target := randTensor(rng, 4, 3)
			opt := tc.make([]*Param{p})
			for range 1000 {
				for i := range p.G.Data {
					p.G.Data[i] = p.W.Data[i] - target.Data[i]
				}
				opt.Step()
			}
			for i := range p.W.Data {
				if math.Abs(float64(p.W.Data[i]-target.Data[i])) > 1e-3 {
					t.Fatalf("w[%d] = %v, want %v", i, p.W.Data[i], target.Data[i])
				}
			}
		})
	}
}

func TestApplyWeightDecay(t *testing.T) {
	on, off := NewParam("on", 1, 2, true), NewParam("off", 1, 2, false)
	copy(on.W.Data, []float32{1, -2})
	copy(off.W.Data, []float32{1, -2})
	ApplyWeightDecay([]*Param{on, off}, 0.5)
	if on.G.Data[0] != 0.5 || on.G.Data[1] != -1 || !allZero(off.G.Data) {
		t.Errorf("decay gradients %v and %v", on.G.Data, off.G.Data)
	}
}
