package edgegnn

import (
	"math/rand/v2"
	"syscall"
	"testing"

	"graphfed/gnn"
	"graphfed/graph"
)

// benchEdgeEpoch times one training epoch of the default 64-unit,
// 2-layer edge model on the training days of a synthetic 100k-edge AML
// world (10k accounts): sampling, features, forward, loss, backward and
// Adam for every batch of batchSize seed edges (all at once when 0) with
// the given fan-outs.
func benchEdgeEpoch(b *testing.B, kind string, batchSize int, fanOut []int) {
	c := smallWorld(5)
	c.Accounts, c.Normal, c.Attempts = 10_000, 99_300, 100
	g := genWorld(c)
	sp := g.TemporalSplit()
	var train []int32
	for e, s := range g.EdgeSplits(&sp) {
		if s == graph.SplitTrain {
			train = append(train, int32(e))
		}
	}
	st, err := NewStage(g, train, fanOut, NewFeaturizer(g))
	if err != nil {
		b.Fatal(err)
	}
	rng := newRNG(1)
	m, err := NewModel(DefaultConfig(kind), rng)
	if err != nil {
		b.Fatal(err)
	}
	tr := edgeTrainer{m: m, opt: gnn.NewAdam(m.Params(), 0.005), st: st, weights: []float32{1, 10}}
	if _, err := tr.epoch(train, batchSize, rng); err != nil { // warm the buffers
		b.Fatal(err)
	}
	b.ReportMetric(float64(g.NumEdges()), "edges")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := tr.epoch(train, batchSize, rng); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEdgeEpoch(b *testing.B) {
	for _, c := range []struct {
		name   string
		kind   string
		batch  int
		fanOut []int
	}{
		{"sage/batch2048/fan10x10", gnn.KindSAGE, 2048, []int{10, 10}},
		{"gin/batch2048/fan10x10", KindGIN, 2048, []int{10, 10}},
		{"gcn/batch2048/fan10x10", gnn.KindGCN, 2048, []int{10, 10}},
		{"sage/full", gnn.KindSAGE, 0, []int{-1, -1}},
	} {
		b.Run(c.name, func(b *testing.B) { benchEdgeEpoch(b, c.kind, c.batch, c.fanOut) })
	}
}

// edgeStepCases are the configurations of the step benchmarks.
var edgeStepCases = []struct {
	name   string
	cfg    func() Config
	batch  int
	fanOut []int
}{
	{"gin-h32/batch512/fan5x5", func() Config { c := DefaultConfig(KindGIN); c.Hidden = 32; return c }, 512, []int{5, 5}},
	{"gin-h32-multignn/batch512/fan5x5", func() Config {
		c := DefaultConfig(KindGIN)
		c.Hidden, c.Ports, c.TimeDeltas, c.EgoIDs = 32, true, true, true
		return c
	}, 512, []int{5, 5}},
	{"gin-h64/batch2048/fan10x10", func() Config { return DefaultConfig(KindGIN) }, 2048, []int{10, 10}},
}

// benchEdgeStage builds the synthetic 100k-edge world (10k accounts) and
// the stage of the given split's seeds: training seeds in the training
// graph, or test seeds in the full graph (evaluation). The seeds come
// shuffled.
func benchEdgeStage(b *testing.B, cfg Config, fanOut []int, test bool) (*Stage, []int32, *rand.Rand) {
	wc := smallWorld(5)
	wc.Accounts, wc.Normal, wc.Attempts = 10_000, 99_300, 100
	g := genWorld(wc)
	sp := g.TemporalSplit()
	want := graph.SplitTrain
	if test {
		want = graph.SplitTest
	}
	var seeds, visible []int32
	for e, s := range g.EdgeSplits(&sp) {
		if s == want {
			seeds = append(seeds, int32(e))
		}
		if s == graph.SplitTrain {
			visible = append(visible, int32(e))
		}
	}
	if test {
		visible = nil
	}
	feat := NewFeaturizer(g)
	if cfg.Ports || cfg.TimeDeltas {
		feat.EnableOrder()
	}
	st, err := NewStage(g, visible, fanOut, feat)
	if err != nil {
		b.Fatal(err)
	}
	rng := newRNG(1)
	rng.Shuffle(len(seeds), func(i, j int) { seeds[i], seeds[j] = seeds[j], seeds[i] })
	return st, seeds, rng
}

// benchSeedRate runs step on consecutive batches of seeds (cycling) and
// reports seeds per wall second and per CPU second.
func benchSeedRate(b *testing.B, seeds []int32, batch int, step func([]int32)) {
	lo := 0
	next := func() {
		if lo+batch > len(seeds) {
			lo = 0
		}
		step(seeds[lo : lo+batch])
		lo += batch
	}
	for range 5 { // warm the buffers
		next()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := benchCPUSeconds()
	for b.Loop() {
		next()
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "seeds/s")
	// On a shared machine wall time includes waiting for a core; CPU
	// time does not (with -cpu 1 the step uses one core).
	b.ReportMetric(float64(b.N*batch)/(benchCPUSeconds()-cpu0), "seeds/cpu-s")
}

// BenchmarkEdgeTrainStep measures local-step throughput in seed
// transactions per second: one step (sample, features, forward, loss,
// backward, Adam) on a batch of training seeds of the synthetic 100k-edge
// world, batches cycling through the training edges. Run on one core with
// -cpu 1; "seeds/cpu-s" is the figure.
func BenchmarkEdgeTrainStep(b *testing.B) {
	for _, c := range edgeStepCases {
		b.Run(c.name, func(b *testing.B) {
			cfg := c.cfg()
			st, train, rng := benchEdgeStage(b, cfg, c.fanOut, false)
			m, err := NewModel(cfg, rng)
			if err != nil {
				b.Fatal(err)
			}
			tr := edgeTrainer{m: m, opt: gnn.NewAdam(m.Params(), 0.005), st: st, weights: []float32{1, 10}}
			benchSeedRate(b, train, c.batch, func(seeds []int32) {
				if _, err := tr.step(seeds, rng); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkEdgeEvalStep measures evaluation throughput in seed
// transactions per second: sampling, features and a forward pass without
// dropout (as EvaluateEdges does) on a batch of test seeds in the full
// graph of the same world. Run with -cpu 1.
func BenchmarkEdgeEvalStep(b *testing.B) {
	for _, c := range edgeStepCases {
		b.Run(c.name, func(b *testing.B) {
			cfg := c.cfg()
			st, test, rng := benchEdgeStage(b, cfg, c.fanOut, true)
			m, err := NewModel(cfg, rng)
			if err != nil {
				b.Fatal(err)
			}
			var (
				batch  Batch
				labels []int32
				tally  edgeTally
			)
			benchSeedRate(b, test, c.batch, func(seeds []int32) {
				if labels, err = st.Batch(&batch, seeds, labels, rng); err != nil {
					b.Fatal(err)
				}
				tally.add(m.Forward(&batch, nil, false, nil), labels)
			})
		})
	}
}

// benchCPUSeconds is the process's user and system CPU time so far.
func benchCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
