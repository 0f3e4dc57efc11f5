package deploy

import (
	"fmt"
	"sync"

	"graphfed/aml/amllearner"
	"graphfed/aml/bank"
	"graphfed/bus"
)

// AMLData turns a bank's view into the input of its AML learner: the
// bank's local graph, splits and flags as they are, the neighbouring banks
// it exchanges embeddings with, and the world's time range. Nothing of the
// world beyond the view reaches the learner. The simulation (which splits a
// world in memory) and a deployed agent (which loads its bank directory)
// both convert here.
func AMLData(v *bank.View) (amllearner.Data, error) {
	if !bus.ValidID(v.ID) {
		return amllearner.Data{}, fmt.Errorf("deploy: aml data: bank id %q does not make a client id", v.Bank)
	}
	peers := v.Peers()
	for id := range peers {
		if !bus.ValidID(id) {
			return amllearner.Data{}, fmt.Errorf("deploy: aml data: bank %s: neighbour %q is not a client id", v.ID, id)
		}
	}
	return amllearner.Data{Graph: v.Graph, Split: v.Split, Home: v.Home, Owned: v.Owned, Global: v.Global,
		Remote: v.Remote(), Peers: peers, First: v.Cut.First, Last: v.Cut.Last}, nil
}

// countingAML is a bank's AML learner that counts the boundary embeddings
// it took from each neighbour, so that a deployed bank's report shows the
// exchange happened (the ledger shows only what was sent). Embedding the
// learner keeps every capability the machine looks for.
type countingAML struct {
	*amllearner.Learner
	mu         sync.Mutex
	msgs, rows map[string]int // by neighbour: messages and embeddings taken
}

// Receive implements learner.Exchanger, counting what the learner accepted.
func (c *countingAML) Receive(from string, ids []int64, rows []float32, dim int) error {
	if err := c.Learner.Receive(from, ids, rows, dim); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs[from]++
	c.rows[from] += len(ids)
	return nil
}

// counters are the exchange's figures for a report: embedding messages and
// rows received in all, and messages by neighbour.
func (c *countingAML) counters() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	msgs, rows := 0, 0
	from := map[string]int{}
	for id, n := range c.msgs {
		msgs += n
		rows += c.rows[id]
		from[id] = n
	}
	return map[string]any{"emb_received_messages": msgs, "emb_received_rows": rows, "emb_received_from": from}
}
