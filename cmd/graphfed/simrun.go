package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"graphfed/job"
	"graphfed/privacy"
	"graphfed/runreport"
)

// simRun is what a simulation leaves in its run directory.
type simRun struct {
	rep    Report
	rows   []roundRow
	metric string // the score column of rounds.csv (test_acc, val_f1_illicit)
	// clientScore is one client's score in metric from its reported
	// scores (NaN where it reported none).
	clientScore func(map[string]float64) float64
	res         job.SimResult
	priv        job.SimPrivacy
	start       time.Time // when the command started: the summary's seconds
}

// writeSimRun writes a run directory: summary.json (with the binary's
// build, the command's settings, the privacy settings and the traffic per
// channel), rounds.csv, clients.csv, the audit of the ledger (audit.txt,
// epsilon.png) when the run released anything, and report.html, built from
// those files as `graphfed report DIR` rebuilds it.
func writeSimRun(cmd *cobra.Command, dir string, r simRun) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	rep := r.rep
	if !r.start.IsZero() {
		rep.Seconds = time.Since(r.start).Seconds()
	}
	if r.res.Seconds > 0 {
		rep.Metrics["job_seconds"] = r.res.Seconds
	}
	rep.Build = runreport.BuildInfo()
	rep.Settings, rep.Changed = flagSettings(cmd.Flags())
	cp := claimParams(r.priv)
	rep.PrivacySettings = &cp
	if rep.Comm != nil && len(r.res.Traffic) > 0 {
		rep.Comm.Channels = map[string]runreport.Traffic{}
		for k, t := range r.res.Traffic {
			rep.Comm.Channels[string(k)] = runreport.Traffic{Messages: t.Messages, Bytes: t.Bytes}
		}
	}
	if _, ok := rep.Metrics["peak_rss_mib"]; !ok {
		if m := runreport.PeakRSSMiB(); !math.IsNaN(m) {
			rep.Metrics["peak_rss_mib"] = m
		}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("run dir: summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, runreport.SummaryFile), b, 0o644); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	rounds := make([]runreport.Round, len(r.rows))
	for i, row := range r.rows {
		rounds[i] = runreport.Round{Round: row.rc.Round, Reason: row.rc.Reason, In: row.rc.In, Late: row.rc.Late, Stale: row.rc.Stale,
			Seconds: row.rc.Duration.Seconds(), Score: row.acc, Bytes: row.prog.Bytes, Messages: row.prog.Messages,
			ClientEpsilon: row.prog.ClientEpsilon, NodeEpsilon: row.prog.NodeEpsilonP90}
	}
	if err := writeFileWith(filepath.Join(dir, runreport.RoundsFile), func(f *os.File) error {
		return runreport.WriteRounds(f, r.metric, rounds)
	}); err != nil {
		return err
	}
	if r.clientScore != nil {
		if err := writeFileWith(filepath.Join(dir, runreport.ClientsFile), func(f *os.File) error {
			return runreport.WriteClientRounds(f, clientRounds(r.res.Agg.PerRound, r.clientScore))
		}); err != nil {
			return err
		}
	}
	if len(r.res.Ledger) > 0 {
		if err := writeAudit(dir, r.res.Ledger, cp); err != nil {
			return err
		}
	}
	return runreport.WriteDir(cmd.Context(), dir)
}

// clientRounds is every client's score per round, in round and client
// order.
func clientRounds(per map[uint64]map[string]map[string]float64, score func(map[string]float64) float64) []runreport.ClientScore {
	rounds := make([]uint64, 0, len(per))
	for r := range per {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	var out []runreport.ClientScore
	for _, r := range rounds {
		ids := make([]string, 0, len(per[r]))
		for id := range per[r] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			out = append(out, runreport.ClientScore{Round: r, Client: id, Score: score(per[r][id])})
		}
	}
	return out
}

// writeAudit writes audit.txt (the claims per channel, then the audit)
// and epsilon.png.
func writeAudit(dir string, ledger []privacy.Entry, cp runreport.ClaimParams) error {
	kind, err := privacy.ParseAccountantKind(cp.Accountant)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	audit, err := privacy.Audit(ledger, privacy.AuditOptions{Kind: kind, Delta: cp.Delta})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	claims := runreport.Claims(audit, cp)
	if err := writeFileWith(filepath.Join(dir, "audit.txt"), func(f *os.File) error {
		if err := runreport.WriteClaims(f, claims, audit.Seeded); err != nil {
			return err
		}
		return audit.WriteText(f)
	}); err != nil {
		return err
	}
	return runreport.WriteEpsilonPNG(audit, claims, cp.NodeTarget, filepath.Join(dir, "epsilon.png"))
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

// flagSettings is every flag's value by name, and the names of those set.
func flagSettings(fs *pflag.FlagSet) (map[string]string, []string) {
	all := map[string]string{}
	var changed []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		all[f.Name] = f.Value.String()
		if f.Changed {
			changed = append(changed, f.Name)
		}
	})
	slices.Sort(changed)
	return all, changed
}

// setEffective records the value a command chose for a flag its operator
// left out (sim's local epochs under fedgsp or from the banks' data), so
// that the run's settings say what ran; the flag stays unchanged.
func setEffective(fs *pflag.FlagSet, name string, v int) {
	if f := fs.Lookup(name); f != nil {
		_ = f.Value.Set(strconv.Itoa(v))
	}
}
