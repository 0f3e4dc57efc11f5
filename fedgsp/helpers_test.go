package fedgsp

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"graphfed/graph"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

// randomDataset draws a connected graph (a ring plus extra random edges)
// with n nodes, d features (non-negative and dense, or sparse binary when
// sparse is set), labels in [0, classes) and a random split: about half
// train, a quarter val, a quarter test.
func randomDataset(t testing.TB, rng *rand.Rand, n, d, classes, extraEdges int, sparse bool) *graph.Dataset {
	t.Helper()
	var edges []graph.Edge
	for i := 0; i < n; i++ {
		edges = append(edges, graph.Edge{U: int32(i), V: int32((i + 1) % n)})
	}
	for e := 0; e < extraEdges; e++ {
		edges = append(edges, graph.Edge{U: int32(rng.IntN(n)), V: int32(rng.IntN(n))})
	}
	adj, err := graph.FromEdges(n, edges, true)
	if err != nil {
		t.Fatal(err)
	}
	f := &graph.CSR{Rows: n, Cols: d, RowPtr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if sparse && rng.Float64() > 0.01 && j != i%d {
				continue
			}
			f.ColIdx = append(f.ColIdx, int32(j))
			if sparse {
				f.Val = append(f.Val, 1)
			} else {
				f.Val = append(f.Val, float32(0.05+rng.Float64()))
			}
		}
		f.RowPtr[i+1] = len(f.ColIdx)
	}
	ds := &graph.Dataset{Name: "random", Adj: adj, Features: f, Classes: classes,
		Labels: make([]int32, n), Split: make([]graph.Split, n)}
	for i := 0; i < n; i++ {
		ds.Labels[i] = int32(rng.IntN(classes))
		switch r := rng.Float64(); {
		case r < 0.5:
			ds.Split[i] = graph.SplitTrain
		case r < 0.75:
			ds.Split[i] = graph.SplitVal
		default:
			ds.Split[i] = graph.SplitTest
		}
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	return ds
}

// denseP is P = D^{-1/2} A D^{-1/2} as a dense n×n matrix, for reference.
func denseP(p propagator) [][]float64 {
	out := make([][]float64, p.n)
	for i := range out {
		out[i] = make([]float64, p.n)
		for k := p.rowPtr[i]; k < p.rowPtr[i+1]; k++ {
			out[i][p.col[k]] = p.val[k]
		}
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

// column returns column j of a row-major n×d matrix.
func column(m []float64, d, j int) []float64 {
	out := make([]float64, len(m)/d)
	for i := range out {
		out[i] = m[i*d+j]
	}
	return out
}

func approx(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(a)+math.Abs(b)) }

// sharedDataset loads dataset name from ../shared/datasets (beside the
// repository, where CI puts it), skipping tb with the reason when it is
// absent.
func sharedDataset(tb testing.TB, name string) *graph.Dataset {
	tb.Helper()
	dir := "../../shared/datasets/" + name
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("%s not available at %s (../shared absent): %v", name, dir, err)
	}
	d, err := graph.LoadTSV(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
