package lpsfed

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"graphfed/gnn"
)

// DenseLowPass returns the phi lowest eigenpairs (P̄, λ ascending) of the
// normalized Laplacian L = I − D^-1/2·A·D^-1/2 of a user–item graph with
// users + items nodes (items numbered after users) and train[u] the items
// of user u, by a dense symmetric eigendecomposition. It is exact and
// O(n³): the reference the Lanczos path is checked against, and usable
// for clients of a few thousand nodes. Isolated nodes get degree 1 (their
// row of L is the identity's).
func DenseLowPass(users, items int, train [][]int32, phi int) (*gnn.Tensor, []float64, error) {
	n := users + items
	if phi < 1 || phi > n {
		return nil, nil, fmt.Errorf("lpsfed: dense low pass: phi %d outside [1, %d]", phi, n)
	}
	deg := make([]float64, n)
	for u, it := range train {
		for _, i := range it {
			if int(i) < 0 || int(i) >= items {
				return nil, nil, fmt.Errorf("lpsfed: dense low pass: user %d has item %d of %d", u, i, items)
			}
			deg[u]++
			deg[users+int(i)]++
		}
	}
	l := mat.NewSymDense(n, nil)
	for v := range n {
		l.SetSym(v, v, 1)
	}
	for u, it := range train {
		for _, i := range it {
			v := users + int(i)
			l.SetSym(u, v, -1/math.Sqrt(deg[u]*deg[v]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(l, true) {
		return nil, nil, fmt.Errorf("lpsfed: dense low pass: eigendecomposition of %d nodes failed", n)
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] < vals[idx[b]] })
	p := gnn.New(n, phi)
	lam := make([]float64, phi)
	for c := range phi {
		lam[c] = vals[idx[c]]
		for r := range n {
			p.Set(r, c, float32(vecs.At(r, idx[c])))
		}
	}
	return p, lam, nil
}
