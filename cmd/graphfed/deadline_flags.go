package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/aggregator"
)

// DefaultDeadlineFactor is the adaptive deadline's factor for sim and
// aggregator: a round may stay open three times the median measured update
// time, never less than --round-timeout.
const DefaultDeadlineFactor = 3

// registerDeadlineFlags adds --deadline-factor and --deadline-cap
// (aggregator.Config.DeadlineFactor, DeadlineCap).
func registerDeadlineFlags(cmd *cobra.Command, factor *float64, limit *time.Duration) {
	f := cmd.Flags()
	f.Float64Var(factor, "deadline-factor", DefaultDeadlineFactor,
		"adaptive round deadline: this many times the median measured update time, never below --round-timeout; "+
			"a round with nothing in is extended while clients are live, up to --deadline-cap (0: fixed deadline)")
	f.DurationVar(limit, "deadline-cap", 0,
		fmt.Sprintf("longest a round may stay open with --deadline-factor (0: %d × --round-timeout)", aggregator.DefaultDeadlineCapX))
}

// budgetNote is a progress line's note of an adapted round: how long it
// was allowed, and how often it was extended for being empty.
func budgetNote(rc aggregator.RoundClosed) string {
	switch {
	case rc.Budget == 0:
		return ""
	case rc.Extensions > 0:
		return fmt.Sprintf(" budget=%v (extended %d×)", rc.Budget.Round(time.Millisecond), rc.Extensions)
	}
	return fmt.Sprintf(" budget=%v", rc.Budget.Round(time.Millisecond))
}
