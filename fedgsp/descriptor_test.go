package fedgsp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// refDirections is the reference PCA: the top kpr right singular vectors of
// the column-centred matrix by gonum's SVD (the authors' pca_torch route).
func refDirections(t *testing.T, m []float64, n, cols, kpr int) [][]float64 {
	t.Helper()
	c := mat.NewDense(n, cols, append([]float64(nil), m...))
	centre(c)
	var svd mat.SVD
	if !svd.Factorize(c, mat.SVDThin) {
		t.Fatal("svd failed")
	}
	var v mat.Dense
	svd.VTo(&v)
	out := make([][]float64, kpr)
	for a := range out {
		out[a] = make([]float64, cols)
		mat.Col(out[a], a, &v)
	}
	return out
}

// TestDescriptorLayoutAndOrthonormality builds the bases' concatenations
// independently, runs the reference SVD on each HM_k, U_k and the two
// concatenations, and checks that every block row of the descriptor is the
// reference direction up to sign (|cos| = 1: the sign is arbitrary), that
// block rows are orthonormal where they should be, and that the layout is
// the contract's (A, B per order then direction; C, D per direction then
// order, chunks of one unit vector).
func TestDescriptorLayoutAndOrthonormality(t *testing.T) {
	cases := []struct {
		name           string
		n, d, K, kpr   int
		gramRoute      bool // n < d: the n×n Gram route
		expectPadRows  bool
		sparseFeatures bool
	}{
		{"covariance route", 40, 5, 3, 2, false, false, false},
		{"gram route", 12, 20, 2, 3, true, false, true},
		{"rank-deficient client pads", 3, 6, 2, 3, true, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := newRNG(5)
			ds := randomDataset(t, rng, c.n, c.d, 2, c.n, c.sparseFeatures)
			p := newPropagator(ds.Adj)
			x := denseFeatures(ds.Features)
			theta := Angle(0.4)
			desc, err := computeDescriptors(p, x, c.d, c.K, theta, c.kpr)
			if err != nil {
				t.Fatal(err)
			}
			if desc.Orders != c.K || desc.Principal != c.kpr || desc.Dim != c.d ||
				len(desc.Rows) != DescriptorRows(c.K, c.kpr)*c.d {
				t.Fatalf("shape %d/%d/%d with %d values", desc.Orders, desc.Principal, desc.Dim, len(desc.Rows))
			}
			row := func(block, r int) []float64 {
				out := make([]float64, c.d)
				off := (block*c.K*c.kpr + r) * c.d
				for i := range out {
					out[i] = float64(desc.Rows[off+i])
				}
				return out
			}
			// Reference: the families as n×d blocks and n×K·d concatenations.
			hmCat := make([]float64, c.n*c.K*c.d)
			uCat := make([]float64, c.n*c.K*c.d)
			var hms, us [][]float64
			walkBases(p, x, c.d, c.K, theta, func(k int, hm, u []float64) {
				hms = append(hms, append([]float64(nil), hm...))
				us = append(us, append([]float64(nil), u...))
				for i := 0; i < c.n; i++ {
					copy(hmCat[i*c.K*c.d+(k-1)*c.d:], hm[i*c.d:(i+1)*c.d])
					copy(uCat[i*c.K*c.d+(k-1)*c.d:], u[i*c.d:(i+1)*c.d])
				}
			})
			rank := min(c.n-1, c.d) // centring removes one dimension
			pads := 0
			sameDir := func(got, want []float64, what string) {
				t.Helper()
				if norm(got) == 0 {
					pads++
					return
				}
				if cos := math.Abs(dot(got, want)); !approx(cos, 1, 1e-4) || !approx(norm(got), 1, 1e-5) {
					t.Errorf("%s: |cos| with reference %v, norm %v", what, cos, norm(got))
				}
			}
			for fam, per := range [][][]float64{hms, us} {
				for k := 0; k < c.K; k++ {
					ref := refDirections(t, per[k], c.n, c.d, c.kpr)
					for a := 0; a < c.kpr; a++ {
						got := row(fam, k*c.kpr+a)
						if a >= rank {
							if norm(got) != 0 {
								t.Errorf("block %d order %d direction %d: beyond rank %d but not zero", fam, k+1, a, rank)
							}
							pads++
						}
						if a < rank {
							sameDir(got, ref[a], "per-order direction")
						}
						for b := 0; b < a; b++ { // orthogonal within an order
							if o := dot(got, row(fam, k*c.kpr+b)); math.Abs(o) > 1e-4 {
								t.Errorf("block %d order %d: directions %d,%d overlap %v", fam, k+1, b, a, o)
							}
						}
					}
				}
				cat := [][]float64{hmCat, uCat}[fam]
				ref := refDirections(t, cat, c.n, c.K*c.d, c.kpr)
				whole := make([][]float64, c.kpr)
				for a := 0; a < c.kpr; a++ {
					for k := 0; k < c.K; k++ {
						whole[a] = append(whole[a], row(2+fam, a*c.K+k)...)
					}
					if a < min(c.n-1, c.K*c.d) {
						sameDir(whole[a], ref[a], "concatenation direction")
					} else if norm(whole[a]) != 0 {
						t.Errorf("block %d direction %d: beyond rank but not zero", 2+fam, a)
					}
					for b := 0; b < a; b++ {
						if o := dot(whole[a], whole[b]); math.Abs(o) > 1e-4 {
							t.Errorf("block %d: concatenated directions %d,%d overlap %v", 2+fam, b, a, o)
						}
					}
				}
			}
			if c.expectPadRows && pads == 0 {
				t.Error("a client with fewer nodes than directions sent no zero rows")
			}
			if !c.expectPadRows && pads != 0 {
				t.Errorf("%d zero rows from a full-rank client", pads)
			}
			for i := 0; i < DescriptorRows(c.K, c.kpr); i++ {
				if nr := norm(row(i/(c.K*c.kpr), i%(c.K*c.kpr))); i < 2*c.K*c.kpr && nr > 1+1e-5 {
					t.Errorf("row %d norm %v > 1", i, nr)
				}
			}
		})
	}
}

// TestDescriptorsReleasedOnce: offered until released, never after, and the
// sources are dropped.
func TestDescriptorsReleasedOnce(t *testing.T) {
	rng := newRNG(8)
	ds := randomDataset(t, rng, 30, 7, 3, 30, false)
	cfg := smallConfig()
	l, err := NewLearner(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := l.Descriptors()
	if !ok || len(a.Rows) != DescriptorRows(cfg.Orders, cfg.Principal)*7 {
		t.Fatalf("first offer: ok=%v, %d values", ok, len(a.Rows))
	}
	b, ok := l.Descriptors()
	if !ok || !equalF32(a.Rows, b.Rows) {
		t.Fatal("second offer before release differs")
	}
	b.Rows[0] = 42 // a copy: the learner's cache is unaffected
	if c, _ := l.Descriptors(); c.Rows[0] == 42 {
		t.Fatal("Descriptors returned the learner's own slice")
	}
	l.DescriptorsReleased()
	if _, ok := l.Descriptors(); ok {
		t.Fatal("descriptors offered again after release")
	}
	if l.x != nil {
		t.Error("features kept after the release")
	}
	l.Train(2) // training needs nothing that was dropped
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
