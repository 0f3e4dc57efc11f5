package lpsfed

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"graphfed/gnn"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 99)) }

// randomData draws a client graph in which every user has between 1 and
// maxDeg training items and, when test is set, up to 2 held-out items.
func randomData(rng *rand.Rand, users, items, maxDeg int, test bool) *Data {
	d := &Data{Users: users, Items: items, Train: make([][]int32, users)}
	if test {
		d.Test = make([][]int32, users)
	}
	for u := range users {
		perm := rng.Perm(items)
		deg := 1 + rng.IntN(maxDeg)
		for _, i := range perm[:deg] {
			d.Train[u] = append(d.Train[u], int32(i))
		}
		slices.Sort(d.Train[u])
		if test && deg+2 <= items {
			for _, i := range perm[deg : deg+rng.IntN(3)] {
				d.Test[u] = append(d.Test[u], int32(i))
			}
			slices.Sort(d.Test[u])
		}
	}
	// Items nobody trained on would be isolated nodes: give each one a user.
	_, deg := d.Degrees()
	for i, g := range deg {
		if g == 0 {
			u := rng.IntN(users)
			if d.Test != nil {
				d.Test[u] = slices.DeleteFunc(d.Test[u], func(x int32) bool { return x == int32(i) })
			}
			d.Train[u] = append(d.Train[u], int32(i))
			slices.Sort(d.Train[u])
		}
	}
	return d
}

// denseEigen returns the phi lowest eigenpairs of the normalized Laplacian
// of d's bipartite graph (DenseLowPass): the test stand-in for Lanczos.
func denseEigen(t testing.TB, d *Data, phi int) (*gnn.Tensor, []float64) {
	t.Helper()
	p, lam, err := DenseLowPass(d.Users, d.Items, d.Train, phi)
	if err != nil {
		t.Fatal(err)
	}
	return p, lam
}

// Finite differences: forward passes are float32 with float64 losses, so
// the tolerances of package gnn's checks apply.
const (
	fdStep = 1e-2
	fdRTol = 2e-2
	fdATol = 1e-3
	fdMax  = 40
)

// checkGrad compares the analytic gradient grad of loss with respect to
// vals with central differences on up to fdMax seeded elements. An
// element whose one-sided differences disagree sits on a kink (min,
// clamp) and is skipped; more than a quarter skipped fails.
func checkGrad(t *testing.T, name string, vals, grad []float32, loss func() float64) {
	t.Helper()
	grad = append([]float32(nil), grad...)
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	if len(idx) > fdMax {
		rng := newRNG(uint64(len(vals)))
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		idx = idx[:fdMax]
	}
	l0 := loss()
	skipped := 0
	for _, i := range idx {
		orig := vals[i]
		vals[i] = orig + fdStep
		lp := loss()
		up := float64(vals[i]) - float64(orig)
		vals[i] = orig - fdStep
		lm := loss()
		down := float64(orig) - float64(vals[i])
		vals[i] = orig
		fwd, bwd := (lp-l0)/up, (l0-lm)/down
		if math.Abs(fwd-bwd) > 0.2*math.Max(math.Abs(fwd), math.Abs(bwd))+10*fdATol {
			skipped++
			continue
		}
		num, ana := (lp-lm)/(up+down), float64(grad[i])
		if d := math.Abs(num - ana); d > fdRTol*math.Max(math.Abs(num), math.Abs(ana))+fdATol {
			t.Errorf("%s[%d]: analytic %.6g, numeric %.6g (diff %.3g)", name, i, ana, num, d)
		}
	}
	if skipped*4 > len(idx) {
		t.Errorf("%s: %d of %d elements at kinks", name, skipped, len(idx))
	}
}

// checkGrad64 is checkGrad for float64 inputs (the losses on scores).
func checkGrad64(t *testing.T, name string, vals, grad []float64, loss func() float64) {
	t.Helper()
	const h = 1e-6
	grad = append([]float64(nil), grad...)
	for i := range vals {
		orig := vals[i]
		vals[i] = orig + h
		lp := loss()
		vals[i] = orig - h
		lm := loss()
		vals[i] = orig
		num := (lp - lm) / (2 * h)
		if d := math.Abs(num - grad[i]); d > 1e-5*math.Max(1, math.Abs(num)) {
			t.Errorf("%s[%d]: analytic %.8g, numeric %.8g", name, i, grad[i], num)
		}
	}
}
