package job

import (
	"testing"

	"graphfed/aggregator"
	"graphfed/deploy"
)

// TestAgentLocalEpochs: an agent left at 0 local epochs takes its task's
// and algorithm's default; one given keeps it.
func TestAgentLocalEpochs(t *testing.T) {
	for _, tt := range []struct {
		task, algo  string
		given, want int
	}{
		{deploy.TaskNode, aggregator.AlgoFedGSP, 0, deploy.FedGSPLocalEpochs},
		{deploy.TaskNode, aggregator.AlgoFedGSP, 3, 3},
		{deploy.TaskNode, aggregator.AlgoFedAvg, 0, DefaultNodeLocalEpochs},
		{deploy.TaskAML, aggregator.AlgoCEFedGNN, 0, deploy.DefaultAMLLocalSteps},
		{deploy.TaskAML, aggregator.AlgoCEFedGNN, 172, 172},
		{deploy.TaskRec, aggregator.AlgoLPSFed, 0, DefaultNodeLocalEpochs},
	} {
		o, err := AgentOptions(AgentSpec{Job: "j", ID: "c", Task: tt.task, Algo: tt.algo, DataDir: "d",
			Learner: deploy.DefaultLearnerOptions(), LocalEpochs: tt.given})
		if err != nil {
			t.Fatal(err)
		}
		if o.LocalEpochs != tt.want {
			t.Errorf("%s/%s given %d: %d local epochs, want %d", tt.task, tt.algo, tt.given, o.LocalEpochs, tt.want)
		}
	}
}

// TestAgentPrivacyDefault: an AML agent with a zero privacy spec gets the
// node target over its planned releases and the exact accountant; a node
// agent gets none and RDP; a target on a node job is refused.
func TestAgentPrivacyDefault(t *testing.T) {
	aml, err := AgentOptions(AgentSpec{Job: "j", Task: deploy.TaskAML, DataDir: "d", Learner: deploy.DefaultLearnerOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if aml.Privacy.NodeTarget != deploy.DefaultAMLNodeTarget || aml.Privacy.Accountant != "exact" || aml.Privacy.EmbReleases == 0 {
		t.Errorf("aml agent privacy %+v, want target %v, exact, planned releases", aml.Privacy, deploy.DefaultAMLNodeTarget)
	}
	node, err := AgentOptions(AgentSpec{Job: "j", ID: "c", Task: deploy.TaskNode, DataDir: "d", Learner: deploy.DefaultLearnerOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if node.Privacy.NodeTarget != 0 || node.Privacy.Accountant != "rdp" {
		t.Errorf("node agent privacy %+v, want no target under rdp", node.Privacy)
	}
	four := 4.0
	if _, err := AgentOptions(AgentSpec{Job: "j", ID: "c", Task: deploy.TaskNode, DataDir: "d", Learner: deploy.DefaultLearnerOptions(),
		Privacy: Privacy{NodeTarget: &four}}); err == nil {
		t.Error("a node ε target on a node job was accepted")
	}
}

// TestEffectiveSettings: the values the job chose for settings left unset
// are what the run's summary reports.
func TestEffectiveSettings(t *testing.T) {
	settings := map[string]string{"local-epochs": "0", "rounds": "10", "algo": ""}
	effective(settings, SimConfig{Algo: aggregator.AlgoFedGSP, Rounds: 10, LocalEpochs: 1})
	if settings["local-epochs"] != "1" || settings["rounds"] != "10" || settings["algo"] != "fedgsp" {
		t.Errorf("settings %v", settings)
	}
	effective(nil, SimConfig{}) // no settings: nothing to record
}
