package fedgsp

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"graphfed/learner"
)

// A client's spectral descriptors (learner.Descriptor) are the one
// data-derived release besides the model (contract: docs of issue 15):
// Orders = K, Principal = kpr, Dim = d, and Rows holds 4·K·kpr rows of
// length Dim, row-major, each of L2 norm 1 or 0 (padding):
//
//	block A (K·kpr rows): for k = 1..K, for a = 1..kpr: direction a of HM_k = P^k X
//	block B (K·kpr rows): for k = 1..K, for a = 1..kpr: direction a of U_k
//	block C (K·kpr rows): for a = 1..kpr, for k = 1..K: chunk k of direction a of [HM_1 … HM_K]
//	block D (K·kpr rows): the same for [U_1 … U_K]
//
// Chunks of C and D are unit norm over the whole K·Dim direction, not each.

// DescriptorRows is the number of rows of a descriptor: 4·K·kpr.
func DescriptorRows(orders, principal int) int { return 4 * orders * principal }

// computeDescriptors builds the descriptors of the bases of (p, x): HM_k and
// U_k for k = 1..K are materialised once as the n×K·d concatenations, which
// also hold the per-order blocks.
func computeDescriptors(p propagator, x []float64, d, K int, theta float64, kpr int) (learner.Descriptor, error) {
	n := p.n
	hmCat := mat.NewDense(max(n, 1), K*d, nil)
	uCat := mat.NewDense(max(n, 1), K*d, nil)
	walkBases(p, x, d, K, theta, func(k int, hm, u []float64) {
		for i := 0; i < n; i++ {
			copy(hmCat.RawRowView(i)[(k-1)*d:k*d], hm[i*d:(i+1)*d])
			copy(uCat.RawRowView(i)[(k-1)*d:k*d], u[i*d:(i+1)*d])
		}
	})
	desc := learner.Descriptor{Orders: K, Principal: kpr, Dim: d, Rows: make([]float32, DescriptorRows(K, kpr)*d)}
	row := func(block, r int) []float32 {
		off := (block*K*kpr + r) * d
		return desc.Rows[off : off+d]
	}
	for fam, cat := range []*mat.Dense{hmCat, uCat} {
		perOrder, whole, err := familyDirections(cat, n, d, K, kpr)
		if err != nil {
			return learner.Descriptor{}, fmt.Errorf("fedgsp: descriptors: %w", err)
		}
		for k := 0; k < K; k++ {
			for a := 0; a < kpr; a++ {
				put(row(fam, k*kpr+a), perOrder[k][a])
				put(row(2+fam, a*K+k), whole[a][k*d:(k+1)*d])
			}
		}
	}
	return desc, nil
}

// familyDirections returns the kpr principal directions of each n×d block
// of cat (per order) and of the whole n×K·d matrix. When n < d the Gram
// matrices of the blocks sum to the Gram matrix of the whole (centring is
// per column), so the whole costs one more eigendecomposition only.
func familyDirections(cat *mat.Dense, n, d, K, kpr int) (perOrder [][][]float64, whole [][]float64, err error) {
	if n < 2 { // no variance: every direction is padding
		perOrder = make([][][]float64, K)
		for k := range perOrder {
			perOrder[k] = zeroRows(kpr, d)
		}
		return perOrder, zeroRows(kpr, K*d), nil
	}
	centre(cat)
	var gSum *mat.SymDense
	if n < d {
		gSum = mat.NewSymDense(n, nil)
	}
	for k := 0; k < K; k++ {
		block := cat.Slice(0, n, k*d, (k+1)*d).(*mat.Dense)
		var dirs [][]float64
		if gSum != nil {
			g := mat.NewSymDense(n, nil)
			g.SymOuterK(1, block)
			gSum.AddSym(gSum, g)
			dirs, err = principalGram(block, g, kpr)
		} else {
			dirs, err = principal(block, kpr)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("order %d: %w", k+1, err)
		}
		perOrder = append(perOrder, dirs)
	}
	if gSum != nil {
		whole, err = principalGram(cat, gSum, kpr)
	} else {
		whole, err = principal(cat, kpr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("concatenation: %w", err)
	}
	return perOrder, whole, nil
}

func zeroRows(r, c int) [][]float64 {
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
	}
	return out
}

func put(dst []float32, src []float64) {
	for i, v := range src {
		dst[i] = float32(v)
	}
}
