package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// writeSimRun writes a run directory: summary.json and rounds.csv;
// metric names the per-round score column (test_acc, val_f1_illicit).
func writeSimRun(dir string, rep Report, rows []roundRow, metric string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("run dir: summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "rounds.csv"))
	if err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"round", "reason", "in", "late", "stale", "seconds", metric + "_start", "bytes", "messages", "client_epsilon", "node_epsilon_worst_at_p90_rho"})
	for _, r := range rows {
		w.Write([]string{
			strconv.FormatUint(r.rc.Round, 10), r.rc.Reason, strings.Join(r.rc.In, " "), strings.Join(r.rc.Late, " "),
			strings.Join(r.rc.Stale, " "), strconv.FormatFloat(r.rc.Duration.Seconds(), 'f', 3, 64),
			strconv.FormatFloat(r.acc, 'f', 4, 64), strconv.FormatInt(r.prog.Bytes, 10), strconv.FormatInt(r.prog.Messages, 10),
			strconv.FormatFloat(r.prog.ClientEpsilon, 'g', 6, 64), strconv.FormatFloat(r.prog.NodeEpsilonP90, 'g', 6, 64),
		})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("run dir: rounds.csv: %w", err)
	}
	return f.Close()
}
