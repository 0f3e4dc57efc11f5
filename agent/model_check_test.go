package agent_test

import (
	"testing"

	"graphfed/agent"
)

// A received model outside what the job can produce is refused: the agent
// keeps its last good model, trains on from it exactly as if the bad one
// never came, counts it and says so once per round.
func TestMachineRefusesModelsOutsideTheJob(t *testing.T) {
	huge := float32(1e30)
	good := agent.ModelIn{Round: 1, Params: []float32{0.1, 0.2, 0.3, 0.4, 0.5}, Now: mat(3)}
	tests := []struct {
		name  string
		bad   []agent.ModelIn // received after the good model of round 1
		notes int
	}{
		{"nothing bad", nil, 0},
		{"every parameter 1e30", []agent.ModelIn{{Round: 2, Params: []float32{huge, huge, huge, huge, huge}, Now: mat(3.5)}}, 1},
		{"just above the bound", []agent.ModelIn{{Round: 2, Params: []float32{480, 0, 0, 0, 0}, Now: mat(3.5)}}, 1},
		{"a huge gradient estimator", []agent.ModelIn{{Round: 2, Params: good.Params, Grad: []float32{0, 0, huge, 0, 0}, Now: mat(3.5)}}, 1},
		{"twice in a round, said once", []agent.ModelIn{
			{Round: 2, Params: []float32{huge, 0, 0, 0, 0}, Now: mat(3.5)},
			{Round: 2, Params: []float32{0, huge, 0, 0, 0}, Now: mat(3.6)}}, 1},
	}
	run := func(t *testing.T, bad []agent.ModelIn) (agent.PublishUpdate, int, uint64) {
		m, _ := newMachine(t, nil, 0)
		boot(t, m, 0, 0)
		step(t, m, agent.JoinReply{Accepted: true, Algo: "fedavg", InitSeed: 3, Now: mat(1)})
		step(t, m, agent.RoundOpened{Round: 1, Now: mat(2)})
		step(t, m, good)
		notes := 0
		for _, b := range bad {
			for _, a := range step(t, m, b) {
				if n, ok := a.(agent.Note); ok && n.Warn {
					notes++
				}
			}
		}
		up := only[agent.PublishUpdate](t, step(t, m, agent.RoundOpened{Round: 2, ModelRound: 1, Now: mat(4)}))
		return up, notes, m.BadModels()
	}
	clean, _, _ := run(t, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up, notes, bad := run(t, tc.bad)
			if notes != tc.notes || bad != uint64(len(tc.bad)) {
				t.Fatalf("%d notes and %d refused, want %d and %d", notes, bad, tc.notes, len(tc.bad))
			}
			a, b := clean.Update.Params.Floats(), up.Update.Params.Floats()
			if up.Update.BaseRound != 1 || len(a) != len(b) {
				t.Fatalf("round 2 update %+v", up.Update)
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("round 2 trained from another model: %v, want %v", b, a)
				}
			}
		})
	}
}
