package edgegnn

import (
	"math"
	"strings"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/gnn"
	"graphfed/graph"
)

// orderGraph is a multigraph at one bank, rows out of time order: into D
// from A (t=10), B (t=5), A (t=20), C (t=20), D itself (t=30); from A to B
// (t=1).
func orderGraph() *amlworld.Graph {
	g := amlworld.NewGraph("order")
	for _, r := range []struct {
		from, to string
		minute   int64
	}{{"A", "D", 10}, {"B", "D", 5}, {"A", "D", 20}, {"C", "D", 20}, {"D", "D", 30}, {"A", "B", 1}} {
		g.AddRow(&amlworld.TxRow{Time: 60 * r.minute, FromBank: "1", FromAccount: r.from, ToBank: "1", ToAccount: r.to,
			AmountPaid: 1, AmountReceived: 1})
	}
	return g
}

func TestEdgeOrder(t *testing.T) {
	g := orderGraph()
	ord := edgeOrder(g)
	port := func(p int) float32 { return float32(math.Log1p(float64(p)) / 5) }
	delta := func(min float64) float32 { return float32(math.Log1p(min) / 10) }
	// At D, incoming by time: B(5) A(10) A(20) C(20) D(30): ports B0 A1 C2 D3.
	// A's outgoing by time: B(1) D(10) D(20): ports B0 D1.
	for _, c := range []struct {
		e                         int
		inPort, outPort, in, outD float32
	}{
		{0, port(1), port(1), delta(5), delta(9)},
		{1, port(0), port(0), 0, 0},
		{2, port(1), port(1), delta(10), delta(10)},
		{3, port(2), port(0), 0, 0}, // ties at t=20 break by row: A's (2) before C's (3)
		{4, port(3), port(0), delta(10), 0},
		{5, port(0), port(0), 0, 0},
	} {
		got := ord[c.e*EdgeOrdDim : (c.e+1)*EdgeOrdDim]
		want := []float32{c.inPort, c.outPort, c.in, c.outD}
		for j := range want {
			if math.Abs(float64(got[j]-want[j])) > 1e-6 {
				t.Errorf("edge %d column %d: got %v, want %v", c.e, j, got[j], want[j])
			}
		}
	}
}

// TestEdgeOrderPrefix checks that order features of a temporal prefix
// computed over the whole graph equal those of the prefix alone: one
// computation serves every stage of the split.
func TestEdgeOrderPrefix(t *testing.T) {
	g := genWorld(smallWorld(3))
	full := edgeOrder(g)
	sp := g.TemporalSplit()
	pre := amlworld.NewGraph("prefix")
	var ids []int
	for e, s := range g.EdgeSplits(&sp) {
		if s == graph.SplitTrain {
			r := g.Row(e)
			pre.AddRow(&r)
			ids = append(ids, e)
		}
	}
	if len(ids) == 0 || len(ids) == g.NumEdges() {
		t.Fatalf("%d of %d edges in the prefix", len(ids), g.NumEdges())
	}
	part := edgeOrder(pre)
	for i, e := range ids {
		for j := range EdgeOrdDim {
			if a, b := full[e*EdgeOrdDim+j], part[i*EdgeOrdDim+j]; a != b {
				t.Fatalf("edge %d column %d: %v over the graph, %v over the prefix", e, j, a, b)
			}
		}
	}
}

// TestEdgeSchemaStable pins the default models' schemas to those from
// before the Multi-GNN switches (federated peers compare them), and checks
// each switch changes the schema.
func TestEdgeSchemaStable(t *testing.T) {
	want := map[string]string{
		gnn.KindSAGE: "58396d50a85f9b692381dad1d717672cf35dbf0d30be70d1a0ea433db7d40aa9",
		gnn.KindGCN:  "58396d50a85f9b692381dad1d717672cf35dbf0d30be70d1a0ea433db7d40aa9",
		KindGIN:      "2987f13ac3494853560c14b39901127a7cdac17fe788784b265fb17dbb601f1e",
	}
	for kind, h := range want {
		m, err := NewModel(DefaultConfig(kind), newRNG(1))
		if err != nil {
			t.Fatal(err)
		}
		if got := gnn.SchemaHash(m.Params()); got != h {
			t.Errorf("%s: default schema %s, want %s", kind, got, h)
		}
		seen := map[string]string{h: "default"}
		for name, edit := range map[string]func(*Config){
			"no reverse": func(c *Config) { c.ReverseMP = false },
			"no updates": func(c *Config) { c.EdgeUpdates = false },
			"ports":      func(c *Config) { c.Ports = true },
			"tdeltas":    func(c *Config) { c.TimeDeltas = true },
			"ego":        func(c *Config) { c.EgoIDs = true },
		} {
			cfg := DefaultConfig(kind)
			edit(&cfg)
			m, err := NewModel(cfg, newRNG(1))
			if err != nil {
				t.Fatal(err)
			}
			got := gnn.SchemaHash(m.Params())
			if prev, dup := seen[got]; dup {
				t.Errorf("%s: %s has the schema of %s", kind, name, prev)
			}
			seen[got] = name
		}
	}
}

// TestEdgeReverseMP checks that without reverse message passing a node's
// embedding ignores its outgoing edges, and with it does not.
func TestEdgeReverseMP(t *testing.T) {
	for _, kind := range []string{gnn.KindSAGE, gnn.KindGCN, KindGIN} {
		for _, reverse := range []bool{false, true} {
			rng := newRNG(5)
			cfg := Config{Kind: kind, NodeIn: 2, EdgeIn: 3, Hidden: 4, Layers: 2, Classes: 2, HeadEdge: true, ReverseMP: reverse}
			m, err := NewModel(cfg, rng)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range m.Params() {
				if p.W.Rows == 1 {
					copy(p.W.Data, randTensor(rng, 1, p.W.Cols).Data)
				}
			}
			// Perturb the inputs of edges heard only as outgoing messages
			// in layer 1 (not as incoming ones, not seeds); resample until
			// a batch has some.
			var b *Batch
			var h1 *gnn.Tensor
			changed := 0
			for try := 0; try < 50 && changed == 0; try++ {
				b = testBatch(t, rng, 40, 60, 3, []int{2, 2}, 2, 3)
				m.Forward(b, nil, false, nil)
				h1 = m.NodeEmbeddings(1).Clone()
				blk := &b.Blocks[0]
				in := map[int32]bool{}
				for _, k := range blk.In.Edge {
					in[k] = true
				}
				for _, k := range blk.Out.Edge {
					if !in[k] && int(k) >= b.NumSeeds() {
						for j := range b.EdgeX.Row(int(k)) {
							b.EdgeX.Row(int(k))[j] += 1
						}
						in[k] = true
						changed++
					}
				}
			}
			if changed == 0 {
				t.Fatalf("%s: no out-only edge to perturb", kind)
			}
			m.Forward(b, nil, false, nil)
			same := equalTensors(m.NodeEmbeddings(1), h1)
			if same == reverse {
				t.Errorf("%s reverse=%v: layer-1 embeddings unchanged=%v after perturbing %d out-only edges", kind, reverse, same, changed)
			}
		}
	}
}

// TestEdgeEgoIDs checks that the ego offset reaches the seed endpoints'
// input embeddings only.
func TestEdgeEgoIDs(t *testing.T) {
	rng := newRNG(6)
	cfg := Config{Kind: KindGIN, NodeIn: 2, EdgeIn: 3, Hidden: 4, Layers: 2, Classes: 2, HeadEdge: true, EgoIDs: true}
	m, err := NewModel(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	b := testBatch(t, rng, 12, 50, 4, []int{2, 2}, 2, 3)
	m.Forward(b, nil, false, nil)
	base := m.NodeEmbeddings(0).Clone()
	m.ego.W.Data[1] += 2
	m.Forward(b, nil, false, nil)
	egos := b.NumNodes[b.Layers()]
	for r := range b.NumNodes[0] {
		for j, v := range m.NodeEmbeddings(0).Row(r) {
			d := v - base.Row(r)[j]
			want := float32(0)
			if r < egos && j == 1 {
				want = 2
			}
			if math.Abs(float64(d-want)) > 1e-6 {
				t.Fatalf("row %d (egos %d) column %d moved by %v, want %v", r, egos, j, d, want)
			}
		}
	}
}

func TestEdgeOrderRequired(t *testing.T) {
	rng := newRNG(7)
	for _, c := range []Config{
		{Kind: KindGIN, NodeIn: 2, EdgeIn: 3, Hidden: 4, Layers: 2, Classes: 2, Ports: true},
		{Kind: KindGIN, NodeIn: 2, EdgeIn: 3, Hidden: 4, Layers: 2, Classes: 2, TimeDeltas: true},
	} {
		m, err := NewModel(c, rng)
		if err != nil {
			t.Fatal(err)
		}
		b := testBatch(t, rng, 12, 40, 3, []int{2, 2}, 2, 3)
		b.EdgeOrd = nil
		if err := m.CheckBatch(b); err == nil || !strings.Contains(err.Error(), "EnableOrder") {
			t.Errorf("ports=%v tdeltas=%v: batch without order features: %v", c.Ports, c.TimeDeltas, err)
		}
	}
	// A stage whose featurizer has order features fills them.
	g := orderGraph()
	f := NewFeaturizer(g)
	st, err := NewStage(g, nil, []int{-1, -1}, f)
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	if _, err := st.Batch(&b, []int32{0, 3}, nil, rng); err != nil || b.EdgeOrd != nil {
		t.Fatalf("without EnableOrder: order %v, err %v", b.EdgeOrd, err)
	}
	f.EnableOrder()
	if _, err := st.Batch(&b, []int32{0, 3}, nil, rng); err != nil || b.EdgeOrd == nil || b.EdgeOrd.Rows != b.NumEdges[0] {
		t.Fatalf("with EnableOrder: order %v, err %v", b.EdgeOrd, err)
	}
	for r, e := range b.Edges {
		for j, v := range b.EdgeOrd.Row(r) {
			if v != f.ord[int(e)*EdgeOrdDim+j] {
				t.Fatalf("batch row %d (edge %d) column %d: %v", r, e, j, v)
			}
		}
	}
}
