package main

import (
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
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
		got, err := parseBytes(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("parseBytes(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if got := formatBytes(5 << 29); got != "2.5GiB" {
		t.Errorf("formatBytes(2.5 GiB) = %q", got)
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"2.5GiB", "3000MB", "off", "1e9", "-3", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseBytes(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseBytes(%q) = %d, negative", s, n)
		}
		if back, err := parseBytes(strings.TrimSpace(formatBytes(n))); n >= 1<<10 && (err != nil || back <= 0) {
			t.Fatalf("formatBytes(%d) = %q does not parse back (%v)", n, formatBytes(n), err)
		}
	})
}

func TestSimMemoryLimitFor(t *testing.T) {
	for _, tc := range []struct {
		parties int
		want    int64
	}{
		{0, simMemoryLimit},
		{8, simMemoryLimit + 8*simPartyMemory},
		{1000, simMemoryLimit + 1000*simPartyMemory},
		{10000, simMostMemoryLimit},
		{1 << 20, simMostMemoryLimit},
	} {
		if got := simMemoryLimitFor(tc.parties); got != tc.want {
			t.Errorf("simMemoryLimitFor(%d) = %s, want %s", tc.parties, formatBytes(got), formatBytes(tc.want))
		}
	}
}
