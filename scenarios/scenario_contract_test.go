package scenarios

import (
	"testing"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// Each contract attack on a secure embedded server is rejected with its
// reason, charged to the bank whose key sent it, and changes nothing.
func TestScenarioContract(t *testing.T) {
	if testing.Short() {
		t.Skip("starts embedded NATS servers")
	}
	tests := []struct{ name, reason string }{
		{"huge-update", bus.ReasonNorm},
		{"weight-hijack", bus.ReasonWeight},
		{"schema-hijack", bus.ReasonSchema},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := runNamed(t, tc.name, ScenarioOptions{Seed: 1})
			if !out.Pass || out.Metrics["rejected_"+tc.reason] < 1 {
				t.Fatalf("%+v", out)
			}
		})
	}
}

// The judge fails every way an attack could get through.
func TestScenarioContractJudge(t *testing.T) {
	at := contractAttack{name: "x", reason: bus.ReasonNorm}
	victim := deploy.ClientID(contractVictim)
	good := func() contractRun {
		var r contractRun
		r.sent = 2
		a := &r.res.Aggregator
		a.Model = []float32{1, 2}
		for i := range contractRounds {
			a.Closes = append(a.Closes, aggregator.RoundClosed{Round: uint64(i + 1), In: bankIDsN(contractBanks)})
		}
		a.Rejects = map[string]uint64{bus.ReasonNorm: 2}
		a.RejectsBy = map[string]map[string]uint64{victim: {bus.ReasonNorm: 2}}
		for range contractBanks {
			r.res.Agents = append(r.res.Agents, agentResult(contractRounds))
		}
		return r
	}
	cleanRun := func() contractRun {
		r := good()
		r.sent, r.res.Aggregator.Rejects, r.res.Aggregator.RejectsBy = 0, nil, nil
		return r
	}
	tests := []struct {
		name   string
		change func(*contractRun)
		inv    string
	}{
		{"as it should be", func(*contractRun) {}, ""},
		{"not charged to the sender", func(r *contractRun) { r.res.Aggregator.RejectsBy = nil }, InvNotRejected},
		{"charged to another bank", func(r *contractRun) {
			r.res.Aggregator.RejectsBy = map[string]map[string]uint64{deploy.ClientID(1): {bus.ReasonNorm: 2}}
		}, InvNotRejected},
		{"nothing sent", func(r *contractRun) { r.sent = 0 }, InvNotRejected},
		{"counted but not charged", func(r *contractRun) { r.res.Aggregator.Rejects[bus.ReasonNorm] = 3 }, InvNotRejected},
		{"a round short", func(r *contractRun) { r.res.Aggregator.Closes = r.res.Aggregator.Closes[1:] }, InvNoProgress},
		{"a bank missing from a round", func(r *contractRun) { r.res.Aggregator.Closes[0].In = bankIDsN(2) }, InvResultChanged},
		{"a bank that never trained", func(r *contractRun) { r.res.Agents[1].Rounds = 0 }, InvNoProgress},
		{"a different model", func(r *contractRun) { r.res.Aggregator.Model = []float32{1, 2.5} }, InvResultChanged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			att := good()
			tc.change(&att)
			out := judgeContract(at, cleanRun(), att)
			if out.FailedInvariant != tc.inv {
				t.Fatalf("invariant %q (%s), want %q", out.FailedInvariant, out.Detail, tc.inv)
			}
		})
	}
}

func bankIDsN(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = deploy.ClientID(i)
	}
	return ids
}

func agentResult(rounds int) agent.Result { return agent.Result{Rounds: rounds} }
