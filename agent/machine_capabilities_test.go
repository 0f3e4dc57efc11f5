package agent_test

import (
	"context"
	"math"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"graphfed/agent"
	"graphfed/bus"
	"graphfed/learner"
	"graphfed/privacy"
)

// scalarLearner is a LogisticLearner with LPSFed's capabilities: it
// offers ρ for every reference version not yet confirmed and a margin
// every round, and records what the machine handed it.
type scalarLearner struct {
	*agent.LogisticLearner
	algo      string
	version   uint64
	sent      uint64
	margin    float64
	hasMargin bool
}

func (l *scalarLearner) SetAlgo(a string) error { l.algo = a; return nil }
func (l *scalarLearner) SetReference(v uint64, k []float64) {
	if len(k) == 2 {
		l.version = v
	}
}
func (l *scalarLearner) SetMargin(m float64)          { l.margin, l.hasMargin = m, true }
func (l *scalarLearner) HelloCounts() (int, int, int) { return 3, 4, 5 }
func (l *scalarLearner) Scalars(uint64) []learner.Scalar {
	var out []learner.Scalar
	if l.version != l.sent {
		out = append(out, learner.Scalar{Kind: learner.ScalarRho, Value: 0.5, Clip: 10, Version: l.version})
	}
	return append(out, learner.Scalar{Kind: learner.ScalarMargin, Value: 1, Clip: 3.14})
}
func (l *scalarLearner) ScalarReleased(s learner.Scalar) {
	if s.Kind == learner.ScalarRho {
		l.sent = s.Version
	}
}

func payload(t *testing.T, version uint64) []byte {
	t.Helper()
	b, err := msgpack.Marshal(&bus.LPSFedRound{Kernel: bus.Vector{0.5, 0.5}, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The machine attaches a ScalarReleaser's scalars to the update, each
// through the margin channel with its ledger entry among the update's
// releases; ρ goes out only for a new reference version; a personalized
// margin reaches the learner, a non-finite one does not.
func TestMachineReleasesScalars(t *testing.T) {
	ctx := context.Background()
	sl := &scalarLearner{LogisticLearner: newLogistic(t, 3)}
	ledger := privacy.NewMemLedger()
	seed := uint64(1)
	m, err := agent.NewMachine(agent.MachineConfig{Job: "j", Client: "shop-1", EvalEvery: -1, MarginSigma: 0.5,
		Privacy: privacy.Config{Delta: 1e-4, Seed: &seed}, Ledger: ledger}, sl)
	if err != nil {
		t.Fatal(err)
	}
	h := only[agent.SendHello](t, step(t, m, agent.Start{Now: mat(0)}))
	if h.Hello.Users != 3 || h.Hello.Items != 4 || h.Hello.Edges != 5 {
		t.Fatalf("hello %+v without the learner's counts", h.Hello)
	}
	step(t, m, agent.JoinReply{Accepted: true, Algo: "lpsfed", Reannounced: true, Round: 1, Now: mat(1)})
	if sl.algo != "lpsfed" {
		t.Fatal("the learner was not told the algorithm")
	}
	cases := []struct {
		version uint64
		wantRho bool
	}{{1, true}, {1, false}, {2, true}}
	for i, tc := range cases {
		r := uint64(i + 1)
		before := ledgerLen(t, ledger)
		up := only[agent.PublishUpdate](t, step(t, m, agent.RoundOpened{Round: r, ModelRound: r - 1, Payload: payload(t, tc.version), Now: mat(float64(r + 1))}))
		u := up.Update
		if (u.Rho.Len() == 1) != tc.wantRho || u.Margin.Len() != 1 || u.Params.Len() != 5 {
			t.Fatalf("round %d: %d ρ, %d margin, %d params", r, u.Rho.Len(), u.Margin.Len(), u.Params.Len())
		}
		if tc.wantRho && u.RhoVersion != tc.version {
			t.Fatalf("round %d: ρ of version %d, want %d", r, u.RhoVersion, tc.version)
		}
		es, _ := ledger.Entries(ctx)
		fresh := es[before:]
		if len(fresh) != len(up.Releases) || fresh[0].Channel != privacy.ChannelModel {
			t.Fatalf("round %d: releases %+v, new ledger entries %+v", r, up.Releases, fresh)
		}
		for j, e := range fresh[1:] {
			if e.Channel != privacy.ChannelMargin || e.Round != r || up.Releases[j+1].Seq != e.Seq {
				t.Fatalf("round %d: scalar entry %+v", r, e)
			}
		}
		step(t, m, agent.ModelIn{Round: r, Params: u.Params.Floats(), Margin: 0.25 * float64(r), HasMargin: true, Now: mat(float64(r) + 1.5)})
	}
	// The margin of round 3 is loaded when round 4 trains.
	step(t, m, agent.RoundOpened{Round: 4, ModelRound: 3, Payload: payload(t, 2), Now: mat(6)})
	if !sl.hasMargin || sl.margin != 0.75 {
		t.Fatalf("personalized margin %v (%v), want 0.75", sl.margin, sl.hasMargin)
	}
	// A personalized model with a margin that is not finite is refused.
	only[agent.Note](t, step(t, m, agent.ModelIn{Round: 5, Params: []float32{0, 0, 0, 0, 0}, Margin: math.NaN(), HasMargin: true, Now: mat(7)}))
	step(t, m, agent.RoundOpened{Round: 5, ModelRound: 4, Now: mat(8)})
	if sl.margin != 0.75 {
		t.Fatalf("a NaN margin was loaded: %v", sl.margin)
	}
}

// Once the margin channel's budget is spent, scalars stop and the
// parameters keep going.
func TestMachineScalarBudget(t *testing.T) {
	sl := &scalarLearner{LogisticLearner: newLogistic(t, 3)}
	ledger := privacy.NewMemLedger()
	e, _ := privacy.RDPEpsilon(1, 1e-4)
	// Model releases at σ 100 cost next to nothing; one scalar at σ 1
	// (sensitivity 2·clip = 2) costs μ² = 4, over this budget.
	m, err := agent.NewMachine(agent.MachineConfig{Job: "j", Client: "shop-1", EvalEvery: -1, ModelSigma: 100, ModelClip: 1,
		MarginSigma: 1, Privacy: privacy.Config{Delta: 1e-4, Budget: privacy.Budget{Epsilon: e}}, Ledger: ledger}, sl)
	if err != nil {
		t.Fatal(err)
	}
	step(t, m, agent.Start{Now: mat(0)})
	step(t, m, agent.JoinReply{Accepted: true, Algo: "lpsfed", Now: mat(1)})
	acts := step(t, m, agent.RoundOpened{Round: 1, Now: mat(2)})
	if b := only[agent.BudgetSpent](t, acts); b.Channel != privacy.ChannelMargin {
		t.Fatalf("budget spent on %s", b.Channel)
	}
	up := only[agent.PublishUpdate](t, acts)
	if up.Update.Withheld || up.Update.Params.Len() == 0 || up.Update.Rho.Len()+up.Update.Margin.Len() != 0 {
		t.Fatalf("update %+v after the margin budget ran out", up.Update)
	}
	if up2 := only[agent.PublishUpdate](t, step(t, m, agent.RoundOpened{Round: 2, Now: mat(3)})); up2.Update.Params.Len() == 0 {
		t.Fatal("parameters stopped with the margin channel")
	}
}
