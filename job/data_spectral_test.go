package job

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpectralEig solves the tiny dataset's lowest eigenpairs and refuses
// the specs it cannot solve.
func TestSpectralEig(t *testing.T) {
	tiny := filepath.Join("..", "graph", "testdata", "tsv", "tiny")
	for _, tc := range []struct {
		name string
		edit func(*SpectralEigSpec)
		err  string
	}{
		{"solves", func(s *SpectralEigSpec) { s.Dataset, s.Phi = tiny, 2 }, ""},
		{"no graph", func(s *SpectralEigSpec) { s.Phi = 2 }, "exactly one"},
		{"two graphs", func(s *SpectralEigSpec) { s.Dataset, s.LightGCN, s.Phi = tiny, tiny, 2 }, "exactly one"},
		{"no phi", func(s *SpectralEigSpec) { s.Dataset = tiny }, "--phi 0"},
		{"zero tol", func(s *SpectralEigSpec) { s.Dataset, s.Phi, s.Options.Tol = tiny, 2, 0 }, "--tol 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSpectralEigSpec()
			tc.edit(&s)
			r, err := SpectralEig(context.Background(), s)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Dataset != "tiny" || r.Metrics["phi"] != 2 || r.Metrics["max_residual"].(float64) > 1e-8 {
				t.Errorf("%+v", r)
			}
		})
	}
}
