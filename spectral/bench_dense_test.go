package spectral

import (
	"fmt"
	"testing"
)

// BenchmarkDenseVsLanczos times the two ways LowestEigenpairs solves a
// bipartite component, on heavy-tailed user–item graphs whose fold (the
// operator both solve) has the given dimension, for Φ = 128: EigenSym on
// the materialized fold against block Lanczos on it. DefaultDenseMax sits
// where dense stops being cheap. Run it with
//
//	go test ./spectral -run XXX -bench DenseVsLanczos -benchtime 1x
func BenchmarkDenseVsLanczos(b *testing.B) {
	for _, users := range []int{250, 500, 1000, 1500, 2000} {
		r := plGraph(plShape{users: users, items: 5 * users, meanDeg: 30, userTail: 1.8, itemZipf: 0.8}, uint64(users))
		l, err := NewBipartiteLaplacian(r)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range []struct {
			name     string
			denseMax int
		}{{"dense", 1 << 30}, {"lanczos", -1}} {
			b.Run(fmt.Sprintf("fold=%d/%s", users, m.name), func(b *testing.B) {
				var e *Eigenpairs
				for b.Loop() {
					if e, err = LowestEigenpairs(l, 128, EigenOptions{Seed: 1, DenseMax: m.denseMax, DenseLimit: -1}); err != nil {
						b.Fatal(err)
					}
				}
				if m.denseMax > 0 && e.Stats.Dense == 0 || m.denseMax < 0 && e.Stats.Lanczos == 0 {
					b.Fatalf("%s: %+v", m.name, e.Stats)
				}
				r, err := MaxResidual(l, e)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r*1e10, "max-residual/1e-10")
			})
		}
	}
}
