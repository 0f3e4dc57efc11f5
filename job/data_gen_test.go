package job

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"graphfed/workload/rec"
)

// TestGenAMLRefused checks the specs refused before anything is written.
func TestGenAMLRefused(t *testing.T) {
	bad := -0.5
	for _, tc := range []struct {
		name string
		edit func(*GenAMLSpec)
		err  string
	}{
		{"size", func(s *GenAMLSpec) { s.Size = "huge" }, "unknown size"},
		{"one bank", func(s *GenAMLSpec) { s.Banks = 1 }, "banks"},
		{"cross-bank hop", func(s *GenAMLSpec) { s.CrossBankHop = &bad }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultGenAMLSpec()
			s.Out = t.TempDir()
			tc.edit(&s)
			_, err := GenAML(context.Background(), s)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
		})
	}
}

// TestGenRec writes a small dataset with shapes and reports it under its
// directory's name.
func TestGenRec(t *testing.T) {
	out := filepath.Join(t.TempDir(), "small")
	cfg := rec.DefaultGenConfig()
	cfg.Users, cfg.Items = 60, 40
	r, err := GenRec(context.Background(), GenRecSpec{Config: cfg, Shapes: "dup=2", Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dataset != "small" || r.Metrics["users"].(int) <= 60 || r.Metrics["train_file"] != filepath.Join(out, "train.txt") {
		t.Errorf("%+v", r)
	}
	for _, tc := range []struct {
		spec GenRecSpec
		err  string
	}{
		{GenRecSpec{Config: cfg}, "--out"},
		{GenRecSpec{Config: cfg, Out: out, Shapes: "blobs"}, "--shapes"},
	} {
		if _, err := GenRec(context.Background(), tc.spec); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: err %v, want %q", tc.spec, err, tc.err)
		}
	}
}
