package edgegnn

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"graphfed/gnn"
)

// workStep is one Adam step of m on b (labels: seed parity) with
// overrides, forward and backward through fwd (m itself or a worker's
// model bound to m).
func workStep(m, fwd *Model, opt *gnn.Adam, b *Batch, ovs []EmbeddingOverride, rng *rand.Rand) {
	gnn.ZeroGrad(m.Params())
	logits := fwd.Forward(b, ovs, true, rng)
	labels := make([]int32, logits.Rows)
	for i := range labels {
		labels[i] = int32(i % 2)
	}
	d := gnn.New(logits.Rows, logits.Cols)
	gnn.SoftmaxCrossEntropy(logits, labels, nil, nil, d)
	fwd.Backward(d)
	opt.Step()
}

// A model stepped through pooled workers, whose buffers another model
// used in between and at other batch sizes, ends bit-identical to one
// stepped on its own buffers: the buffers are scratch.
func TestEdgeWorkersBitIdentical(t *testing.T) {
	for _, kind := range []string{KindGIN, gnn.KindSAGE, gnn.KindGCN} {
		t.Run(kind, func(t *testing.T) {
			cfg := DefaultConfig(kind)
			cfg.Hidden, cfg.NodeIn, cfg.EdgeIn, cfg.Dropout = 8, 5, 6, 0.3
			cfg.Ports, cfg.EgoIDs = true, true
			build := func(seed uint64) *Model {
				m, err := NewModel(cfg, rand.New(rand.NewPCG(seed, 1)))
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			own, pooled, other := build(1), build(1), build(2)
			optOwn, optPooled, optOther := gnn.NewAdam(own.Params(), 1e-2), gnn.NewAdam(pooled.Params(), 1e-2), gnn.NewAdam(other.Params(), 1e-2)
			work := NewWorkers(1)
			rngOwn, rngPooled := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
			data := rand.New(rand.NewPCG(3, 3))
			for step := range 6 {
				b := testBatch(t, data, 40, 300, 4+5*(step%3), []int{3, 3}, cfg.NodeIn, cfg.EdgeIn)
				ovs := randOverrides(data, b, cfg.Hidden)
				// Another bank's larger batch dirties the worker first.
				ob := testBatch(t, data, 60, 500, 20, []int{4, 4}, cfg.NodeIn, cfg.EdgeIn)
				w := work.Acquire(other)
				workStep(other, w.Model(), optOther, ob, nil, data)
				work.Release(w)

				workStep(own, own, optOwn, b, ovs, rngOwn)
				w = work.Acquire(pooled)
				workStep(pooled, w.Model(), optPooled, b, ovs, rngPooled)
				work.Release(w)
			}
			if !slices.Equal(gnn.Flatten(own.Params()), gnn.Flatten(pooled.Params())) {
				t.Fatal("parameters stepped through pooled workers differ from the model's own steps")
			}
			if slices.Equal(gnn.Flatten(own.Params()), gnn.Flatten(other.Params())) {
				t.Fatal("the other model's steps leaked into the pooled model's parameters")
			}
		})
	}
}

// Acquire blocks while Size workers are out, and Release frees one.
func TestEdgeWorkersBound(t *testing.T) {
	cfg := DefaultConfig(KindGIN)
	m, err := NewModel(cfg, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := NewWorkers(0).Size(); got != runtime.GOMAXPROCS(0) {
		t.Fatalf("default size %d, want GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
	}
	work := NewWorkers(2)
	a, b := work.Acquire(m), work.Acquire(m)
	if a == b {
		t.Fatal("two holders share a worker")
	}
	got := make(chan *Worker)
	go func() { got <- work.Acquire(m) }()
	select {
	case <-got:
		t.Fatal("a third worker was handed out from a pool of 2")
	case <-time.After(50 * time.Millisecond):
	}
	work.Release(a)
	select {
	case c := <-got:
		if c != a {
			t.Fatal("the released worker was not reused")
		}
		work.Release(c)
	case <-time.After(5 * time.Second):
		t.Fatal("Acquire still blocked after a Release")
	}
	work.Release(b)
}

// Samplers of different graphs taking turns on one scratch draw the very
// batches they draw on their own.
func TestSampleScratchShared(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var own, shared [2]*Sampler
	for i, size := range []int{50, 200} {
		src, dst := randMultigraph(rng, size, 6*size)
		for _, s := range []**Sampler{&own[i], &shared[i]} {
			idx, err := NewIndex(size, src, dst, nil)
			if err != nil {
				t.Fatal(err)
			}
			if *s, err = NewSampler(idx, []int{3, 2}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var scr SampleScratch
	rOwn, rShared := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	for step := range 20 {
		i := step % 2
		seeds := []int32{int32(step), int32(step + 20), int32(step + 41)}
		var a, b Batch
		if err := own[i].Sample(&a, seeds, rOwn); err != nil {
			t.Fatal(err)
		}
		if err := shared[i].SampleOn(&scr, &b, seeds, rShared); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Nodes, b.Nodes) || !slices.Equal(a.Edges, b.Edges) || !slices.Equal(a.EdgeSrc, b.EdgeSrc) ||
			!slices.Equal(a.Blocks[0].In.Src, b.Blocks[0].In.Src) || !slices.Equal(a.Blocks[1].Out.Edge, b.Blocks[1].Out.Edge) {
			t.Fatalf("step %d: a batch sampled on the shared scratch differs from the sampler's own", step)
		}
	}
	if shared[0].own != nil || shared[1].own != nil {
		t.Fatal("a sampler used only through SampleOn allocated its own scratch")
	}
}
