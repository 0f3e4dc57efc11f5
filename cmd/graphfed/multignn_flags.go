package main

import "github.com/spf13/pflag"

// multiGNNFlags are the Multi-GNN input adaptations, for `train --aml`
// and for a federated bank's learner (where reverse message passing and
// edge updates are always on). They change the model's inputs, so every
// bank of a job must give the same ones: the aggregator refuses updates
// of another schema.
type multiGNNFlags struct {
	portsOn, timeDeltasOn, egoIDsOn, all bool
}

// register adds the flags, their help between prefix and suffix.
func (m *multiGNNFlags) register(f *pflag.FlagSet, prefix, suffix string) {
	f.BoolVar(&m.portsOn, "ports", false, prefix+"port numbers as edge inputs (Multi-GNN)"+suffix)
	f.BoolVar(&m.timeDeltasOn, "time-deltas", false, prefix+"time since the endpoints' previous transaction as edge inputs (Multi-GNN)"+suffix)
	f.BoolVar(&m.egoIDsOn, "ego-ids", false, prefix+"mark the seed transaction's endpoints (Multi-GNN ego IDs)"+suffix)
	f.BoolVar(&m.all, "multignn", false, prefix+"all Multi-GNN adaptations: --ports, --time-deltas and --ego-ids, with reverse message passing and edge updates"+suffix)
}

// federatedNote ends the help of the flags where every bank must agree.
const federatedNote = "; every bank of a job alike"

func (m *multiGNNFlags) ports() bool      { return m.portsOn || m.all }
func (m *multiGNNFlags) timeDeltas() bool { return m.timeDeltasOn || m.all }
func (m *multiGNNFlags) egoIDs() bool     { return m.egoIDsOn || m.all }
