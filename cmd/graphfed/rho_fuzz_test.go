package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"graphfed/privacy"
)

// Fuzz target for what audit reads besides ledgers: its --rho list. Run
// it with
//
//	go test ./cmd/graphfed -run XXX -fuzz '^FuzzParseRho$' -fuzztime 10m -parallel 1

// FuzzParseRho: audit's --rho parser never panics; what it accepts is
// written back ("q=rho,...", shortest floats) to a list it parses the same;
// and the audit either refuses the distances as ErrInvalid or reports a
// finite, non-negative ε at each of them.
func FuzzParseRho(f *testing.F) {
	for _, s := range []string{"", "  ", "50=0.0533,90=0.1466", "50=0.0533, 75=0.1845 ,90=0.1466,95=0.2793,99=0.8913",
		"100=2", "0=0.1", "50=-0", "50=NaN", "50=inf", "1e2=1e-3", "50=0.1,", "50", "50=0.1=0.2", "0x1p-2=0x1p-3", "5_0=1"} {
		f.Add(s)
	}
	golden, err := os.ReadFile(filepath.Join("..", "..", "privacy", "testdata", "ledger_golden.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	ledger := filepath.Join(f.TempDir(), "ledger.jsonl")
	if err := os.WriteFile(ledger, golden, 0o600); err != nil {
		f.Fatal(err)
	}
	r, err := privacy.OpenFileLedgerReadOnly(ledger)
	if err != nil {
		f.Fatal(err)
	}
	entries, err := r.Entries(f.Context())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rho, err := parseRho(s)
		if err != nil {
			return
		}
		if strings.TrimSpace(s) == "" {
			if rho != nil {
				t.Fatalf("%q gave %v", s, rho)
			}
			return
		}
		if len(rho) != strings.Count(s, ",")+1 {
			t.Fatalf("%q gave %d distances", s, len(rho))
		}
		parts := make([]string, len(rho))
		for i, r := range rho {
			parts[i] = strconv.FormatFloat(r.Q, 'g', -1, 64) + "=" + strconv.FormatFloat(r.Rho, 'g', -1, 64)
		}
		canon := strings.Join(parts, ",")
		back, err := parseRho(canon)
		if err != nil || len(back) != len(rho) {
			t.Fatalf("%q written as %q does not parse back: %v", s, canon, err)
		}
		for i := range rho {
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
			}
			if !same(back[i].Q, rho[i].Q) || !same(back[i].Rho, rho[i].Rho) {
				t.Fatalf("%q: %v came back as %v", s, rho[i], back[i])
			}
		}
		rep, err := privacy.Audit(entries, privacy.AuditOptions{Delta: 1e-4, Rho: rho})
		if err != nil {
			if !errors.Is(err, privacy.ErrInvalid) {
				t.Fatalf("audit with %v failed without ErrInvalid: %v", rho, err)
			}
			return
		}
		if rep.RhoSource != "given" || len(rep.Percentiles) != len(rho) {
			t.Fatalf("audit with %d given distances reports %d from %q", len(rho), len(rep.Percentiles), rep.RhoSource)
		}
		for _, p := range rep.Percentiles {
			if !(p.Q > 0 && p.Q <= 100 && p.Rho >= 0 && p.Rho <= 2) {
				t.Fatalf("audit accepted distance %v at percentile %v", p.Rho, p.Q)
			}
			if math.IsNaN(p.WorstEpsilon) || p.WorstEpsilon < 0 || math.IsInf(p.WorstEpsilon, 0) ||
				math.IsNaN(p.MedianEpsilon) || p.MedianEpsilon < 0 || math.IsInf(p.MedianEpsilon, 0) {
				t.Fatalf("distance %v at %v: ε worst %v median %v", p.Rho, p.Q, p.WorstEpsilon, p.MedianEpsilon)
			}
		}
	})
}
