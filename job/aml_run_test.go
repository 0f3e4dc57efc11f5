package job

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/privacy"
)

// A Go program that runs the AML job with a zero privacy spec gets the
// private default, as the command line does: ε = 8 per node at the
// 90th-percentile distance, exact accountant, held by every bank's gate.
func TestRunAMLZeroPrivacyIsPrivate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an AML job")
	}
	spec := AMLSpec{Sim: SimConfig{Job: "zero-privacy", Rounds: 3, LocalEpochs: 4, Seed: 1, Log: zerolog.Nop()},
		World: AMLWorld{Size: "tiny", Banks: 3, Rows: 20000, NumAccounts: 3000}}
	res, err := RunAML(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl := res.Plan
	if pl.Algo != aggregator.AlgoCEFedGNN || pl.Privacy.NodeTarget != deploy.DefaultAMLNodeTarget || pl.Privacy.Accountant != privacy.Exact {
		t.Fatalf("plan: algo %s, node target %v, accountant %v; want cefedgnn, %v, exact", pl.Algo, pl.Privacy.NodeTarget, pl.Privacy.Accountant, deploy.DefaultAMLNodeTarget)
	}
	rep, err := privacy.Audit(res.Sim.Ledger, privacy.AuditOptions{Kind: privacy.Exact, Delta: deploy.DefaultDelta})
	if err != nil {
		t.Fatal(err)
	}
	var p90 *privacy.PercentileEpsilon
	for i := range rep.Percentiles {
		if rep.Percentiles[i].Q == 90 {
			p90 = &rep.Percentiles[i]
		}
	}
	switch {
	case p90 == nil:
		t.Fatalf("the audit has no 90th percentile: %+v", rep.Percentiles)
	case !(p90.WorstEpsilon > 0) || p90.WorstEpsilon > deploy.DefaultAMLNodeTarget*(1+1e-9):
		t.Fatalf("node ε at p90: %v, want in (0, %v]", p90.WorstEpsilon, deploy.DefaultAMLNodeTarget)
	}
	t.Logf("node ε_p90 %.4f over %d releases of the worst node; test F1 %.4f", p90.WorstEpsilon, p90.WorstReleases, res.Scores.TestF1)
}

func TestPrivacyResolveAML(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name    string
		p       Privacy
		algo    string
		target  float64
		acc     privacy.AccountantKind
		wantErr bool
	}{
		{"zero: the private default", Privacy{}, aggregator.AlgoCEFedGNN, deploy.DefaultAMLNodeTarget, privacy.Exact, false},
		{"fedgnn-st too", Privacy{}, aggregator.AlgoFedGNNST, deploy.DefaultAMLNodeTarget, privacy.Exact, false},
		{"fedavg releases no embeddings", Privacy{}, aggregator.AlgoFedAvg, 0, privacy.RDP, false},
		{"a fixed σ0 instead", Privacy{EmbSigma: 0.5}, aggregator.AlgoCEFedGNN, 0, privacy.RDP, false},
		{"a target of 4", Privacy{NodeTarget: f(4)}, aggregator.AlgoCEFedGNN, 4, privacy.Exact, false},
		{"no target", Privacy{NodeTarget: f(0)}, aggregator.AlgoCEFedGNN, 0, privacy.RDP, false},
		{"rdp asked for", Privacy{Accountant: "rdp"}, aggregator.AlgoCEFedGNN, deploy.DefaultAMLNodeTarget, privacy.RDP, false},
		{"both σ0 and a target", Privacy{NodeTarget: f(4), EmbSigma: 0.5}, aggregator.AlgoCEFedGNN, 0, 0, true},
		{"a target for fedavg", Privacy{NodeTarget: f(4)}, aggregator.AlgoFedAvg, 0, 0, true},
		{"a NaN target", Privacy{NodeTarget: f(nan())}, aggregator.AlgoCEFedGNN, 0, 0, true},
		{"an unknown accountant", Privacy{Accountant: "moments"}, aggregator.AlgoCEFedGNN, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := tc.p.resolve(deploy.TaskAML, tc.algo, 3)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if sp.NodeTarget != tc.target || sp.Accountant != tc.acc {
				t.Errorf("target %v, accountant %v; want %v, %v", sp.NodeTarget, sp.Accountant, tc.target, tc.acc)
			}
			if tc.target > 0 && sp.EmbReleases != 3 {
				t.Errorf("planned releases %d, want 3", sp.EmbReleases)
			}
		})
	}
}

func nan() float64 { var z float64; return z / z }
