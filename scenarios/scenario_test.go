package scenarios

import (
	"context"
	"strings"
	"testing"

	"graphfed/deploy"
	"graphfed/job"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/dsim"
)

func runNamed(t *testing.T, name string, o ScenarioOptions) Outcome {
	t.Helper()
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := r.Select(name)
	if err != nil {
		t.Fatal(err)
	}
	return RunScenario(context.Background(), ss[0], o)
}

// The simulator scenarios pass on a short sweep, and report the seeds run.
func TestScenarioSimulatorSweeps(t *testing.T) {
	names := append(append([]string{"dsim"}, dsim.FaultKinds()...), "flood")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			out := runNamed(t, name, ScenarioOptions{Seed: 1, Seeds: 20})
			if !out.Pass || out.Seeds != 20 {
				t.Fatalf("%+v\n    reproduce: %s", out, out.Repro)
			}
			if name == "flood" && out.Metrics["flooded"] == 0 {
				t.Fatalf("flood scenario sent no flood: %v", out.Metrics)
			}
		})
	}
	// One seed is what a reproduction runs: it must work alone.
	if out := runNamed(t, "aggregator-crash", ScenarioOptions{Seed: 17, Seeds: 1}); !out.Pass || out.Seeds != 1 {
		t.Fatalf("single seed: %+v", out)
	}
}

// Every fault kind has a counter that says whether it struck.
func TestScenarioFaultCounters(t *testing.T) {
	struck := dsim.Counters{Dropped: 1, Duplicated: 1, Delayed: 1, Reordered: 1, PartitionDrops: 1, AgentCrashes: 1, AggCrashes: 1}
	for _, f := range dsim.FaultKinds() {
		if faultCount(f, struck) != 1 || faultCount(f, dsim.Counters{}) != 0 {
			t.Errorf("fault %s has no counter", f)
		}
	}
}

func TestScenarioSlowBankJudge(t *testing.T) {
	rc := func(round uint64, reason string, in, late []string) aggregator.RoundClosed {
		return aggregator.RoundClosed{Round: round, Reason: reason, In: in, Late: late}
	}
	fast, all := []string{"client-0", "client-1", "client-2"}, []string{"client-0", "client-1", "client-2", "client-3"}
	tests := []struct {
		name   string
		closes []aggregator.RoundClosed
		want   string
	}{
		{"slow bank left behind", []aggregator.RoundClosed{rc(1, "quorum", fast, []string{"client-3"}), rc(2, "deadline", all, nil)}, ""},
		{"slow bank held every round", []aggregator.RoundClosed{rc(1, "quorum", all, nil), rc(2, "quorum", all, nil)}, InvRoundOpen},
		{"a round closed for another reason", []aggregator.RoundClosed{rc(1, "buffer", fast, []string{"client-3"}), rc(2, "quorum", fast, nil)}, InvRoundOpen},
		{"a round missing", []aggregator.RoundClosed{rc(1, "quorum", fast, []string{"client-3"})}, InvNoProgress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := job.SimResult{Agg: aggregator.Result{Closes: tc.closes, Model: []float32{1}}}
			if out := judgeSlowBank("slow-bank", res, 2, "client-3"); out.FailedInvariant != tc.want {
				t.Fatalf("got %+v, want invariant %q", out, tc.want)
			}
		})
	}
}

func TestScenarioHostileJudge(t *testing.T) {
	honest := []string{deploy.ClientID(0), deploy.ClientID(1), deploy.ClientID(2)}
	good := func() (hostileRun, hostileRun) {
		var closes []aggregator.RoundClosed
		for r := uint64(1); r <= hostileRounds; r++ {
			closes = append(closes, aggregator.RoundClosed{Round: r, In: honest})
		}
		rejects := map[string]uint64{bus.ReasonSender: 1}
		clean := hostileRun{agg: aggregator.Result{Closes: closes, Model: []float32{1, 2}}}
		att := hostileRun{agg: aggregator.Result{Closes: closes, Model: []float32{1, 2}, Rejects: map[string]uint64{bus.ReasonGarbage: 1},
			Dropped: map[string]int{"duplicate": 2}}, sent: map[string]int{bus.ReasonGarbage: 1}, replay: 2}
		for range hostileBanks {
			att.agents = append(att.agents, agent.Result{Rejects: rejects})
		}
		return clean, att
	}
	tests := []struct {
		name   string
		mutate func(clean, att *hostileRun)
		want   string
	}{
		{"all rejected, result unchanged", func(*hostileRun, *hostileRun) {}, ""},
		{"a message not counted", func(_, a *hostileRun) { a.sent[bus.ReasonShape] = 1 }, InvNotRejected},
		{"counted for another reason", func(_, a *hostileRun) { a.agg.Rejects = map[string]uint64{bus.ReasonSubject: 1} }, InvNotRejected},
		{"no replay dropped", func(_, a *hostileRun) { a.agg.Dropped = nil }, InvNotRejected},
		{"an agent took the forged round", func(_, a *hostileRun) { a.agents[1].Rejects = nil }, InvNotRejected},
		{"mallory counted", func(_, a *hostileRun) {
			a.agg.Closes = append([]aggregator.RoundClosed{{Round: 1, In: append([]string{malloryID}, honest[:2]...)}}, a.agg.Closes[1:]...)
		}, InvResultChanged},
		{"model moved", func(_, a *hostileRun) { a.agg.Model = []float32{1, 2.0000002} }, InvResultChanged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clean, att := good()
			tc.mutate(&clean, &att)
			if out := judgeHostile("hostile-agent", clean, att); out.FailedInvariant != tc.want {
				t.Fatalf("got %+v, want invariant %q", out, tc.want)
			}
		})
	}
}

// TestScenarioSlowBank runs the real job over embedded NATS.
func TestScenarioSlowBank(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	out := runNamed(t, "slow-bank", ScenarioOptions{Seed: 1})
	if !out.Pass || out.Metrics["slow_bank_late"] == 0 {
		t.Fatalf("%+v", out)
	}
}

// TestScenarioHostileAgent attacks a real job over embedded NATS.
func TestScenarioHostileAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server and sends a 64 MiB message")
	}
	out := runNamed(t, "hostile-agent", ScenarioOptions{Seed: 1})
	if !out.Pass {
		t.Fatalf("%+v", out)
	}
	for _, r := range []string{bus.ReasonGarbage, bus.ReasonVersion, bus.ReasonOversized, bus.ReasonSubject,
		bus.ReasonSender, bus.ReasonShape, bus.ReasonNonFinite, bus.ReasonRound} {
		if out.Metrics["rejected_"+r] != 1 {
			t.Errorf("reason %s counted %v times, want 1 (%v)", r, out.Metrics["rejected_"+r], out.Metrics)
		}
	}
	if !strings.HasPrefix(out.Name, "hostile") || out.Metrics["replays_dropped"] == 0 {
		t.Fatalf("no replay was dropped: %v", out.Metrics)
	}
}
