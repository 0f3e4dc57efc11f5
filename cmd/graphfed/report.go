package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"graphfed/runreport"
)

// Report is the JSON object of the CLI contract (DESIGN.md, CLI
// contract), a run directory's summary.json: one type with the report
// reader (runreport).
type Report = runreport.Summary

// CommReport counts what went over the wire.
type CommReport = runreport.Comm

// humanOut is where human-readable output goes: stderr under --json so that
// stdout's last line is the JSON object, stdout otherwise.
func (g *globalFlags) humanOut() io.Writer {
	if g.json {
		return os.Stderr
	}
	return os.Stdout
}

// logger builds the structured logger for a command; logs always go to stderr.
func (g *globalFlags) logger() zerolog.Logger {
	lvl, err := zerolog.ParseLevel(g.logLevel)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	w := zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly, NoColor: !isatty.IsTerminal(os.Stderr.Fd())}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// emit writes the report: as the last JSON line on stdout under --json, or
// as a short human summary otherwise.
func (g *globalFlags) emit(r Report, start time.Time) error {
	r.Seconds = time.Since(start).Seconds()
	if r.Metrics == nil {
		r.Metrics = map[string]any{}
	}
	if g.json {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		_, err = fmt.Fprintln(os.Stdout, string(b))
		return err
	}
	fmt.Fprintf(os.Stdout, "%s done in %.2fs\n", r.Command, r.Seconds)
	for k, v := range r.Metrics {
		fmt.Fprintf(os.Stdout, "  %-18s %v\n", k, v)
	}
	if r.Comm != nil {
		fmt.Fprintf(os.Stdout, "  %-18s %d bytes in %d messages\n", "comm", r.Comm.Bytes, r.Comm.Messages)
	}
	for k, v := range r.Privacy {
		fmt.Fprintf(os.Stdout, "  %-18s %v\n", "privacy."+k, v)
	}
	return nil
}
