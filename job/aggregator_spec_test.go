package job

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/telemetry"
)

func TestAggregatorTask(t *testing.T) {
	for _, tc := range []struct{ algo, want string }{
		{aggregator.AlgoFedAvg, deploy.TaskNode},
		{aggregator.AlgoCEFedGNN, deploy.TaskNode},
		{aggregator.AlgoFedGSP, deploy.TaskNode},
		{aggregator.AlgoLPSFed, deploy.TaskRec},
		{aggregator.AlgoLPSFedBPR, deploy.TaskRec},
	} {
		if got := AggregatorTask(tc.algo); got != tc.want {
			t.Errorf("AggregatorTask(%s) = %s, want %s", tc.algo, got, tc.want)
		}
	}
}

// TestAggregatorRoundConfig: the round policy a spec states, per
// algorithm, and the contract's refusals.
func TestAggregatorRoundConfig(t *testing.T) {
	spec := func(edit func(*AggregatorSpec)) AggregatorSpec {
		s := DefaultAggregatorSpec()
		s.Job = "j"
		edit(&s)
		return s.resolve()
	}
	tests := []struct {
		name    string
		spec    AggregatorSpec
		check   func(*testing.T, aggregator.Config)
		wantErr string
	}{
		{"the defaults: fedavg on node, the agent's clip and noise", spec(func(*AggregatorSpec) {}), func(t *testing.T, c aggregator.Config) {
			k := c.Contract
			if c.Algo != aggregator.AlgoFedAvg || c.Rounds != 100 || c.MinClients != 1 || c.DeadlineFactor != DefaultDeadlineFactor ||
				c.FreezeRounds != 0 || c.LPSFed.Phi != 0 || k.Clip != agent.DefaultModelClip || k.Sigma != agent.DefaultModelSigma ||
				k.GradSigma != agent.DefaultGradSigma || k.Grad != deploy.GradPolicy(deploy.TaskNode, aggregator.AlgoFedAvg, "") {
				t.Errorf("%+v", c)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("the default round policy does not validate: %v", err)
			}
		}, ""},
		{"lpsfed: a rec job with its reference graph, seeded by the job", spec(func(s *AggregatorSpec) {
			s.Algo, s.Seed, s.LPSFed.Seed = aggregator.AlgoLPSFed, 7, 0
		}), func(t *testing.T, c aggregator.Config) {
			if c.FreezeRounds != 2 || c.LPSFed.Phi != 128 || c.LPSFed.Seed != 7 || c.LPSFed.StrictStats.Edges != 100000 {
				t.Errorf("%+v", c)
			}
		}, ""},
		{"fedgsp: its server configuration", spec(func(s *AggregatorSpec) {
			s.Algo, s.FedGSP = aggregator.AlgoFedGSP, aggregator.DefaultFedGSPConfig()
		}), func(t *testing.T, c aggregator.Config) {
			if c.FedGSP != aggregator.DefaultFedGSPConfig() {
				t.Errorf("%+v", c.FedGSP)
			}
		}, ""},
		{"fedavg ignores the fedgsp configuration", spec(func(s *AggregatorSpec) { s.FedGSP.Gamma = 9 }), func(t *testing.T, c aggregator.Config) {
			if c.FedGSP.Gamma != 0 {
				t.Errorf("%+v", c.FedGSP)
			}
		}, ""},
		{"a schema, a robust rule, a stated grad", spec(func(s *AggregatorSpec) {
			s.Contract.Schema, s.Contract.Grad, s.Robust = "abc:12", "shared", aggregator.Robust{Rule: aggregator.RobustMedian}
		}), func(t *testing.T, c aggregator.Config) {
			if c.Contract.SchemaHash != "abc" || c.Contract.NumParams != 12 || c.Contract.Grad != "shared" || c.Robust.Rule != aggregator.RobustMedian {
				t.Errorf("%+v", c)
			}
		}, ""},
		{"a server optimizer", spec(func(s *AggregatorSpec) { s.ServerOpt = aggregator.DefaultServerOpt(aggregator.ServerOptFedYogi) }),
			func(t *testing.T, c aggregator.Config) {
				if c.ServerOpt != aggregator.DefaultServerOpt(aggregator.ServerOptFedYogi) {
					t.Errorf("%+v", c.ServerOpt)
				}
			}, ""},
		{"a bad schema", spec(func(s *AggregatorSpec) { s.Contract.Schema = "abc" }), nil, "HASH:PARAMS"},
		{"a keyring without a schema", spec(func(s *AggregatorSpec) { s.Keyring = "keyring.json" }), nil, "give --schema HASH:PARAMS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.spec.roundConfig(zerolog.Nop())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// TestRunAggregatorRefusesBeforeStarting: a spec the contract refuses
// fails before the live metrics start or anything connects.
func TestRunAggregatorRefusesBeforeStarting(t *testing.T) {
	s := DefaultAggregatorSpec()
	s.Job, s.Keyring, s.Conn.URL = "j", "/nonexistent.json", "nats://127.0.0.1:1"
	started := false
	s.StartMetrics = func() (*telemetry.Metrics, error) { started = true; return nil, nil }
	if _, err := RunAggregator(context.Background(), s, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "give --schema") {
		t.Fatalf("err %v, want the keyring's refusal", err)
	}
	if started {
		t.Fatal("the metrics started for a refused spec")
	}
}
