package runreport

import (
	"encoding/json"
	"fmt"
	"io"
)

// Print writes s the way every graphfed command ends (DESIGN.md, CLI
// contract): one JSON line when asJSON, so that it is the last line a
// caller parses, and the short human summary otherwise.
func (s Summary) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		return s.WriteJSONLine(w)
	}
	return s.WriteText(w)
}

// WriteJSONLine writes s as one line of JSON. Metrics is always an object,
// {} when the command measured nothing, since callers index into it.
func (s Summary) WriteJSONLine(w io.Writer) error {
	if s.Metrics == nil {
		s.Metrics = map[string]any{}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// WriteText writes the human summary: the command and its time, then one
// line per metric, the traffic and the privacy figures.
func (s Summary) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s done in %.2fs\n", s.Command, s.Seconds)
	for k, v := range s.Metrics {
		fmt.Fprintf(w, "  %-18s %v\n", k, v)
	}
	if s.Comm != nil {
		fmt.Fprintf(w, "  %-18s %d bytes in %d messages\n", "comm", s.Comm.Bytes, s.Comm.Messages)
	}
	for k, v := range s.Privacy {
		fmt.Fprintf(w, "  %-18s %v\n", "privacy."+k, v)
	}
	return nil
}
