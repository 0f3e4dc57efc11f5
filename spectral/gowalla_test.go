package spectral

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"graphfed/graph"
)

// gowallaDir is the LightGCN Gowalla split in the shared data folder.
var gowallaDir = filepath.Join("..", "..", "shared", "datasets", "gowalla")

func loadGowalla(tb testing.TB) *Laplacian {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(gowallaDir, "train.txt")); err != nil {
		tb.Skipf("Gowalla not available at %s (the shared data folder is absent): %v", gowallaDir, err)
	}
	d, err := graph.LoadLightGCN(gowallaDir)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := NewBipartiteLaplacian(d.Train)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func TestGowallaLowest128(t *testing.T) {
	if testing.Short() {
		t.Skip("Gowalla eigenpairs take seconds; skipped under -short")
	}
	l := loadGowalla(t)
	start := time.Now()
	e, err := LowestEigenpairs(l, 128, EigenOptions{Seed: 1, Progress: func(p EigenProgress) {
		t.Logf("%6.2fs comp %d restart %d conv %d/%d matvecs %d", time.Since(start).Seconds(), p.Component, p.Restarts, p.Converged, p.Wanted, p.MatVecs)
	}})
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	r, err := MaxResidual(l, e)
	if err != nil {
		t.Fatal(err)
	}
	orth := Orthogonality(e)
	t.Logf("%v: λ %.6g..%.6g, max residual %.3g, orth %.3g, %+v", el, e.Values[0], e.Values[127], r, orth, e.Stats)
	if !(r <= 1e-8) {
		t.Errorf("max residual %g > 1e-8", r)
	}
	// Gowalla's training graph is connected: one zero eigenvalue, then a
	// gap (λ_2 = 0.0118 by the unfolded solver and by the fold alike).
	if e.Stats.Components != 1 || e.Values[0] != 0 || !(e.Values[1] > 0.01) {
		t.Errorf("components %d, λ_1 %v, λ_2 %v", e.Stats.Components, e.Values[0], e.Values[1])
	}
	if !(orth <= 1e-8) {
		t.Errorf("eigenvectors %g from orthonormal", orth)
	}
	// The unfolded operator, a different path through the solver, agrees
	// on the lowest 16 (all 128 agree to 3e-15, but take a minute).
	u, err := LowestEigenpairs(l, 16, EigenOptions{Seed: 2, NoFold: true})
	if err != nil {
		t.Fatal(err)
	}
	for q, v := range u.Values {
		if math.Abs(v-e.Values[q]) > 1e-9 {
			t.Errorf("λ_%d: %.15g folded, %.15g unfolded", q, e.Values[q], v)
		}
	}
}

// BenchmarkLanczosGowalla is the performance reference of DESIGN.md: the
// 128 lowest eigenpairs of Gowalla's normalized Laplacian (70,839 nodes,
// 1.62M stored entries), against SciPy's ARPACK at 18.2 s on the 2-core
// development machine. Run it with
//
//	go test ./spectral -run XXX -bench LanczosGowalla -benchtime 3x
func BenchmarkLanczosGowalla(b *testing.B) {
	l := loadGowalla(b)
	var e *Eigenpairs
	for b.Loop() {
		var err error
		if e, err = LowestEigenpairs(l, 128, EigenOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	r, err := MaxResidual(l, e)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r*1e10, "max-residual/1e-10")
	b.ReportMetric(float64(e.Stats.MatVecs), "matvecs")
	b.ReportMetric(float64(e.Stats.Restarts), "restarts")
}
