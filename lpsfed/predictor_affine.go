package lpsfed

import "graphfed/gnn"

// The predictor's pair loops for the default single affine map (hidden =
// 0, h1 = 1), which a Gowalla step runs over 80k pairs:
//
//	s_ui = b + (ua_u + vb_i) + Σ_c (z_uc·z_ic)·w_c
//
// They do what first/forward/backward do for h1 = 1, operation for
// operation in float32 (the sum over c in order, zero products skipped),
// so results are bit-for-bit those of the general path; they only drop
// its per-pair slices and inner loop over h1, interleave four pairs so
// that four independent sums hide the latency of one, and split the work
// across cores: the forward by pairs, the backward by columns c (every
// pair's contributions to a column of dz and of the W_c gradient are
// added in pair order whatever the split).

// pairsAhead is how many pairs ahead the loops prefetch rows: far enough
// for a memory access to complete, near enough for the lines to stay.
const pairsAhead = 16

// forwardAffine is forward for hidden = 0.
func (p *predictor) forwardAffine(z *gnn.Tensor, u, i []int32, s []float64) {
	d := p.d
	parallelFor(len(u), parts(len(u), 2*d), func(lo, hi int) {
		b := p.B1.W.Data[0]
		wc := p.W1.W.Data[2*d : 3*d]
		ua, vb := p.ua.Data, p.vb.Data
		k := lo
		lines := (d + 15) / 16
		for ; k+4 <= hi; k += 4 {
			for a := k + pairsAhead; a < min(k+pairsAhead+4, hi); a++ {
				prefetchLines(&z.Data[int(u[a])*d], lines)
				prefetchLines(&z.Data[int(i[a])*d], lines)
			}
			u0, u1, u2, u3 := int(u[k]), int(u[k+1]), int(u[k+2]), int(u[k+3])
			i0, i1, i2, i3 := int(i[k]), int(i[k+1]), int(i[k+2]), int(i[k+3])
			a0, a1, a2, a3 := b+(ua[u0]+vb[i0]), b+(ua[u1]+vb[i1]), b+(ua[u2]+vb[i2]), b+(ua[u3]+vb[i3])
			zu0, zi0 := z.Data[u0*d:u0*d+d], z.Data[i0*d:i0*d+d]
			zu1, zi1 := z.Data[u1*d:u1*d+d], z.Data[i1*d:i1*d+d]
			zu2, zi2 := z.Data[u2*d:u2*d+d], z.Data[i2*d:i2*d+d]
			zu3, zi3 := z.Data[u3*d:u3*d+d], z.Data[i3*d:i3*d+d]
			zu0, zi0, zu1, zi1 = zu0[:len(wc)], zi0[:len(wc)], zu1[:len(wc)], zi1[:len(wc)]
			zu2, zi2, zu3, zi3 = zu2[:len(wc)], zi2[:len(wc)], zu3[:len(wc)], zi3[:len(wc)]
			for c, w := range wc {
				if q := zu0[c] * zi0[c]; q != 0 {
					a0 += q * w
				}
				if q := zu1[c] * zi1[c]; q != 0 {
					a1 += q * w
				}
				if q := zu2[c] * zi2[c]; q != 0 {
					a2 += q * w
				}
				if q := zu3[c] * zi3[c]; q != 0 {
					a3 += q * w
				}
			}
			s[k], s[k+1], s[k+2], s[k+3] = float64(a0), float64(a1), float64(a2), float64(a3)
		}
		for ; k < hi; k++ {
			uk, ik := int(u[k]), int(i[k])
			a := b + (ua[uk] + vb[ik])
			zu, zi := z.Data[uk*d:uk*d+d], z.Data[ik*d:ik*d+d]
			zu, zi = zu[:len(wc)], zi[:len(wc)]
			for c, w := range wc {
				if q := zu[c] * zi[c]; q != 0 {
					a += q * w
				}
			}
			s[k] = float64(a)
		}
	})
}

// backwardAffine is the pair loop of backward for hidden = 0: it adds the
// pairs' gradients to B1, dua, dvb (serially, in the first chunk), W_c's
// gradient and dz (by columns).
func (p *predictor) backwardAffine(z *gnn.Tensor, u, i []int32, ds []float64, dz *gnn.Tensor) {
	d := p.d
	parallelCols(d, parts(len(u), 3*d), func(lo, hi int) {
		if lo == 0 {
			gb, du, dv := p.B1.G.Data, p.dua.Data, p.dvb.Data
			for k := range u {
				if g := float32(ds[k]); g != 0 {
					gb[0] += g
					du[u[k]] += g
					dv[i[k]] += g
				}
			}
		}
		n := hi - lo
		wc, gwc := p.W1.W.Data[2*d+lo:2*d+hi], p.W1.G.Data[2*d+lo:2*d+hi]
		// row returns columns [lo, hi) of row r of t.
		row := func(t *gnn.Tensor, r int32) []float32 { o := int(r)*d + lo; return t.Data[o : o+n] }
		// Pairs with a zero score gradient add nothing; the rest go four at
		// a time so that their rows load together. Within a column the four
		// pairs' additions stay in pair order (pairs may share a row: a
		// positive's negatives share its user).
		var ks [4]int
		nk := 0
		flush := func() {
			for _, k := range ks[:nk] {
				g := float32(ds[k])
				zu, zi, dzu, dzi := row(z, u[k]), row(z, i[k]), row(dz, u[k]), row(dz, i[k])
				for c, w := range wc {
					q := zu[c] * zi[c]
					var dq float32
					gwc[c] += q * g
					dq += w * g
					dzu[c] += dq * zi[c]
					dzi[c] += dq * zu[c]
				}
			}
			nk = 0
		}
		lines := (n + 15) / 16
		for k := range u {
			if a := k + pairsAhead; a < len(u) {
				prefetchLines(&z.Data[int(u[a])*d+lo], lines)
				prefetchLines(&z.Data[int(i[a])*d+lo], lines)
				prefetchLines(&dz.Data[int(u[a])*d+lo], lines)
				prefetchLines(&dz.Data[int(i[a])*d+lo], lines)
			}
			if float32(ds[k]) == 0 {
				continue
			}
			ks[nk] = k
			if nk++; nk < 4 {
				continue
			}
			k0, k1, k2, k3 := ks[0], ks[1], ks[2], ks[3]
			g0, g1, g2, g3 := float32(ds[k0]), float32(ds[k1]), float32(ds[k2]), float32(ds[k3])
			zu0, zi0, dzu0, dzi0 := row(z, u[k0]), row(z, i[k0]), row(dz, u[k0]), row(dz, i[k0])
			zu1, zi1, dzu1, dzi1 := row(z, u[k1]), row(z, i[k1]), row(dz, u[k1]), row(dz, i[k1])
			zu2, zi2, dzu2, dzi2 := row(z, u[k2]), row(z, i[k2]), row(dz, u[k2]), row(dz, i[k2])
			zu3, zi3, dzu3, dzi3 := row(z, u[k3]), row(z, i[k3]), row(dz, u[k3]), row(dz, i[k3])
			zu0, zi0, dzu0, dzi0 = zu0[:n], zi0[:n], dzu0[:n], dzi0[:n]
			zu1, zi1, dzu1, dzi1 = zu1[:n], zi1[:n], dzu1[:n], dzi1[:n]
			zu2, zi2, dzu2, dzi2 = zu2[:n], zi2[:n], dzu2[:n], dzi2[:n]
			zu3, zi3, dzu3, dzi3 = zu3[:n], zi3[:n], dzu3[:n], dzi3[:n]
			wc, gwc := wc[:n], gwc[:n]
			for c, w := range wc {
				var dq0, dq1, dq2, dq3 float32
				q := zu0[c] * zi0[c]
				gwc[c] += q * g0
				dq0 += w * g0
				dzu0[c] += dq0 * zi0[c]
				dzi0[c] += dq0 * zu0[c]
				q = zu1[c] * zi1[c]
				gwc[c] += q * g1
				dq1 += w * g1
				dzu1[c] += dq1 * zi1[c]
				dzi1[c] += dq1 * zu1[c]
				q = zu2[c] * zi2[c]
				gwc[c] += q * g2
				dq2 += w * g2
				dzu2[c] += dq2 * zi2[c]
				dzi2[c] += dq2 * zu2[c]
				q = zu3[c] * zi3[c]
				gwc[c] += q * g3
				dq3 += w * g3
				dzu3[c] += dq3 * zi3[c]
				dzi3[c] += dq3 * zu3[c]
			}
			nk = 0
		}
		flush()
	})
}

// backwardMapsAffine is backwardMaps for hidden = 0, where dua and dvb
// are columns (s×1) and the maps' products are rank one. It does what
// the four gnn products and their additions do, per element in the same
// order (the product sums over rows in row order, zero rows skipped;
// dz += dua·W_aᵀ, then += dvb·W_bᵀ), in one pass over dz by rows and one
// over z by columns instead of four passes through s×d workspaces.
func (p *predictor) backwardMapsAffine(z, dz *gnn.Tensor) {
	d := p.d
	wa, wb := p.W1.W.Data[:d], p.W1.W.Data[d:2*d]
	du, dv := p.dua.Data[:z.Rows], p.dvb.Data[:z.Rows]
	parallelCols(d, parts(z.Rows, d), func(lo, hi int) {
		n := hi - lo
		ta, tb := make([]float32, n), make([]float32, n)
		for r := range z.Rows {
			zr := z.Data[r*d+lo : r*d+hi]
			if g := du[r]; g != 0 {
				for c, v := range zr {
					ta[c] += v * g
				}
			}
			if g := dv[r]; g != 0 {
				for c, v := range zr {
					tb[c] += v * g
				}
			}
		}
		ga, gb := p.W1.G.Data[lo:hi], p.W1.G.Data[d+lo:d+hi]
		for c := range n {
			ga[c] += ta[c]
			gb[c] += tb[c]
		}
	})
	parallelFor(z.Rows, parts(z.Rows, 2*d), func(lo, hi int) {
		wa, wb := wa[:d], wb[:d]
		for r := lo; r < hi; r++ {
			row := dz.Data[r*d : r*d+d]
			a, b := du[r], dv[r]
			for c := range row {
				row[c] = (row[c] + a*wa[c]) + b*wb[c]
			}
		}
	})
}
