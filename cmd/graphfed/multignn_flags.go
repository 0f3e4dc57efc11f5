package main

import "github.com/spf13/pflag"

// multiGNNFlags are the Multi-GNN input adaptations a federated bank's
// learner can switch on (reverse message passing and edge updates are
// always on there). They change the model's inputs, so every bank of a
// job must give the same ones: the aggregator refuses updates of another
// schema.
type multiGNNFlags struct {
	portsOn, timeDeltasOn, egoIDsOn, all bool
}

func (m *multiGNNFlags) register(f *pflag.FlagSet, prefix string) {
	f.BoolVar(&m.portsOn, "ports", false, prefix+"port numbers as edge inputs (Multi-GNN); every bank of a job alike")
	f.BoolVar(&m.timeDeltasOn, "time-deltas", false, prefix+"time since the endpoints' previous transaction as edge inputs (Multi-GNN); every bank of a job alike")
	f.BoolVar(&m.egoIDsOn, "ego-ids", false, prefix+"mark the seed transaction's endpoints (Multi-GNN ego IDs); every bank of a job alike")
	f.BoolVar(&m.all, "multignn", false, prefix+"all of --ports, --time-deltas and --ego-ids; every bank of a job alike")
}

func (m *multiGNNFlags) ports() bool      { return m.portsOn || m.all }
func (m *multiGNNFlags) timeDeltas() bool { return m.timeDeltasOn || m.all }
func (m *multiGNNFlags) egoIDs() bool     { return m.egoIDsOn || m.all }
