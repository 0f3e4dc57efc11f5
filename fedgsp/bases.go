package fedgsp

import "math"

// walkBases computes, for k = 1..K, the homophily basis HM_k = P^k X and the
// heterophily basis U_k of the appendix's Algorithm 1, and calls fn with
// both (n×d row-major, valid only during the call; fn must not keep them).
// x is the n×d feature matrix (already row-normalised where that applies).
//
// Algorithm 1 runs per feature column (summary decision 1: the authors' code
// treats the d columns as independent signals), so every inner product and
// norm below is a vector of d per-column values:
//
//	U_0 = V_0 = x/‖x‖, V_{-1} = 0, S_0 = U_0
//	V_k = P V_{k-1};  V_k −= ⟨V_k,V_{k-1}⟩V_{k-1} + ⟨V_k,V_{k-2}⟩V_{k-2};  V_k /= ‖V_k‖
//	T_k = sqrt((⟨S_{k-1},U_{k-1}⟩/(k cosθ))² − ((k−1)cosθ+1)/k)   (negative or NaN → 0)
//	U_k = (S_{k-1}/k + T_k V_k)/‖·‖;  S_k = S_{k-1} + U_k
//
// T_k uses ⟨S_{k-1}, U_{k-1}⟩ as Alg. 1 writes it (decision 2), not the
// previous mixed input as UniFilter's code does. Because V_k ⊥ U_0..U_{k-1}
// and ⟨S_{k-1}, U_j⟩ = 1 + (k−1)cosθ for every j < k, this T_k makes
// cos∠(U_k, U_j) = cosθ for every earlier j: any two bases meet at θ.
//
// Two numerical guards, both no-ops in exact arithmetic: after the
// three-term recurrence V_k is re-orthogonalised against every earlier V_j
// (Lanczos loses orthogonality in floating point, and the angle property
// rests on it), and a column whose Krylov space is exhausted (V_k vanishes
// relative to P V_{k-1}: the signal lives on a component smaller than k+1
// nodes, or is an eigenvector) gets V_k = 0, so U_k = S_{k-1}/k normalised
// instead of a normalised rounding error. When cosθ ≈ 0 (ĥ = 0, θ = π/2)
// T_k → ∞ and U_k is the limit V_k.
func walkBases(p propagator, x []float64, d, K int, theta float64, fn func(k int, hm, u []float64)) {
	n := p.n
	nd := n * d
	hmPrev := append([]float64(nil), x...)
	hm := make([]float64, nd)
	V := make([][]float64, K+1)
	V[0] = append([]float64(nil), x...)
	norm := colNorms(V[0], d)
	scaleCols(V[0], d, inverse(norm))
	S := append([]float64(nil), V[0]...)
	uPrev := append([]float64(nil), V[0]...)
	u := make([]float64, nd)
	c := math.Cos(theta)
	coefS := make([]float64, d)
	coefV := make([]float64, d)
	for k := 1; k <= K; k++ {
		p.apply(hm, hmPrev, d)

		v := make([]float64, nd)
		p.apply(v, V[k-1], d)
		pre := colNorms(v, d)
		a := colDots(v, V[k-1], d)
		var b []float64
		if k >= 2 {
			b = colDots(v, V[k-2], d)
		}
		subCols(v, V[k-1], a, d)
		if b != nil {
			subCols(v, V[k-2], b, d)
		}
		for j := 0; j < k; j++ { // re-orthogonalisation (guard 1)
			subCols(v, V[j], colDots(v, V[j], d), d)
		}
		nv := colNorms(v, d)
		for j := range nv {
			if nv[j] <= 1e-9*pre[j] || nv[j] < 1e-300 { // guard 2: breakdown
				nv[j] = 0
			}
		}
		scaleCols(v, d, inverse(nv))
		V[k] = v

		su := colDots(S, uPrev, d)
		kf := float64(k)
		for j := range coefS {
			if c < 1e-12 {
				coefS[j], coefV[j] = 0, 1
				continue
			}
			t2 := math.Pow(su[j]/(kf*c), 2) - ((kf-1)*c+1)/kf
			t := math.Sqrt(t2)
			if math.IsNaN(t) || math.IsInf(t, 0) {
				t = 0
			}
			coefS[j], coefV[j] = 1/kf, t
		}
		for i := 0; i < n; i++ {
			row := i * d
			for j := 0; j < d; j++ {
				u[row+j] = coefS[j]*S[row+j] + coefV[j]*v[row+j]
			}
		}
		scaleCols(u, d, inverse(colNorms(u, d)))
		for i, x := range u {
			S[i] += x
		}
		copy(uPrev, u)
		fn(k, hm, u)
		hm, hmPrev = hmPrev, hm
	}
}

// colDots returns the d per-column inner products of two n×d matrices.
func colDots(a, b []float64, d int) []float64 {
	out := make([]float64, d)
	for i := 0; i+d <= len(a); i += d {
		ra, rb := a[i:i+d], b[i:i+d]
		for j, x := range ra {
			out[j] += x * rb[j]
		}
	}
	return out
}

// colNorms returns the d per-column Euclidean norms of an n×d matrix.
func colNorms(a []float64, d int) []float64 {
	out := colDots(a, a, d)
	for j, s := range out {
		out[j] = math.Sqrt(s)
	}
	return out
}

// inverse maps each value to its reciprocal, and zero to zero (a zero
// column stays zero instead of becoming NaN).
func inverse(x []float64) []float64 {
	out := make([]float64, len(x))
	for j, v := range x {
		if v != 0 {
			out[j] = 1 / v
		}
	}
	return out
}

// scaleCols multiplies column j of the n×d matrix a by s[j].
func scaleCols(a []float64, d int, s []float64) {
	for i := 0; i+d <= len(a); i += d {
		r := a[i : i+d]
		for j := range r {
			r[j] *= s[j]
		}
	}
}

// subCols sets column j of a to a_j − s[j]·b_j.
func subCols(a, b []float64, s []float64, d int) {
	for i := 0; i+d <= len(a); i += d {
		ra, rb := a[i:i+d], b[i:i+d]
		for j := range ra {
			ra[j] -= s[j] * rb[j]
		}
	}
}
