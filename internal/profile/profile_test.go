package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProfilerWritesWhatIsNamed(t *testing.T) {
	cases := []struct {
		name      string
		cpu, heap bool
	}{
		{"none", false, false},
		{"cpu", true, false},
		{"heap", false, true},
		{"both", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := &Profiler{}
			if tc.cpu {
				p.CPU = filepath.Join(dir, "cpu.pprof")
			}
			if tc.heap {
				p.Heap = filepath.Join(dir, "heap.pprof")
			}
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second Stop is the command's way out
				if err := p.Stop(); err != nil {
					t.Fatal(err)
				}
			}
			for path, want := range map[string]bool{p.CPU: tc.cpu, p.Heap: tc.heap} {
				if path == "" {
					continue
				}
				st, err := os.Stat(path)
				if want && (err != nil || st.Size() == 0) {
					t.Errorf("%s: not written (%v)", path, err)
				}
			}
		})
	}
}

func TestProfilerNamesTheFlag(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "x.pprof")
	if err := (&Profiler{CPU: missing}).Start(); err == nil || !strings.HasPrefix(err.Error(), "--cpuprofile: ") {
		t.Errorf("cpu: %v", err)
	}
	if err := (&Profiler{Heap: missing}).Stop(); err == nil || !strings.HasPrefix(err.Error(), "--memprofile: ") {
		t.Errorf("heap: %v", err)
	}
}
