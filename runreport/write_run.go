package runreport

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"graphfed/privacy"
)

// RunFiles is what a finished simulation leaves in its run directory.
type RunFiles struct {
	Summary Summary
	// ScoreColumn names rounds.csv's score column (test_acc,
	// val_f1_illicit, recall_at_20).
	ScoreColumn string
	Rounds      []Round
	// PerRound is every client's reported scores by round, and
	// ClientScore one client's score in ScoreColumn from them (NaN where
	// it reported none); without ClientScore there is no clients.csv.
	PerRound    map[uint64]map[string]map[string]float64
	ClientScore func(map[string]float64) float64
	Ledger      []privacy.Entry
}

// WriteRun writes a run directory: summary.json (with the binary's build
// and the privacy settings the claims are judged against), rounds.csv,
// clients.csv, the audit of the ledger (audit.txt, epsilon.png) when the
// run released anything, and report.html, built from those files as
// `graphfed report DIR` rebuilds it (WriteDir).
func WriteRun(ctx context.Context, dir string, r RunFiles) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	s := r.Summary
	s.Build = BuildInfo()
	if _, ok := s.Metrics["peak_rss_mib"]; !ok {
		if m := PeakRSSMiB(); !math.IsNaN(m) {
			s.Metrics["peak_rss_mib"] = m
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("run dir: summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), b, 0o644); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	if err := writeFileWith(filepath.Join(dir, RoundsFile), func(f *os.File) error {
		return WriteRounds(f, r.ScoreColumn, r.Rounds)
	}); err != nil {
		return err
	}
	if r.ClientScore != nil {
		if err := writeFileWith(filepath.Join(dir, ClientsFile), func(f *os.File) error {
			return WriteClientRounds(f, clientRounds(r.PerRound, r.ClientScore))
		}); err != nil {
			return err
		}
	}
	if len(r.Ledger) > 0 && s.PrivacySettings != nil {
		if err := writeAudit(dir, r.Ledger, *s.PrivacySettings); err != nil {
			return err
		}
	}
	return WriteDir(ctx, dir)
}

// clientRounds is every client's score per round, in round and client
// order.
func clientRounds(per map[uint64]map[string]map[string]float64, score func(map[string]float64) float64) []ClientScore {
	rounds := make([]uint64, 0, len(per))
	for r := range per {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	var out []ClientScore
	for _, r := range rounds {
		ids := make([]string, 0, len(per[r]))
		for id := range per[r] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			out = append(out, ClientScore{Round: r, Client: id, Score: score(per[r][id])})
		}
	}
	return out
}

// writeAudit writes audit.txt (the claims per channel, then the audit)
// and epsilon.png.
func writeAudit(dir string, ledger []privacy.Entry, cp ClaimParams) error {
	kind, err := privacy.ParseAccountantKind(cp.Accountant)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	audit, err := privacy.Audit(ledger, privacy.AuditOptions{Kind: kind, Delta: cp.Delta})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	claims := Claims(audit, cp)
	if err := writeFileWith(filepath.Join(dir, "audit.txt"), func(f *os.File) error {
		if err := WriteClaims(f, claims, audit.Seeded); err != nil {
			return err
		}
		return audit.WriteText(f)
	}); err != nil {
		return err
	}
	return WriteEpsilonPNG(audit, claims, cp.NodeTarget, filepath.Join(dir, "epsilon.png"))
}

// writeFileWith creates path and writes it with fill.
func writeFileWith(path string, fill func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("run dir: %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	return nil
}

// PeakRSSMiB is the process's peak resident set (getrusage), NaN when
// unknown.
func PeakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) / 1024 // kilobytes on Linux
}
