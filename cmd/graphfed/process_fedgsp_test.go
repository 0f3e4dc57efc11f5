package main

import (
	"testing"

	"graphfed/privacy"
)

// FedGSP as separate processes on the configuration `graphfed keys`
// writes (one account per party, signed, durable), over mutual TLS: three
// clients of a CSBM graph, each releasing its descriptors once and a model
// each round, the aggregator sending every client its own personalised
// model on its own subject; then a client and the aggregator are killed
// (testKillAndRecover), and the final models are the uninterrupted run's.
func TestProcessFedGSPPermissionedDurableTLS(t *testing.T) {
	requireProcessTests(t)
	dirs := writeClients(t, 3)
	ids := []string{"client-0", "client-1", "client-2"}
	spec := jobSpec{rounds: 4, killRound: 2, tls: true,
		aggArgs: []string{"--algo", "fedgsp", "--task", "node"},
		agentArgs: func(i int) []string {
			return []string{"--task", "node", "--algo", "fedgsp", "--data", dirs[i]}
		}}
	testKillAndRecover(t, "gsp", ids, spec, func(t *testing.T, r *jobRun, es []privacy.Entry) {
		for _, id := range ids {
			if got := roundsOf(es, id, privacy.ChannelDescriptor); len(got) != 1 {
				t.Errorf("%s's descriptor releases are of rounds %v, want one", id, got)
			}
			if got := roundsOf(es, id, privacy.ChannelModel); len(got) != spec.rounds {
				t.Errorf("%s's model releases are of rounds %v, want one per round", id, got)
			}
		}
	})
}
