package gnn

import (
	"math"
	"slices"
	"testing"
)

func TestDropout(t *testing.T) {
	for _, p := range []float64{0, 0.1, 0.5, 0.9} {
		x := New(200, 50)
		for i := range x.Data {
			x.Data[i] = 1
		}
		d := Dropout{P: p}
		out := d.Forward(x, true, newRNG(1))
		kept, sum := 0, 0.0
		for _, v := range out.Data {
			if v != 0 {
				kept++
				if math.Abs(float64(v)-1/(1-p)) > 1e-6 {
					t.Fatalf("p=%v: survivor scaled to %v", p, v)
				}
			}
			sum += float64(v)
		}
		n := float64(len(x.Data))
		if frac := float64(kept) / n; math.Abs(frac-(1-p)) > 4*math.Sqrt(p*(1-p)/n)+1e-12 {
			t.Errorf("p=%v: kept fraction %v", p, frac)
		}
		if mean := sum / n; math.Abs(mean-1) > 0.05 {
			t.Errorf("p=%v: mean %v, want about 1 (inverted dropout)", p, mean)
		}
		if ev := d.Forward(x, false, nil); ev != x {
			t.Errorf("p=%v: evaluation is not the identity", p)
		}
		// Same seed, same mask.
		d2 := Dropout{P: p}
		if !slices.Equal(d2.Forward(x, true, newRNG(1)).Data, d.Forward(x, true, newRNG(1)).Data) {
			t.Errorf("p=%v: mask not determined by the seed", p)
		}
	}
	for _, bad := range []float64{-0.1, 1, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("P=%v accepted", bad)
				}
			}()
			(&Dropout{P: bad}).Forward(New(1, 1), true, newRNG(1))
		}()
	}
}

func TestSparseDropout(t *testing.T) {
	rng := newRNG(2)
	x, err := newSparseNoT(randCSR(rng, 300, 80, 0.2, false))
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(x.M.Val)
	d := SparseDropout{P: 0.5}
	if d.Forward(x, false, nil) != x {
		t.Errorf("evaluation is not the identity")
	}
	for range 2 { // the second pass reuses the buffers
		out := d.Forward(x, true, newRNG(3))
		if err := out.M.Validate(); err != nil {
			t.Fatal(err)
		}
		kept := out.M.NNZ()
		if frac := float64(kept) / float64(x.M.NNZ()); math.Abs(frac-0.5) > 0.05 {
			t.Errorf("kept fraction %v", frac)
		}
		// Every survivor is an input entry scaled by 2.
		xd, od := dense(x.M), dense(out.M)
		for i := range od {
			for j, v := range od[i] {
				if v != 0 && math.Abs(v-2*xd[i][j]) > 1e-6 {
					t.Fatalf("(%d,%d) = %v from %v", i, j, v, xd[i][j])
				}
			}
		}
	}
	if !slices.Equal(before, x.M.Val) || x.M.Validate() != nil {
		t.Errorf("input modified")
	}
	// A matrix without values counts as all ones.
	ones := &Sparse{M: randCSR(rng, 50, 20, 0.3, true)}
	out := d.Forward(ones, true, newRNG(4))
	for _, v := range out.M.Val {
		if v != 2 {
			t.Fatalf("survivor of a binary input is %v, want 2", v)
		}
	}
}
