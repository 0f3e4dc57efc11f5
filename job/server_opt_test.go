package job

import (
	"testing"

	"graphfed/aggregator"
)

// The report names the server optimizer that ran, and says nothing
// without one; the simulation hands it to the aggregator's round
// configuration.
func TestServerOptInReportAndRound(t *testing.T) {
	m := map[string]any{}
	putServerOpt(m, aggregator.ServerOpt{})
	if len(m) != 0 {
		t.Fatalf("no optimizer reported %v", m)
	}
	putServerOpt(m, aggregator.DefaultServerOpt(aggregator.ServerOptFedAdam))
	if got := m["server_opt"]; got != "fedadam(lr=0.1, beta1=0.9, beta2=0.99, tau=1e-09)" {
		t.Fatalf("server_opt %v", got)
	}
	o := aggregator.ServerOpt{Rule: aggregator.ServerOptFedAvgM, LR: 0.5, Momentum: 0.5}
	jo, err := simJobOptions(SimConfig{Algo: aggregator.AlgoFedAvg, Rounds: 2, ServerOpt: o}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if jo.Aggregator.Round.ServerOpt != o {
		t.Fatalf("round configuration's optimizer %+v, want %+v", jo.Aggregator.Round.ServerOpt, o)
	}
}
