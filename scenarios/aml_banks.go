package scenarios

import (
	"fmt"

	"graphfed/agent"
	"graphfed/bus"
	"graphfed/workload/aml"
)

// AMLData turns a bank's view into the input of its AML learner: the
// bank's local graph, splits and flags as they are, the neighbouring banks
// it exchanges embeddings with, and the world's time range. Nothing of the
// world beyond the view reaches the learner.
func AMLData(v *aml.BankView) (agent.AMLData, error) {
	if !bus.ValidID(v.ID) {
		return agent.AMLData{}, fmt.Errorf("scenarios: aml data: bank id %q does not make a client id", v.Bank)
	}
	peers := v.Peers()
	for id := range peers {
		if !bus.ValidID(id) {
			return agent.AMLData{}, fmt.Errorf("scenarios: aml data: bank %s: neighbour %q is not a client id", v.ID, id)
		}
	}
	return agent.AMLData{Graph: v.Graph, Split: v.Split, Home: v.Home, Owned: v.Owned, Global: v.Global,
		Remote: v.Remote(), Peers: peers, First: v.Cut.First, Last: v.Cut.Last}, nil
}
