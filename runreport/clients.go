package runreport

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// ClientScore is one row of clients.csv: a client's score, in the run's
// metric, of the model at the start of a round (per-client quality per
// round; NaN where the client did not report).
type ClientScore struct {
	Round  uint64
	Client string
	Score  float64
}

var clientsHeader = []string{"round", "client", "score"}

// WriteClientRounds writes clients.csv.
func WriteClientRounds(w io.Writer, rows []ClientScore) error {
	cw := csv.NewWriter(w)
	cw.Write(clientsHeader)
	for _, r := range rows {
		cw.Write([]string{strconv.FormatUint(r.Round, 10), r.Client, strconv.FormatFloat(r.Score, 'f', 4, 64)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("runreport: write clients.csv: %w", err)
	}
	return nil
}

// DecodeClientRounds reads clients.csv.
func DecodeClientRounds(r io.Reader) ([]ClientScore, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(clientsHeader)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("runreport: clients.csv: header: %w", err)
	}
	for i, h := range head {
		if h != clientsHeader[i] {
			return nil, fmt.Errorf("runreport: clients.csv: column %d is %q, want %q", i+1, h, clientsHeader[i])
		}
	}
	var out []ClientScore
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("runreport: clients.csv: %w", err)
		}
		round, err := strconv.ParseUint(rec[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("runreport: clients.csv line %d: round: %w", line, err)
		}
		score, err := strconv.ParseFloat(rec[2], 64)
		if err != nil || math.IsInf(score, 0) {
			return nil, fmt.Errorf("runreport: clients.csv line %d: score %q is not a number", line, rec[2])
		}
		if rec[1] == "" {
			return nil, fmt.Errorf("runreport: clients.csv line %d: no client", line)
		}
		out = append(out, ClientScore{Round: round, Client: rec[1], Score: score})
	}
}
