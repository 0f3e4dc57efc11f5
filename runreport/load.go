package runreport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"graphfed/privacy"
)

// The files of a run directory that the report reads and writes.
const (
	SummaryFile = "summary.json"
	RoundsFile  = "rounds.csv"
	ClientsFile = "clients.csv"
	LedgerFile  = "ledger.jsonl"
	ReportFile  = "report.html"
)

// Run is a run directory as the report reads it.
type Run struct {
	Summary Summary
	Metric  string // the score column of rounds.csv
	Rounds  []Round
	Clients []ClientScore // nil without clients.csv
	// Audit is the ledger's audit (nil without a ledger), recomputed from
	// the ledger file alone as `graphfed audit` does, and Claims what it
	// lets the run state per channel.
	Audit  *privacy.Report
	Claims []Claim
	Params ClaimParams
}

// Load reads a run directory: summary.json and rounds.csv are required,
// clients.csv and ledger.jsonl are read when present.
func Load(ctx context.Context, dir string) (Run, error) {
	var run Run
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return run, fmt.Errorf("runreport: load %s: %w", dir, err)
	}
	if run.Summary, err = DecodeSummary(bytes.NewReader(b)); err != nil {
		return run, err
	}
	if b, err = os.ReadFile(filepath.Join(dir, RoundsFile)); err != nil {
		return run, fmt.Errorf("runreport: load %s: %w", dir, err)
	}
	if run.Metric, run.Rounds, err = DecodeRounds(bytes.NewReader(b)); err != nil {
		return run, err
	}
	switch b, err = os.ReadFile(filepath.Join(dir, ClientsFile)); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return run, fmt.Errorf("runreport: load %s: %w", dir, err)
	default:
		if run.Clients, err = DecodeClientRounds(bytes.NewReader(b)); err != nil {
			return run, err
		}
	}
	run.Params = paramsOf(run.Summary)
	path := filepath.Join(dir, LedgerFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return run, nil
	}
	rep, err := AuditFile(ctx, path, run.Params)
	if err != nil {
		return run, err
	}
	run.Audit, run.Claims = &rep, Claims(rep, run.Params)
	return run, nil
}

// AuditFile audits a ledger file as `graphfed audit --ledger` does.
func AuditFile(ctx context.Context, path string, p ClaimParams) (privacy.Report, error) {
	kind, err := privacy.ParseAccountantKind(p.Accountant)
	if err != nil {
		return privacy.Report{}, fmt.Errorf("runreport: audit %s: %w", path, err)
	}
	l, err := privacy.OpenFileLedgerReadOnly(path)
	if err != nil {
		return privacy.Report{}, fmt.Errorf("runreport: audit: %w", err)
	}
	rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{})
	if err != nil {
		return privacy.Report{}, fmt.Errorf("runreport: audit %s: %w", path, err)
	}
	rep, err := privacy.AuditReading(rd, privacy.AuditOptions{Kind: kind, Delta: p.Delta})
	if err != nil {
		return privacy.Report{}, fmt.Errorf("runreport: audit %s: %w", path, err)
	}
	return rep, nil
}

// paramsOf is the summary's privacy settings; a summary written before
// they were stored gives its accountant and δ, and no target.
func paramsOf(s Summary) ClaimParams {
	if s.PrivacySettings != nil {
		return *s.PrivacySettings
	}
	p := ClaimParams{Accountant: "rdp", Delta: 1e-4}
	if a, ok := s.Privacy["accountant"].(string); ok && a != "" {
		p.Accountant = a
	}
	if d, ok := number(s.Privacy["delta"]); ok && d > 0 && d < 1 {
		p.Delta = d
	}
	if t, ok := number(s.Privacy["target_epsilon"]); ok {
		p.NodeTarget = t
	}
	return p
}

// number reads a JSON number decoded with UseNumber (or a float).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	case interface{ Float64() (float64, error) }:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// WriteDir (re)builds dir's report.html from the files in dir.
func WriteDir(ctx context.Context, dir string) error {
	run, err := Load(ctx, dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := Write(&b, run); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReportFile), b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("runreport: %w", err)
	}
	return nil
}
