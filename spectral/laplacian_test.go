package spectral

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"graphfed/graph"
)

func TestNewLaplacianRejects(t *testing.T) {
	sym := mustEdges(t, 3, []graph.Edge{{U: 0, V: 1}})
	cases := []struct {
		name string
		adj  *graph.CSR
		want string
	}{
		{"nil", nil, "nil adjacency"},
		{"non-square", &graph.CSR{Rows: 2, Cols: 3, RowPtr: []int{0, 0, 0}}, "want square"},
		{"broken rowptr", &graph.CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1}}, "rowptr"},
		{"one direction only", &graph.CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1, 1}, ColIdx: []int32{1}}, "not symmetric"},
		{"unequal weights", &graph.CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1, 2}, ColIdx: []int32{1, 0}, Val: []float32{1, 2}}, "differ"},
		{"negative weight", &graph.CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1, 2}, ColIdx: []int32{1, 0}, Val: []float32{-1, -1}}, "positive"},
		{"zero weight", &graph.CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1, 2}, ColIdx: []int32{1, 0}, Val: []float32{0, 0}}, "positive"},
		{"NaN weight", &graph.CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1, 2}, ColIdx: []int32{1, 0}, Val: []float32{float32(math.NaN()), 1}}, "positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewLaplacian(c.adj)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "spectral: laplacian: ") {
				t.Errorf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	if _, err := NewLaplacian(sym); err != nil {
		t.Errorf("valid adjacency rejected: %v", err)
	}
}

// TestLaplacianDense checks every entry of L = I − D^-1/2·A·D^-1/2 on a
// weighted graph with a self loop and an isolated node, worked by hand.
func TestLaplacianDense(t *testing.T) {
	// Nodes 0–1 weight 2, 1–2 weight 1, self loop on 2 weight 3, node 3
	// isolated. Degrees 2, 3, 4, 0.
	adj := &graph.CSR{Rows: 4, Cols: 4, RowPtr: []int{0, 1, 3, 5, 5},
		ColIdx: []int32{1, 0, 2, 1, 2}, Val: []float32{2, 2, 1, 1, 3}}
	l, err := NewLaplacian(adj)
	if err != nil {
		t.Fatal(err)
	}
	want := [4][4]float64{
		{1, -2 / math.Sqrt(6), 0, 0},
		{-2 / math.Sqrt(6), 1, -1 / math.Sqrt(12), 0},
		{0, -1 / math.Sqrt(12), 1 - 3.0/4, 0},
		{0, 0, 0, 1},
	}
	d := l.Dense()
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			if math.Abs(d.At(i, j)-want[i][j]) > 1e-15 {
				t.Errorf("L[%d][%d] = %v, want %v", i, j, d.At(i, j), want[i][j])
			}
		}
	}
	for i, w := range []float64{2, 3, 4, 0} {
		if l.Degree(i) != w {
			t.Errorf("degree %d = %v, want %v", i, l.Degree(i), w)
		}
	}
}

// TestLaplacianApplyMatchesDense checks the sparse block product, for
// block widths that take every kernel path, against the dense matrix.
func TestLaplacianApplyMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, adj := range []*graph.CSR{
		isolated(t, erGraph(t, 300, 0.03, 1), 3),
		weighted(erGraph(t, 200, 0.05, 2), 2),
		bipartiteOf(t, gnmkGraph(t, 40, 70, 300, 3)),
	} {
		l, err := NewLaplacian(adj)
		if err != nil {
			t.Fatal(err)
		}
		d := l.Dense()
		n := l.N()
		for _, k := range []int{1, 3, 4, 8} {
			x := make([]float64, n*k)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			y := make([]float64, n*k)
			l.Apply(y, x, k)
			worst := 0.0
			for i := 0; i < n; i++ {
				for c := 0; c < k; c++ {
					var s float64
					for j := 0; j < n; j++ {
						s += d.At(i, j) * x[j*k+c]
					}
					worst = math.Max(worst, math.Abs(s-y[i*k+c]))
				}
			}
			if worst > 1e-12 {
				t.Errorf("n=%d k=%d: sparse and dense products differ by %g", n, k, worst)
			}
		}
	}
}

func TestBipartiteAdjacency(t *testing.T) {
	// 2 users, 3 items: u0–i0, u0–i2, u1–i1.
	r := &graph.CSR{Rows: 2, Cols: 3, RowPtr: []int{0, 2, 3}, ColIdx: []int32{0, 2, 1}}
	a, err := BipartiteAdjacency(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[graph.Edge]bool{{U: 0, V: 2}: true, {U: 0, V: 4}: true, {U: 1, V: 3}: true,
		{U: 2, V: 0}: true, {U: 4, V: 0}: true, {U: 3, V: 1}: true}
	got := a.Edges()
	if a.Rows != 5 || len(got) != len(want) {
		t.Fatalf("adjacency %dx%d with edges %v", a.Rows, a.Cols, got)
	}
	for _, e := range got {
		if !want[e] {
			t.Errorf("unexpected edge %v", e)
		}
	}
	if _, err := NewBipartiteLaplacian(r); err != nil {
		t.Error(err)
	}
	if _, err := BipartiteAdjacency(&graph.CSR{Rows: 1, Cols: 1, RowPtr: []int{0, 1}, ColIdx: []int32{3}}); err == nil {
		t.Error("out-of-range item accepted")
	}
}

func TestComponentsAndBiadjacency(t *testing.T) {
	// A triangle (odd cycle), a path of 3 and an isolated node.
	adj := mustEdges(t, 7, []graph.Edge{{U: 0, V: 1}, {U: 1, V: 2}, {U: 2, V: 0}, {U: 3, V: 5}, {U: 5, V: 4}})
	cs := components(adj)
	if len(cs) != 3 {
		t.Fatalf("%d components, want 3", len(cs))
	}
	if cs[0].bipartite || !cs[1].bipartite || !cs[2].bipartite || len(cs[2].nodes) != 1 || cs[2].entries != 0 {
		t.Errorf("components %+v", cs)
	}
	local := make([]int32, 7)
	sub := cs[1].subgraph(adj, local)
	if err := sub.Validate(); err != nil {
		t.Fatal(err)
	}
	// Path 3–5–4: local ids 3→0, 4→1, 5→2; node 5 is the smaller side.
	r, rows, cols := cs[1].biadjacency(sub)
	if len(rows) != 1 || rows[0] != 2 || len(cols) != 2 || r.NNZ() != 2 || r.Rows != 1 || r.Cols != 2 {
		t.Errorf("biadjacency rows %v cols %v r %+v", rows, cols, r)
	}
}
