package runreport

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Round is one row of rounds.csv: how a round closed, the score of the
// model it started from, and the run's traffic and privacy spending when
// it closed (cumulative).
type Round struct {
	Round         uint64
	Reason        string   // quorum, deadline, buffer, ...
	In            []string // clients whose updates were aggregated
	Late          []string // updates that arrived after the close
	Stale         []string // updates from an older round
	Seconds       float64  // round duration
	Score         float64  // the metric of the model at round start; NaN: not scored
	Bytes         int64    // published by every party so far
	Messages      int64
	ClientEpsilon float64 // worst client's model+grad ε so far
	NodeEpsilon   float64 // worst node's emb ε at its bank's p90 ρ so far
}

// roundsHeader is rounds.csv's header; the score column is named
// <metric>_start.
func roundsHeader(metric string) []string {
	return []string{"round", "reason", "in", "late", "stale", "seconds", metric + "_start", "bytes", "messages",
		"client_epsilon", "node_epsilon_worst_at_p90_rho"}
}

// WriteRounds writes rounds.csv; metric names the score column (test_acc,
// val_f1_illicit).
func WriteRounds(w io.Writer, metric string, rows []Round) error {
	cw := csv.NewWriter(w)
	cw.Write(roundsHeader(metric))
	for _, r := range rows {
		cw.Write([]string{
			strconv.FormatUint(r.Round, 10), r.Reason, strings.Join(r.In, " "), strings.Join(r.Late, " "),
			strings.Join(r.Stale, " "), strconv.FormatFloat(r.Seconds, 'f', 3, 64),
			strconv.FormatFloat(r.Score, 'f', 4, 64), strconv.FormatInt(r.Bytes, 10), strconv.FormatInt(r.Messages, 10),
			strconv.FormatFloat(r.ClientEpsilon, 'g', 6, 64), strconv.FormatFloat(r.NodeEpsilon, 'g', 6, 64),
		})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("runreport: write rounds.csv: %w", err)
	}
	return nil
}

// DecodeRounds reads rounds.csv: the rows and the score column's metric.
func DecodeRounds(r io.Reader) (metric string, rows []Round, err error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(roundsHeader(""))
	head, err := cr.Read()
	if err != nil {
		return "", nil, fmt.Errorf("runreport: rounds.csv: header: %w", err)
	}
	want := roundsHeader("")
	for i, h := range head {
		if i == 6 {
			m, ok := strings.CutSuffix(h, "_start")
			if !ok || m == "" {
				return "", nil, fmt.Errorf("runreport: rounds.csv: column 7 is %q, want <metric>_start", h)
			}
			metric = m
			continue
		}
		if h != want[i] {
			return "", nil, fmt.Errorf("runreport: rounds.csv: column %d is %q, want %q", i+1, h, want[i])
		}
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return metric, rows, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("runreport: rounds.csv: %w", err)
		}
		row, err := parseRound(rec)
		if err != nil {
			return "", nil, fmt.Errorf("runreport: rounds.csv line %d: %w", line, err)
		}
		rows = append(rows, row)
	}
}

func parseRound(rec []string) (Round, error) {
	var r Round
	var err error
	if r.Round, err = strconv.ParseUint(rec[0], 10, 64); err != nil {
		return r, fmt.Errorf("round: %w", err)
	}
	r.Reason = rec[1]
	r.In, r.Late, r.Stale = ids(rec[2]), ids(rec[3]), ids(rec[4])
	floats := []struct {
		dst  *float64
		col  int
		name string
	}{{&r.Seconds, 5, "seconds"}, {&r.Score, 6, "score"}, {&r.ClientEpsilon, 9, "client_epsilon"}, {&r.NodeEpsilon, 10, "node_epsilon"}}
	for _, f := range floats {
		if *f.dst, err = strconv.ParseFloat(rec[f.col], 64); err != nil {
			return r, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if r.Seconds < 0 || math.IsNaN(r.Seconds) || math.IsInf(r.Seconds, 0) {
		return r, fmt.Errorf("seconds %v: not a duration", r.Seconds)
	}
	if r.Bytes, err = strconv.ParseInt(rec[7], 10, 64); err != nil || r.Bytes < 0 {
		return r, fmt.Errorf("bytes %q: not a count", rec[7])
	}
	if r.Messages, err = strconv.ParseInt(rec[8], 10, 64); err != nil || r.Messages < 0 {
		return r, fmt.Errorf("messages %q: not a count", rec[8])
	}
	return r, nil
}

// ids splits a space-separated list; nil when empty.
func ids(s string) []string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil
	}
	return f
}
