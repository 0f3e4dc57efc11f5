package memlimit

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "2.5GiB", want: 5 << 29},
		{in: "3000MB", want: 3e9},
		{in: "512 mib", want: 512 << 20},
		{in: "1e9", want: 1e9},
		{in: "1024", want: 1024},
		{in: "7B", want: 7},
		{in: "0", want: 0},
		{in: "off", want: 0},
		{in: "1TiB", want: 1 << 40},
		{in: "", bad: true},
		{in: "GiB", bad: true},
		{in: "-1GiB", bad: true},
		{in: "2.5 parsecs", bad: true},
		{in: "1e30GiB", bad: true},
	} {
		got, err := Parse(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("Parse(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if got := Format(5 << 29); got != "2.5GiB" {
		t.Errorf("Format(2.5 GiB) = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2.5GiB", "3000MB", "off", "1e9", "-3", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("Parse(%q) = %d, negative", s, n)
		}
		if back, err := Parse(strings.TrimSpace(Format(n))); n >= 1<<10 && (err != nil || back <= 0) {
			t.Fatalf("Format(%d) = %q does not parse back (%v)", n, Format(n), err)
		}
	})
}

func TestSimFor(t *testing.T) {
	for _, tc := range []struct {
		parties int
		want    int64
	}{
		{0, Sim},
		{8, Sim + 8*PerParty},
		{1000, Sim + 1000*PerParty},
		{10000, SimMost},
		{1 << 20, SimMost},
	} {
		if got := SimFor(tc.parties); got != tc.want {
			t.Errorf("SimFor(%d) = %s, want %s", tc.parties, Format(got), Format(tc.want))
		}
	}
}

func TestApply(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name    string
		flag    *string
		def     int64
		want    Limit
		wantErr bool
	}{
		{"the flag wins", str("1GiB"), Sim, Limit{From: "--memory-limit", Bytes: 1 << 30}, false},
		{"the flag turns it off", str("off"), Sim, Limit{From: "--memory-limit"}, false},
		{"no flag: the default", nil, Sim, Limit{From: "default", Bytes: Sim}, false},
		{"no flag, no default: none", nil, 0, Limit{From: "default"}, false},
		{"a bad flag", str("2 parsecs"), Sim, Limit{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Apply(tc.flag, tc.def)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("Apply = %+v, %v; want %+v (error %v)", got, err, tc.want, tc.wantErr)
			}
			if err != nil {
				return
			}
			inForce := debug.SetMemoryLimit(-1)
			if want := tc.want.Bytes; want == 0 && inForce != math.MaxInt64 || want != 0 && inForce != want {
				t.Fatalf("limit in force %d, want %d", inForce, want)
			}
		})
	}
}
