package jobfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzParse: the decoder never panics, fails only with a positioned
// *Error, and what it accepts names a known command and applies to flags
// without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"run: sim\nscenario: aml\nseed: 1\n",
		"run: sim\nfanout: [3, 4]\nslow: {3: 5}\nclients:\n  - a\n  - b\n",
		"run: agent\nout: &a x\nscenario: *a\n",
		"run: sim\nseed: 1\nseed: 2\n",
		"run: sim\n---\nrun: agent\n",
		"- 1\n", "", "run:\n", "run: sim\nout: {a: [1]}\n", "? [a]\n: 1\n", "<<: {run: sim}\n",
	} {
		f.Add([]byte(s))
	}
	examples, _ := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*.yaml"))
	for _, p := range append(examples, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Parse("fuzz.yaml", data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.File != "fuzz.yaml" || pe.Line < 0 {
				t.Fatalf("error %T %v is not a positioned job-file error", err, err)
			}
			return
		}
		if !slices.Contains(Commands(), j.Run) {
			t.Fatalf("accepted run %q", j.Run)
		}
		for _, s := range j.Settings {
			if s.Key == RunKey || (s.Shape == Scalar && len(s.Values) != 1) {
				t.Fatalf("setting %+v", s)
			}
		}
		if err := j.Check(testFlags()); err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("apply error %T %v is not positioned", err, err)
			}
		}
	})
}
