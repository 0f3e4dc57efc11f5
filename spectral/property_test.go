package spectral

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"graphfed/graph"
)

// sweep enables the large property sweep: more graphs, up to 5,000 nodes
// per component, each component checked against dense EigenSym with
// vectors (minutes on two cores):
//
//	go test ./spectral -run TestEigenpairsProperty -spectral.sweep -timeout 60m
var sweep = flag.Bool("spectral.sweep", false, "run the large eigensolver property sweep (components up to 5,000 nodes)")

// refComponent is the dense reference for one connected component: its
// nodes (global ids, ascending), every eigenvalue ascending, and the
// eigenvectors (columns, over the component's nodes) when computed.
type refComponent struct {
	nodes  []int
	values []float64
	vecs   *mat.Dense
}

// denseReference splits l's graph into components (its own breadth-first
// search, not the solver's) and solves each densely with gonum's EigenSym,
// with vectors for components up to vecMax nodes. Components run on both
// cores.
func denseReference(tb testing.TB, l *Laplacian, vecMax int) []refComponent {
	tb.Helper()
	n := l.N()
	adj := l.Adjacency()
	seen := make([]bool, n)
	var comps []refComponent
	for s := 0; s < n; s++ {
		if seen[s] {
			continue
		}
		seen[s] = true
		queue := []int{s}
		for h := 0; h < len(queue); h++ {
			cols, _ := adj.Row(queue[h])
			for _, v := range cols {
				if !seen[v] {
					seen[v] = true
					queue = append(queue, int(v))
				}
			}
		}
		slices.Sort(queue)
		comps = append(comps, refComponent{nodes: queue})
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	failed := make([]bool, len(comps))
	for ci := range comps {
		c := &comps[ci]
		if len(c.nodes) == 1 {
			c.values = []float64{1 - l.Degree(c.nodes[0])/max(l.Degree(c.nodes[0]), 1)} // isolated: 1; a lone self loop: 0
			c.vecs = mat.NewDense(1, 1, []float64{1})
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			m := len(c.nodes)
			pos := make(map[int]int, m)
			for k, v := range c.nodes {
				pos[v] = k
			}
			a := mat.NewSymDense(m, nil)
			for k, v := range c.nodes {
				a.SetSym(k, k, 1)
				cols, vals := adj.Row(v)
				for t, u := range cols {
					w := 1.0
					if vals != nil {
						w = float64(vals[t])
					}
					if j := pos[int(u)]; j >= k {
						a.SetSym(k, j, a.At(k, j)-w/math.Sqrt(l.Degree(v)*l.Degree(int(u))))
					}
				}
			}
			var es mat.EigenSym
			withVecs := m <= vecMax
			if !es.Factorize(a, withVecs) {
				failed[ci] = true
				return
			}
			c.values = es.Values(nil)
			if withVecs {
				c.vecs = new(mat.Dense)
				es.VectorsTo(c.vecs)
			}
		}()
	}
	wg.Wait()
	for ci, f := range failed {
		if f {
			tb.Fatalf("dense EigenSym failed on component %d (%d nodes)", ci, len(comps[ci].nodes))
		}
	}
	return comps
}

// propTol is the agreement the property demands: eigenvalues within 1e-10
// of dense EigenSym; residuals ‖L·v − λ·v‖ and departures from
// orthonormality within checkFactor·1e-10, what the solver guarantees at
// its default tolerance.
const (
	propValTol = 1e-10
	propVecTol = checkFactor * 1e-10
)

// checkAgainstReference checks e against the per-component references:
// the Φ lowest of the union of their spectra; the residuals and
// orthonormality of e's vectors; and, per cluster of equal reference
// eigenvalues (within clusterWidth), that the returned vectors lie in the
// reference eigenspace: directly, ‖v − U·Uᵀ·v‖ with U the cluster's
// reference eigenvectors of v's component, where those were computed, and
// otherwise by the Davis–Kahan bound ‖r‖/gap (gap to the rest of that
// component's spectrum). It returns the largest eigenvalue error and
// subspace departure.
func checkAgainstReference(t *testing.T, l *Laplacian, e *Eigenpairs, refs []refComponent) (valErr, subErr float64) {
	t.Helper()
	phi := e.Phi
	var all []float64
	compOf := make([]int, l.N())
	for ci, c := range refs {
		all = append(all, c.values...)
		for _, v := range c.nodes {
			compOf[v] = ci
		}
	}
	slices.Sort(all)
	for q, v := range e.Values {
		if d := math.Abs(v - all[q]); d > valErr {
			valErr = d
		}
	}
	if valErr > propValTol {
		for q, v := range e.Values {
			if math.Abs(v-all[q]) > propValTol {
				t.Errorf("λ_%d = %.15g, dense EigenSym %.15g", q, v, all[q])
			}
		}
	}
	res, err := Residuals(l, e)
	if err != nil {
		t.Fatal(err)
	}
	for q, r := range res {
		if !(r <= propVecTol) {
			t.Errorf("pair %d (λ %.12g): residual %.3g > %g", q, e.Values[q], r, propVecTol)
		}
	}
	if o := Orthogonality(e); !(o <= propVecTol) {
		t.Errorf("eigenvectors %.3g from orthonormal", o)
	}
	// Subspaces. Each returned vector lives on one component (the solver
	// works per component); find it by the vector's support.
	for q := 0; q < phi; q++ {
		v := e.Vector(q)
		ci := -1
		for i, x := range v {
			if x != 0 {
				ci = compOf[i]
				break
			}
		}
		if ci < 0 {
			t.Errorf("pair %d: zero vector", q)
			continue
		}
		c := refs[ci]
		lam := e.Values[q]
		lo := sort0(c.values, lam-clusterWidth)
		hi := sort0(c.values, lam+clusterWidth+1e-300)
		for lo > 0 && c.values[lo]-c.values[lo-1] <= clusterWidth {
			lo--
		}
		for hi < len(c.values) && hi > 0 && c.values[hi]-c.values[hi-1] <= clusterWidth {
			hi++
		}
		if lo >= hi {
			t.Errorf("pair %d: λ %.15g is not an eigenvalue of its component", q, lam)
			continue
		}
		var dep float64
		if c.vecs != nil {
			// ‖v_c − U·Uᵀ·v_c‖ with v_c the restriction to the component.
			vc := make([]float64, len(c.nodes))
			var outside float64
			for k, node := range c.nodes {
				vc[k] = v[node]
			}
			for i, x := range v {
				if compOf[i] != ci {
					outside += x * x
				}
			}
			proj := make([]float64, len(vc))
			for j := lo; j < hi; j++ {
				var d float64
				for k := range vc {
					d += c.vecs.At(k, j) * vc[k]
				}
				for k := range vc {
					proj[k] += d * c.vecs.At(k, j)
				}
			}
			var s2 float64
			for k := range vc {
				s2 += (vc[k] - proj[k]) * (vc[k] - proj[k])
			}
			dep = math.Sqrt(s2 + outside)
		} else {
			gap := math.Inf(1)
			if lo > 0 {
				gap = lam - c.values[lo-1]
			}
			if hi < len(c.values) {
				gap = min(gap, c.values[hi]-lam)
			}
			dep = res[q] / gap
		}
		subErr = max(subErr, dep)
		if !(dep <= 1e-6) {
			t.Errorf("pair %d (λ %.12g, cluster of %d in a %d-node component): %.3g outside the dense eigenspace", q, lam, hi-lo, len(c.nodes), dep)
		}
	}
	return valErr, subErr
}

// sort0 is the index of the first value ≥ x in the ascending values.
func sort0(values []float64, x float64) int {
	i, _ := slices.BinarySearch(values, x)
	return i
}

// propCase is one generated graph of the property test.
type propCase struct {
	name  string
	r     *graph.CSR
	phi   int
	tol   float64
	large bool // needs the sweep
}

// propCases draws the property test's graphs from seed: heavy-tailed
// user–item graphs of several sizes, some with duplicated users, stars and
// identical pendant chains (repeated eigenvalues inside and at the edge of
// the wanted set), some with several components. Under the sweep the sizes
// go up to 5,000 nodes per component.
func propCases(seed uint64, count int, large bool) []propCase {
	rng := rand.New(rand.NewPCG(seed, 0x70726f70))
	var out []propCase
	for k := 0; k < count; k++ {
		maxUsers, maxItems := 300, 700
		if large {
			maxUsers, maxItems = 1200, 3800
		}
		shape := func() plShape {
			return plShape{users: 40 + rng.IntN(maxUsers), items: 80 + rng.IntN(maxItems), meanDeg: 2 + 30*rng.Float64(),
				userTail: 1.2 + 1.3*rng.Float64(), itemZipf: 0.5 + 0.8*rng.Float64()}
		}
		s := shape()
		kind := k % 5
		switch kind {
		case 1: // duplicated users and stars, some detached
			s.dupUsers, s.stars, s.starLeaves, s.detached = 5+rng.IntN(30), 1+rng.IntN(4), 3+rng.IntN(40), rng.IntN(2)
		case 2: // identical pendant chains off one hub
			s.pendants, s.chain = 3+rng.IntN(20), 1+rng.IntN(6)
		case 3, 4: // several components, repeated pieces among them
		}
		r := plGraph(s, seed+uint64(k))
		name := fmt.Sprintf("%02d %dx%d", k, s.users, s.items)
		switch kind {
		case 3:
			small := plGraph(plShape{users: 5 + rng.IntN(40), items: 10 + rng.IntN(60), meanDeg: 3, userTail: 1.5, itemZipf: 0.8}, seed+1000+uint64(k))
			r = stackR(r, small, small, small, plGraph(shape(), seed+2000+uint64(k)))
			name += " ×4 components"
		case 4:
			star := plGraph(plShape{users: 1, items: 1, meanDeg: 1, userTail: 2, itemZipf: 1, stars: 1, starLeaves: 30 + rng.IntN(200), detached: 1}, 0)
			r = stackR(star, r, star)
			name += " with detached stars"
		}
		nodes := r.Rows + r.Cols
		phis := []int{8, 32, 64, 128}
		phi := min(phis[rng.IntN(len(phis))], nodes)
		tol := 0.0 // the default, 1e-10
		out = append(out, propCase{name: name, r: r, phi: phi, tol: tol, large: large})
	}
	return out
}

// TestEigenpairsProperty runs generated heavy-tailed user–item graphs
// through LowestEigenpairs with its defaults (dense for small operators)
// and with Lanczos forced (DenseMax −1; a Lanczos answer that fails the
// solver's residual check still falls back to dense, and such fallbacks
// are counted and logged), and checks every answer against dense EigenSym
// per component (checkAgainstReference).
func TestEigenpairsProperty(t *testing.T) {
	count := 10
	if *sweep {
		count = 40
	}
	cases := propCases(17, count, false)
	if *sweep {
		cases = append(cases, propCases(23, count, true)...)
	}
	vecMax := 1200
	if *sweep {
		vecMax = 5000
	}
	var mu sync.Mutex
	var worstVal, worstSub float64
	var fallbacks, lanczos int
	t.Run("group", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				l, err := NewBipartiteLaplacian(c.r)
				if err != nil {
					t.Fatal(err)
				}
				refs := denseReference(t, l, vecMax)
				biggest := 0
				for _, rc := range refs {
					biggest = max(biggest, len(rc.nodes))
				}
				for _, o := range []EigenOptions{{Seed: 5}, {Seed: 5, DenseMax: -1}} {
					o.Tol = c.tol
					e, err := LowestEigenpairs(l, c.phi, o)
					if err != nil {
						t.Fatalf("DenseMax %d: %v", o.DenseMax, err)
					}
					v, s := checkAgainstReference(t, l, e, refs)
					mu.Lock()
					worstVal, worstSub = max(worstVal, v), max(worstSub, s)
					if o.DenseMax < 0 {
						fallbacks += e.Stats.Fallbacks
						lanczos += e.Stats.Lanczos
					}
					mu.Unlock()
					t.Logf("n=%d (largest component %d, %d components) Φ=%d DenseMax %d: |Δλ| %.2g, subspace %.2g, %+v",
						l.N(), biggest, len(refs), c.phi, o.DenseMax, v, s, e.Stats)
				}
			})
		}
	})
	t.Logf("%d graphs: max |λ − λ_dense| %.3g, max subspace departure %.3g; forced Lanczos: %d runs, %d dense fallbacks",
		len(cases), worstVal, worstSub, lanczos, fallbacks)
}
