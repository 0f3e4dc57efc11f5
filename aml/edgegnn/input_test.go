package edgegnn

import (
	"math"
	"slices"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/gnn"
)

// TestEdgeSlotsMatchDense checks that the slot form of the edge inputs
// holds exactly the dense features, and that a model reading the slots
// computes the same logits and gradients, bit for bit, as one reading the
// dense features.
func TestEdgeSlotsMatchDense(t *testing.T) {
	c := smallWorld(3)
	g := genWorld(c)
	feat := NewFeaturizer(g)
	edges := make([]int32, g.NumEdges())
	for e := range edges {
		edges[e] = int32(e)
	}
	var s SlotRows
	feat.FillSlots(&s, edges)
	if !slices.Equal(s.Dense().Data, feat.Features(edges).Data) {
		t.Fatal("slots differ from the dense features")
	}
	for i := range s.Rows {
		if !slices.IsSorted(s.Idx[i*s.K : (i+1)*s.K]) {
			t.Fatalf("row %d: slot columns %v not ascending", i, s.Idx[i*s.K:(i+1)*s.K])
		}
	}

	st, err := NewStage(g, nil, []int{4, 4}, feat)
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	labels, err := st.Batch(&b, edges[:64], nil, newRNG(2))
	if err != nil {
		t.Fatal(err)
	}
	if b.EdgeX != nil || b.EdgeSlots == nil {
		t.Fatal("SetInputs did not fill the slots only")
	}
	run := func(b *Batch, noFold bool) (*gnn.Tensor, []float32) {
		cfg := DefaultConfig(KindGIN)
		cfg.Hidden = 12
		m, err := NewModel(cfg, newRNG(5))
		if err != nil {
			t.Fatal(err)
		}
		m.noFold = noFold
		logits := m.Forward(b, nil, true, newRNG(6)).Clone()
		d := gnn.New(logits.Rows, logits.Cols)
		gnn.SoftmaxCrossEntropy(logits, labels, nil, []float32{1, 4}, d)
		m.Backward(d)
		var grads []float32
		for _, p := range m.Params() {
			grads = append(grads, p.G.Data...)
		}
		return logits, grads
	}
	ls, gs := run(&b, true)
	dense := b
	dense.EdgeX, dense.EdgeSlots = b.EdgeSlots.Dense(), nil
	ld, gd := run(&dense, false)
	if !slices.Equal(ls.Data, ld.Data) || !slices.Equal(gs, gd) {
		t.Fatal("slot and dense inputs give different logits or gradients")
	}
	// Folded (the first layer sums the slots, fixed ones as dense rows):
	// the same to float32 rounding.
	lf, gf := run(&b, false)
	foldClose(t, "logits", lf.Data, ld.Data)
	foldClose(t, "gradients", gf, gd)
}

// TestEdgePhases checks the tabulated time phases against math.Sincos of
// the whole angle: equal after rounding to float32, or one unit apart.
func TestEdgePhases(t *testing.T) {
	p := newEdgePhases()
	off := 0
	for sec := range int64(86400) {
		s, c := math.Sincos(2 * math.Pi * float64(sec) / 86400)
		hs, hc := p.hour(sec)
		for _, v := range [][2]float32{{hs, float32(s)}, {hc, float32(c)}} {
			if v[0] != v[1] {
				off++
				if math.Nextafter32(v[1], v[0]) != v[0] {
					t.Fatalf("second %d: phase %v, want %v", sec, v[0], v[1])
				}
			}
		}
	}
	t.Logf("%d of %d phases one float32 unit off math.Sincos", off, 2*86400)
	var s SlotRows
	g := featureGraph()
	NewFeaturizer(g).FillSlots(&s, []int32{2, 0})
	if s.Rows != 2 || s.Cols != EdgeFeatureDim || s.K != edgeInputSlots || s.Idx[2] != EdgeColPayCurrency+int32(amlworld.Bitcoin) {
		t.Fatalf("slots %dx%d, %d per row, columns %v", s.Rows, s.Cols, s.K, s.Idx[:s.K])
	}
}
