package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/aggregator"
	"graphfed/job"
)

// registerDeadlineFlags adds --deadline-factor and --deadline-cap
// (aggregator.Config.DeadlineFactor, DeadlineCap), the same on sim and
// aggregator.
func registerDeadlineFlags(cmd *cobra.Command, factor *float64, limit *time.Duration) {
	f := cmd.Flags()
	f.Float64Var(factor, "deadline-factor", job.DefaultDeadlineFactor,
		"adaptive round deadline: this many times the median measured update time, never below --round-timeout; "+
			"a round with nothing in is extended while clients are live, up to --deadline-cap (0: fixed deadline)")
	f.DurationVar(limit, "deadline-cap", 0,
		fmt.Sprintf("longest a round may stay open with --deadline-factor (0: %d × --round-timeout)", aggregator.DefaultDeadlineCapX))
}
