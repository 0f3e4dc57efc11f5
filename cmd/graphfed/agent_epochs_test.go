package main

import (
	"testing"

	"graphfed/aggregator"
	"graphfed/deploy"
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
