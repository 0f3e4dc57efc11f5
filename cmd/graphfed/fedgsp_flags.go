package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"graphfed/aggregator"
	"graphfed/job"
)

// fedgspFlags are FedGSP's server settings (the collaboration graphs):
// the preset's row, and the fields given on top of it.
type fedgspFlags struct {
	preset string
	server aggregator.FedGSPOverrides
	// sel is the federated selection of a job that trains its clients
	// (sim: the command with the learner flags).
	sel job.FedGSPSelect
}

// registerServer registers the aggregator's FedGSP flags; a command that
// has --fedgsp-preset already (sim's learner flags) keeps its own.
func (f *fedgspFlags) registerServer(cmd *cobra.Command) {
	fl := cmd.Flags()
	s := aggregator.DefaultFedGSPConfig()
	if fl.Lookup("fedgsp-preset") == nil {
		fl.StringVar(&f.preset, "fedgsp-preset", "cora", "FedGSP server settings to start from: "+strings.Join(job.FedGSPPresets(), ", ")+"; the --fedgsp-* flags given override it")
	} else {
		// The clients train here: the preset's default, select, chooses
		// among these candidates.
		fl.StringSliceVar(&f.sel.Grid, "fedgsp-grid", nil, "FedGSP --fedgsp-preset select: candidate presets, each trained locally by every client and scored on its validation nodes (default: "+
			strings.Join(job.FedGSPSelectGrid(), ",")+")")
		fl.StringSliceVar(&f.sel.Exclude, "fedgsp-exclude", nil, "FedGSP --fedgsp-preset select: presets left out of the grid (a leave-one-dataset-out run leaves out the one tuned on its dataset)")
		fl.IntVar(&f.sel.Epochs, "fedgsp-select-epochs", job.DefaultFedGSPSelectEpochs, "FedGSP --fedgsp-preset select: local epochs of each candidate's trial (its score: the best validation epoch)")
		fl.IntVar(&f.sel.Finalists, "fedgsp-finalists", job.DefaultFedGSPFinalists, "FedGSP --fedgsp-preset select: the local trial's best candidates that then run as short federated jobs, the best of which is chosen (negative: the local trial chooses)")
		fl.IntVar(&f.sel.TrialRounds, "fedgsp-trial-rounds", job.DefaultFedGSPTrialRounds, "FedGSP --fedgsp-preset select: rounds of each finalist's federated trial")
		fl.BoolVar(&f.sel.NoRefine, "fedgsp-no-refine", false, "FedGSP --fedgsp-preset select: keep the finalists' choice instead of trying its raw-feature (+raw, where row normalisation changes the features) and slower-MLP (+slow, +slow2: the rate a decade and two slower, over the job's rounds) variants as further trials")
	}
	help := func(what string, def any) string {
		return fmt.Sprintf("FedGSP %s (default: the preset's; cora's %v)", what, def)
	}
	fl.Var(unsetFloat(&f.server.Gamma), "fedgsp-gamma", help("γ: spread of the collaboration rows (larger: closer to uniform)", s.Gamma))
	fl.Var(unsetFloat(&f.server.Alpha), "fedgsp-alpha", help("α: weight of the complementing (heterophily) similarity", s.Alpha))
	fl.Var(unsetFloat(&f.server.Beta), "fedgsp-beta", help("β: weight of the sharing (homophily) similarity", s.Beta))
	fl.Var(unsetInt(&f.server.GraphRounds), "fedgsp-graph-rounds", help("the collaboration graphs update in rounds below this one, then freeze", s.GraphRounds))
}

// serverConfig is the aggregator's FedGSP configuration: the preset's
// server row under the flags given.
func (f *fedgspFlags) serverConfig(*cobra.Command) (aggregator.FedGSPConfig, error) {
	return job.FedGSPServer(f.preset, f.server)
}
