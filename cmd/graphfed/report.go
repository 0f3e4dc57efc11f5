package main

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"graphfed/internal/termprogress"
	"graphfed/runreport"
)

// Report is the JSON object of the CLI contract (DESIGN.md, CLI
// contract), a run directory's summary.json: one type with the report
// reader (runreport).
type Report = runreport.Summary

// cmdProgress draws the job library's stages as bars on stderr.
type cmdProgress = termprogress.Stderr

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
	if err != nil || g.logLevel == "" {
		lvl = zerolog.InfoLevel
	}
	w := zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly, NoColor: !isatty.IsTerminal(os.Stderr.Fd())}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// emit prints the command's report on stdout, timed from start.
func (g *globalFlags) emit(r Report, start time.Time) error {
	r.Seconds = time.Since(start).Seconds()
	return r.Print(os.Stdout, g.json)
}
