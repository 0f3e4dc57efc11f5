package main

import (
	"testing"

	"graphfed/aggregator"
	"graphfed/deploy"

	"github.com/spf13/pflag"
)

func TestAgentLocalEpochs(t *testing.T) {
	for _, tt := range []struct {
		task, algo string
		given      int
		changed    bool
		want       int
	}{
		{deploy.TaskNode, aggregator.AlgoFedGSP, agentDefaultEpochs, false, deploy.FedGSPLocalEpochs},
		{deploy.TaskNode, aggregator.AlgoFedGSP, 3, true, 3},
		{deploy.TaskNode, aggregator.AlgoFedAvg, agentDefaultEpochs, false, agentDefaultEpochs},
		{deploy.TaskAML, aggregator.AlgoCEFedGNN, agentDefaultEpochs, false, amlDefaultK},
		{deploy.TaskAML, aggregator.AlgoCEFedGNN, 172, true, 172},
		{deploy.TaskRec, aggregator.AlgoLPSFed, agentDefaultEpochs, false, agentDefaultEpochs},
	} {
		if got := agentLocalEpochs(tt.task, tt.algo, tt.given, tt.changed); got != tt.want {
			t.Errorf("agentLocalEpochs(%s, %s, %d, changed %v) = %d, want %d", tt.task, tt.algo, tt.given, tt.changed, got, tt.want)
		}
	}
}

// A value the command chose for a flag left out is what the run's
// settings report, and the flag still counts as not given.
func TestSetEffectiveReportsTheValueThatRan(t *testing.T) {
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	fs.Int("local-epochs", 5, "")
	fs.Int("rounds", 100, "")
	if err := fs.Parse([]string{"--rounds", "10"}); err != nil {
		t.Fatal(err)
	}
	setEffective(fs, "local-epochs", deploy.FedGSPLocalEpochs)
	setEffective(fs, "no-such-flag", 3) // ignored
	all, changed := flagSettings(fs)
	if all["local-epochs"] != "1" || all["rounds"] != "10" {
		t.Errorf("settings %v, want local-epochs 1 and rounds 10", all)
	}
	if len(changed) != 1 || changed[0] != "rounds" {
		t.Errorf("changed %v, want [rounds]", changed)
	}
}
