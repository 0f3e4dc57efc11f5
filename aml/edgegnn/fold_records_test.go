package edgegnn

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"graphfed/gnn"
)

// TestLazySlotsComplete checks that SetInputs writes the slots of the
// first NumEdges[1] rows and that Complete writes the rest as FillSlots
// writes every row.
func TestLazySlotsComplete(t *testing.T) {
	g := genWorld(smallWorld(4))
	feat := NewFeaturizer(g)
	st, err := NewStage(g, nil, []int{3, 3}, feat)
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	seeds := []int32{5, 17, 400, 1234, 7000, 9001}
	if _, err := st.Batch(&b, seeds, nil, newRNG(2)); err != nil {
		t.Fatal(err)
	}
	s := b.EdgeSlots
	if s.written() != b.NumEdges[1] || s.Rows != b.NumEdges[0] {
		t.Fatalf("%d of %d rows written, want %d of %d", s.written(), s.Rows, b.NumEdges[1], b.NumEdges[0])
	}
	var full SlotRows
	feat.FillSlots(&full, b.Edges)
	s.Complete()
	if s.written() != s.Rows || !slices.Equal(s.Idx, full.Idx) || !slices.Equal(s.Val, full.Val) {
		t.Fatal("completed slots differ from FillSlots'")
	}
}

// TestFoldRecordsMatchSlots checks that a folding GIN model reading its
// first layer's message inputs from the records computes, bit for bit,
// the logits and gradients of the same model summing the slots, on
// evaluation-stage and training-stage batches, with reverse messages and
// edge updates on and off, on one CPU (the sums and the product block by
// block) and on all of them.
func TestFoldRecordsMatchSlots(t *testing.T) {
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			testFoldRecordsMatchSlots(t)
		})
	}
}

func testFoldRecordsMatchSlots(t *testing.T) {
	g := genWorld(smallWorld(6))
	feat := NewFeaturizer(g)
	var train []int32
	for e := range g.NumEdges() {
		if e%3 != 0 {
			train = append(train, int32(e))
		}
	}
	for _, tc := range []struct {
		name             string
		visible          []int32
		fanOut           []int
		reverse, updates bool
		hidden           int
	}{
		{"all edges/fan 4x4", nil, []int{4, 4}, true, true, 8},
		{"training edges/fan 5x3", train, []int{5, 3}, true, true, 8},
		{"no reverse", nil, []int{4, 4}, false, true, 8},
		{"no edge updates", train, []int{3, 3}, true, false, 8},
		{"full neighbourhoods", train, []int{-1, 2}, true, true, 8},
		{"one layer", nil, []int{6}, true, true, 8},
		// 32 and 64 columns: the sums and the product block by block.
		{"h32", train, []int{5, 5}, true, true, 32},
		{"h64 no reverse", train, []int{4, 6}, false, true, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := NewStage(g, tc.visible, tc.fanOut, feat)
			if err != nil {
				t.Fatal(err)
			}
			seeds := train[:200]
			if tc.visible == nil {
				seeds = []int32{0, 3, 6, 9, 300, 3000, 6000, 9999}
			}
			var b Batch
			labels, err := st.Batch(&b, seeds, nil, newRNG(3))
			if err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig(KindGIN)
			cfg.Hidden, cfg.Layers, cfg.ReverseMP, cfg.EdgeUpdates = tc.hidden, len(tc.fanOut), tc.reverse, tc.updates
			run := func(b *Batch, wantRecords bool) ([]float32, []float32) {
				m, err := NewModel(cfg, newRNG(5))
				if err != nil {
					t.Fatal(err)
				}
				for i, p := range m.Params() {
					if p.W.Rows == 1 {
						copy(p.W.Data, randTensor(newRNG(uint64(60+i)), 1, p.W.Cols).Data)
					}
				}
				logits := m.Forward(b, nil, false, nil).Clone()
				if f := m.layers[0].fold; f == nil || f.foldRecords(m.layers[0]) != wantRecords {
					t.Fatalf("fold %v, records %v", f != nil, wantRecords)
				}
				d := gnn.New(logits.Rows, logits.Cols)
				gnn.SoftmaxCrossEntropy(logits, labels, nil, []float32{1, 4}, d)
				m.Backward(d)
				return logits.Data, gnn.FlattenGrad(m.Params())
			}
			lr, gr := run(&b, true)
			if b.EdgeSlots.written() == b.EdgeSlots.Rows && b.NumEdges[1] < b.NumEdges[0] {
				t.Fatal("the records path completed the slots")
			}
			slots := *b.EdgeSlots
			slots.Complete()
			slots.feat, slots.edges = nil, nil
			sb := b
			sb.EdgeSlots = &slots
			ls, gs := run(&sb, false)
			if !slices.Equal(lr, ls) {
				t.Fatalf("logits from records %v, from slots %v", lr[:4], ls[:4])
			}
			for i := range gs {
				if gr[i] != gs[i] {
					t.Fatal(fmt.Sprintf("gradient %d: from records %v, from slots %v", i, gr[i], gs[i]))
				}
			}
		})
	}
}
