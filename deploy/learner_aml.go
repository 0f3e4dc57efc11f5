package deploy

import (
	"fmt"

	"graphfed/agent"
	"graphfed/bus"
	"graphfed/workload/aml"
)

// AMLData turns a bank's view into the input of its AML learner: the
// bank's local graph, splits and flags as they are, the neighbouring banks
// it exchanges embeddings with, and the world's time range. Nothing of the
// world beyond the view reaches the learner. The simulation (which splits a
// world in memory) and a deployed agent (which loads its bank directory)
// both convert here.
func AMLData(v *aml.BankView) (agent.AMLData, error) {
	if !bus.ValidID(v.ID) {
		return agent.AMLData{}, fmt.Errorf("deploy: aml data: bank id %q does not make a client id", v.Bank)
	}
	peers := v.Peers()
	for id := range peers {
		if !bus.ValidID(id) {
			return agent.AMLData{}, fmt.Errorf("deploy: aml data: bank %s: neighbour %q is not a client id", v.ID, id)
		}
	}
	return agent.AMLData{Graph: v.Graph, Split: v.Split, Home: v.Home, Owned: v.Owned, Global: v.Global,
		Remote: v.Remote(), Peers: peers, First: v.Cut.First, Last: v.Cut.Last}, nil
}

// amlLearner loads a bank directory and builds the bank's learner; the
// bank's neighbours are the banks its rows name, whom it exchanges
// embeddings with directly under cefedgnn and fedgnn-st.
func amlLearner(algo string, o LearnerOptions) (Learned, error) {
	v, err := aml.LoadBank(o.Dir)
	if err != nil {
		return Learned{}, err
	}
	d, err := AMLData(v)
	if err != nil {
		return Learned{}, err
	}
	cfg := AMLConfigFor(algo, o.AML)
	cfg.Seed = o.Seed
	l, err := agent.NewAMLLearner(d, cfg)
	if err != nil {
		return Learned{}, err
	}
	return Learned{Learner: l, ID: v.ID, Stats: map[string]any{"bank": v.Bank, "rows": v.Graph.NumEdges(),
		"accounts": v.Graph.NumAccounts(), "neighbours": v.Neighbours()}}, nil
}
