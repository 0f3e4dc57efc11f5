package spectral

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"graphfed/graph"
)

// denseLowest is the reference: all eigenvalues of the dense Laplacian by
// gonum's EigenSym, ascending.
func denseLowest(tb testing.TB, l *Laplacian) []float64 {
	tb.Helper()
	var es mat.EigenSym
	if !es.Factorize(l.Dense(), false) {
		tb.Fatal("dense EigenSym failed")
	}
	return es.Values(nil)
}

// checkEigenpairs compares e with the dense spectrum and checks residuals
// and orthonormality; it returns the largest eigenvalue error.
func checkEigenpairs(t *testing.T, l *Laplacian, e *Eigenpairs, want []float64) float64 {
	t.Helper()
	if len(e.Values) != e.Phi || !slices.IsSorted(e.Values) {
		t.Fatalf("values not %d ascending: %v", e.Phi, e.Values)
	}
	worst := 0.0
	for q, v := range e.Values {
		worst = math.Max(worst, math.Abs(v-want[q]))
	}
	if worst > 1e-9 {
		for q, v := range e.Values {
			if math.Abs(v-want[q]) > 1e-9 {
				t.Errorf("λ_%d = %.15g, dense %.15g", q, v, want[q])
			}
		}
	}
	r, err := MaxResidual(l, e)
	if err != nil {
		t.Fatal(err)
	}
	if !(r <= 1e-8) {
		t.Errorf("max residual %g > 1e-8", r)
	}
	if o := Orthogonality(e); !(o <= 1e-8) {
		t.Errorf("eigenvectors %g from orthonormal", o)
	}
	return worst
}

func TestLowestEigenpairsMatchDense(t *testing.T) {
	cases := []struct {
		name   string
		adj    func(testing.TB) *graph.CSR
		phi    int
		noFold bool
		long   bool // skipped under -short: the dense reference takes seconds
	}{
		{"path 300 (bipartite)", func(tb testing.TB) *graph.CSR { return pathGraph(tb, 300) }, 30, false, false},
		{"odd cycle 401 (double eigenvalues)", func(tb testing.TB) *graph.CSR { return cycleGraph(tb, 401) }, 41, false, false},
		{"even cycle 400 (bipartite, double)", func(tb testing.TB) *graph.CSR { return cycleGraph(tb, 400) }, 40, false, false},
		{"grid 20x20", func(tb testing.TB) *graph.CSR { return gridGraph(tb, 20, 20) }, 50, false, false},
		{"hypercube Q9 (multiplicity 9 and 36)", func(tb testing.TB) *graph.CSR { return hypercube(tb, 9) }, 20, false, false},
		{"hypercube Q9 unfolded", func(tb testing.TB) *graph.CSR { return hypercube(tb, 9) }, 20, true, false},
		{"complete K300 (multiplicity 299)", func(tb testing.TB) *graph.CSR { return erGraph(tb, 300, 1, 1) }, 10, false, false},
		{"three copies of ER 300 + 5 isolated", func(tb testing.TB) *graph.CSR {
			g := erGraph(tb, 300, 0.02, 2)
			return isolated(tb, union(tb, g, g, g), 5)
		}, 60, false, false},
		{"star 500 + path 400 (multiplicity 498)", func(tb testing.TB) *graph.CSR {
			return union(tb, starGraph(tb, 500), pathGraph(tb, 400))
		}, 60, false, false},
		{"bipartite GNMK 500x700, isolated users and items", func(tb testing.TB) *graph.CSR {
			return bipartiteOf(tb, gnmkGraph(tb, 500, 700, 2000, 3))
		}, 64, false, false},
		{"bipartite GNMK 500x700 unfolded", func(tb testing.TB) *graph.CSR {
			return bipartiteOf(tb, gnmkGraph(tb, 500, 700, 2000, 3))
		}, 64, true, false},
		{"weighted ER 800", func(tb testing.TB) *graph.CSR { return weighted(erGraph(tb, 800, 0.01, 4), 4) }, 50, false, false},
		{"ER 1200", func(tb testing.TB) *graph.CSR { return erGraph(tb, 1200, 0.006, 5) }, 128, false, false},
		{"bipartite GNMK 800x1200 (2000 nodes)", func(tb testing.TB) *graph.CSR {
			return bipartiteOf(tb, gnmkGraph(tb, 800, 1200, 6000, 6))
		}, 128, false, true},
	}
	// The dense references are single-threaded, so the cases run in
	// parallel; the group waits for all of them before the summary.
	var mu sync.Mutex
	overall := 0.0
	t.Run("group", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				if c.long && testing.Short() {
					t.Skip("dense reference of 2000 nodes skipped under -short")
				}
				l, err := NewLaplacian(c.adj(t))
				if err != nil {
					t.Fatal(err)
				}
				want := denseLowest(t, l)
				// By default these components are small enough for the
				// dense path; DenseMax −1 sends them through Lanczos.
				for _, dm := range []int{0, -1} {
					e, err := LowestEigenpairs(l, c.phi, EigenOptions{Seed: 11, NoFold: c.noFold, DenseMax: dm})
					if err != nil {
						t.Fatal(err)
					}
					worst := checkEigenpairs(t, l, e, want)
					mu.Lock()
					overall = math.Max(overall, worst)
					mu.Unlock()
					t.Logf("n=%d Φ=%d DenseMax %d: max |λ−λ_dense| = %.2g, %+v", l.N(), c.phi, dm, worst, e.Stats)
				}
			})
		}
	})
	t.Logf("max eigenvalue error over all cases: %.3g", overall)
}

// TestFoldUsedAndProbed checks that the paths the table relies on are
// the ones taken: bipartite components go through the fold, and the
// hypercube's multiplicities (9 > block size 4) need the probe.
func TestFoldUsedAndProbed(t *testing.T) {
	l, err := NewLaplacian(hypercube(t, 9))
	if err != nil {
		t.Fatal(err)
	}
	e, err := LowestEigenpairs(l, 20, EigenOptions{Seed: 1, DenseMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	if e.Stats.Folded != 1 || e.Stats.Probes == 0 {
		t.Errorf("hypercube: %+v, want one folded component and probes", e.Stats)
	}
	// λ = 2/9 has multiplicity 9 and λ = 4/9 fills the remaining 10.
	for q, v := range e.Values {
		want := 4.0 / 9
		switch {
		case q == 0:
			want = 0
		case q <= 9:
			want = 2.0 / 9
		}
		if math.Abs(v-want) > 1e-10 {
			t.Errorf("λ_%d = %.15g, want %.15g", q, v, want)
		}
	}
}

func TestLowestEigenpairsDeterministic(t *testing.T) {
	l, err := NewLaplacian(bipartiteOf(t, gnmkGraph(t, 700, 500, 3000, 9)))
	if err != nil {
		t.Fatal(err)
	}
	run := func(procs int, seed uint64) *Eigenpairs {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		e, err := LowestEigenpairs(l, 40, EigenOptions{Seed: seed, DenseMax: -1})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b, c := run(2, 3), run(1, 3), run(2, 4)
	if !slices.Equal(a.Values, b.Values) || !slices.Equal(a.Vectors, b.Vectors) {
		t.Error("results differ between GOMAXPROCS 2 and 1")
	}
	if slices.Equal(a.Vectors, c.Vectors) {
		t.Error("seeds 3 and 4 gave bit-identical vectors; the seed is not used")
	}
	for q := range a.Values {
		if math.Abs(a.Values[q]-c.Values[q]) > 1e-12 {
			t.Errorf("λ_%d: %v with seed 3, %v with seed 4", q, a.Values[q], c.Values[q])
		}
	}
}

func TestLowestEigenpairsIsolatedNodes(t *testing.T) {
	// Two isolated nodes and an edge: L = diag(1, 1) ⊕ [[1,−1],[−1,1]],
	// eigenvalues 0, 1, 1, 2 with the isolated nodes' indicators for 1.
	l, err := NewLaplacian(mustEdges(t, 4, []graph.Edge{{U: 1, V: 2}}))
	if err != nil {
		t.Fatal(err)
	}
	e, err := LowestEigenpairs(l, 4, EigenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 1, 1, 2}
	for q, v := range e.Values {
		if math.Abs(v-want[q]) > 1e-14 {
			t.Errorf("λ_%d = %v, want %v", q, v, want[q])
		}
	}
	if e.Stats.Isolated != 2 || e.Stats.Components != 3 {
		t.Errorf("stats %+v, want 3 components of which 2 isolated", e.Stats)
	}
	if e.Vectors[0*4+1] != 1 || e.Vectors[3*4+2] != 1 {
		t.Errorf("eigenvalue-1 vectors are not the isolated nodes' indicators: %v", e.Vectors)
	}
}

func TestLowestEigenpairsProgressAndErrors(t *testing.T) {
	l, err := NewLaplacian(erGraph(t, 600, 0.01, 8))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	if _, err := LowestEigenpairs(l, 30, EigenOptions{DenseMax: -1, Progress: func(p EigenProgress) {
		calls++
		if p.Wanted != 30 || p.Nodes < 500 || p.Converged > p.Wanted {
			t.Errorf("odd progress %+v", p)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Error("progress never called")
	}
	for _, phi := range []int{0, -1, 601} {
		if _, err := LowestEigenpairs(l, phi, EigenOptions{}); err == nil {
			t.Errorf("phi %d accepted", phi)
		}
	}
	if _, err := LowestEigenpairs(l, 5, EigenOptions{Tol: math.NaN()}); err == nil {
		t.Error("NaN tolerance accepted")
	}
}
