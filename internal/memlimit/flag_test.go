package memlimit

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		def  int64
		why  string
		want string
	}{
		{0, "", ". Default: none"},
		{Sim, "the AML job fits", ". Default 2.75GiB: the AML job fits"},
	} {
		if got := Help(tc.def, tc.why); !strings.HasSuffix(got, tc.want) || !strings.Contains(got, "GOMEMLIMIT") {
			t.Errorf("Help(%d, %q) = %q, want it to end in %q", tc.def, tc.why, got, tc.want)
		}
	}
}

func TestFlagApply(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, tc := range []struct {
		name  string
		set   string // "": not given
		def   int64
		want  int64 // the runtime's limit after Apply
		error bool
	}{
		{name: "default", def: 1 << 30, want: 1 << 30},
		{name: "given", set: "512MiB", def: 1 << 30, want: 512 << 20},
		{name: "off", set: "off", def: 1 << 30, want: math.MaxInt64},
		{name: "bad", set: "2 parsecs", error: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Flag{Default: tc.def}
			if tc.set != "" {
				f.Set(tc.set)
			}
			if f.String() != tc.set || f.Type() != "string" {
				t.Errorf("String() = %q, Type() = %q", f.String(), f.Type())
			}
			err := f.Apply(zerolog.Nop())
			if (err != nil) != tc.error {
				t.Fatalf("Apply: %v", err)
			}
			if got := debug.SetMemoryLimit(-1); !tc.error && got != tc.want {
				t.Errorf("limit %d, want %d", got, tc.want)
			}
		})
	}
}
