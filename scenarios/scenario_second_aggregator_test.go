package scenarios

import (
	"testing"

	"graphfed/aggregator"
	"graphfed/bus"
)

// The second aggregator on a secure embedded server: refused before it
// publishes, and the job's model unchanged through it and a takeover.
func TestScenarioSecondAggregator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts embedded NATS servers")
	}
	out := runNamed(t, "second-aggregator", ScenarioOptions{Seed: 1})
	if !out.Pass || out.Metrics["model_bit_identical"] != 1 {
		t.Fatalf("%+v", out)
	}
	t.Logf("refused after %.2fs, took over after %.2fs, resumed in round %v",
		out.Metrics["intruder_refused_seconds"], out.Metrics["takeover_seconds"], out.Metrics["resumed_round"])
}

// The judge catches every way the second aggregator could have got
// around the lease.
func TestSecondAggregatorJudge(t *testing.T) {
	const first, resumer, other = "0000000000000014-0000000000000001", "000000000000001e-0000000000000002", "0000000000000028-0000000000000003"
	seal := func(kind bus.Kind, body any) saMsg {
		t.Helper()
		data, err := bus.Seal(bus.Envelope{Job: "j", Kind: kind, From: bus.AggregatorID, Round: 3, Seq: 1}, body)
		if err != nil {
			t.Fatal(err)
		}
		return saMsg{subject: bus.Subject("j", kind), data: data}
	}
	good := func() saRun {
		res := aggregator.Result{Run: resumer, Resumed: true, Closes: make([]aggregator.RoundClosed, saRounds), Model: []float32{1, 2}}
		return saRun{
			first: aggregator.Result{Run: first}, resumer: res,
			agentErr: make([]error, saBanks), agentRejects: make([]map[string]uint64, saBanks),
			intruderErr:  &aggregator.JobRunningError{Job: "j", Run: first},
			intruderSent: map[bus.Kind]bus.Traffic{bus.ChannelJetStream: {Messages: 9}},
			tapped: []saMsg{seal(bus.KindRound, &bus.RoundOpen{Round: 3, Run: first}),
				seal(bus.KindRound, &bus.RoundOpen{Round: 5, Run: resumer, Ended: []string{first}})},
		}
	}
	want := aggregator.ResultDigest(good().resumer)
	if out := judgeSecondAggregator("t", want, good()); out.FailedInvariant != "" {
		t.Fatalf("a clean run fails: %+v", out)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*saRun)
		inv    string
	}{
		{"not refused", func(r *saRun) { r.intruderErr = nil }, InvSecondAggregatorRan},
		{"refused for another reason", func(r *saRun) { r.intruderErr = bus.ErrFenced }, InvSecondAggregatorRan},
		{"refusal naming another run", func(r *saRun) { r.intruderErr = &aggregator.JobRunningError{Job: "j", Run: other} }, InvSecondAggregatorRan},
		{"sent a round", func(r *saRun) { r.intruderSent[bus.KindRound] = bus.Traffic{Messages: 1} }, InvSecondAggregatorSpoke},
		{"answered a hello", func(r *saRun) { r.intruderSent[bus.ChannelInbox] = bus.Traffic{Messages: 1} }, InvSecondAggregatorSpoke},
		{"a model in the window", func(r *saRun) { r.window = []saMsg{seal(bus.KindModel, &bus.Model{Round: 2})} }, InvSecondAggregatorSpoke},
		{"a round of another run", func(r *saRun) {
			r.tapped = append(r.tapped, seal(bus.KindRound, &bus.RoundOpen{Round: 3, Run: other}))
		}, InvSecondAggregatorSpoke},
		{"a done of another run", func(r *saRun) { r.tapped = append(r.tapped, seal(bus.KindDone, &bus.Done{Run: other})) }, InvSecondAggregatorSpoke},
		{"an agent saw another run", func(r *saRun) { r.agentRejects[1] = map[string]uint64{bus.ReasonOtherRun: 2} }, InvAgentsLeftRun},
		{"the takeover does not name the crashed run", func(r *saRun) {
			r.tapped = r.tapped[:1:1]
			r.tapped = append(r.tapped, seal(bus.KindRound, &bus.RoundOpen{Round: 5, Run: resumer}))
		}, InvAgentsLeftRun},
		{"no takeover", func(r *saRun) { r.resumer.Resumed = false }, InvNoProgress},
		{"another model", func(r *saRun) { r.resumer.Model = []float32{1, 2.0000002} }, InvResultChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.mutate(&r)
			if out := judgeSecondAggregator("t", want, r); out.FailedInvariant != tc.inv {
				t.Fatalf("%+v, want invariant %s", out, tc.inv)
			}
		})
	}
}
