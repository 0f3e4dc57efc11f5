package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/deploy"
)

// schema prints the model schema of the learner the flags build from
// --data: what the aggregator's --schema must say. It connects to nothing.
func (a *agentFlags) schema(cmd *cobra.Command, g *globalFlags, priv privacyFlags) error {
	start := time.Now()
	o := a.options(cmd, priv, g.logger())
	l, err := deploy.BuildLearner(o.Task, o.Algo, deploy.Data{Dir: o.Data.Dir}, o.Data, deploy.Party{ID: o.ID, Seed: o.Data.Seed}, g.logger())
	if err != nil {
		return fmt.Errorf("agent --print-schema: %w", err)
	}
	schema := fmt.Sprintf("%s:%d", l.Learner.SchemaHash(), l.Learner.NumParams())
	if !g.json {
		_, err := fmt.Fprintln(cmd.OutOrStdout(), schema)
		return err
	}
	return g.emit(Report{Command: "agent --print-schema", Algo: o.Algo, Dataset: a.data, Clients: 1,
		Metrics: map[string]any{"schema": schema, "task": o.Task, "client": l.ID}}, start)
}
