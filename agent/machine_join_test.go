package agent_test

import (
	"strings"
	"testing"

	"graphfed/agent"
	"graphfed/privacy"
)

// TestMachineJoinRefusals: an agent built for one algorithm refuses a job
// that runs another (a cefedgnn learner in a fedavg job would exchange
// embeddings nobody asked for), and a job that ends before the agent
// joined ends it without final scores or releases.
func TestMachineJoinRefusals(t *testing.T) {
	cases := []struct {
		name      string
		built     string // MachineConfig.Algo
		ev        agent.MachineEvent
		wantRefus string // "" : joins
	}{
		{"same algo", "fedavg", agent.JoinReply{Accepted: true, Algo: "fedavg", Round: 1, Now: mat(1)}, ""},
		{"any algo", "", agent.JoinReply{Accepted: true, Algo: "cefedgnn", Round: 1, Now: mat(1)}, ""},
		{"other algo", "cefedgnn", agent.JoinReply{Accepted: true, Algo: "fedavg", Round: 1, Now: mat(1)}, "the job runs fedavg, this agent was built for cefedgnn"},
		{"done before join", "fedavg", agent.JobDone{Now: mat(1)}, "the job finished before this agent joined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ledger := privacy.NewMemLedger()
			seed := uint64(3)
			m, err := agent.NewMachine(agent.MachineConfig{Job: "j", Client: "bank-1", Algo: c.built, ModelSigma: 2, ModelClip: 1,
				Privacy: privacy.Config{Delta: 1e-4, Seed: &seed}, Ledger: ledger}, newLogistic(t, 7))
			if err != nil {
				t.Fatal(err)
			}
			boot(t, m, 0, 0)
			acts := step(t, m, c.ev)
			var refused []agent.Refused
			for _, a := range acts {
				if r, ok := a.(agent.Refused); ok {
					refused = append(refused, r)
				}
			}
			switch {
			case c.wantRefus == "" && len(refused) > 0:
				t.Fatalf("refused: %v", refused)
			case c.wantRefus == "":
				only[agent.PublishUpdate](t, acts)
			case len(refused) != 1 || !strings.Contains(refused[0].Reason, c.wantRefus):
				t.Fatalf("actions %#v, want one refusal %q", acts, c.wantRefus)
			default:
				if n := ledgerLen(t, ledger); n != 0 {
					t.Fatalf("a refused agent released %d values", n)
				}
				if acts := step(t, m, agent.RoundOpened{Round: 2, Now: mat(2)}); len(acts) != 0 {
					t.Fatalf("a refused agent acts on a round: %#v", acts)
				}
			}
		})
	}
}
