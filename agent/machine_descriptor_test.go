package agent_test

import (
	"context"
	"math"
	"testing"

	"graphfed/agent"
	"graphfed/learner"
	"graphfed/privacy"
)

// descLearner is a LogisticLearner with FedGSP's descriptors: K = 1,
// kpr = 2, Dim = 3, rows of norm 5 (the gate clips them to 1).
type descLearner struct {
	*agent.LogisticLearner
	released  bool
	confirmed int
	offered   int
}

func (l *descLearner) Descriptors() (learner.Descriptor, bool) {
	if l.released {
		return learner.Descriptor{}, false
	}
	l.offered++
	rows := make([]float32, 4*1*2*3)
	for r := 0; r < len(rows); r += 3 {
		rows[r], rows[r+1] = 3, 4
	}
	return learner.Descriptor{Orders: 1, Principal: 2, Dim: 3, Rows: rows}, true
}

func (l *descLearner) DescriptorsReleased() { l.released = true; l.confirmed++ }

var _ learner.DescriptorReleaser = (*descLearner)(nil)

func descriptorEntries(t *testing.T, l privacy.Ledger) []privacy.Entry {
	t.Helper()
	es, err := l.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []privacy.Entry
	for _, e := range es {
		if e.Channel == privacy.ChannelDescriptor {
			out = append(out, e)
		}
	}
	return out
}

func newDescMachine(t *testing.T, l learner.Learner, ledger privacy.Ledger, cfg agent.MachineConfig) *agent.Machine {
	t.Helper()
	seed := uint64(1)
	cfg.Job, cfg.Client, cfg.EvalEvery, cfg.Ledger = "j", "lab-1", -1, ledger
	if cfg.Privacy.Delta == 0 {
		cfg.Privacy = privacy.Config{Delta: 1e-4, Seed: &seed}
	}
	m, err := agent.NewMachine(cfg, l)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The descriptors go out once, with the first update, through the gate on
// the descriptor channel (clipped to 1 per row, σ from the config); a
// restarted agent with a fresh learner finds the release in its ledger,
// confirms it to the learner and never releases again.
func TestMachineReleasesDescriptorsOnce(t *testing.T) {
	ledger := privacy.NewMemLedger()
	dl := &descLearner{LogisticLearner: newLogistic(t, 3)}
	m := newDescMachine(t, dl, ledger, agent.MachineConfig{DescriptorSigma: 1e-6})
	step(t, m, agent.Start{Now: mat(0)})
	step(t, m, agent.JoinReply{Accepted: true, Algo: "fedgsp", Reannounced: true, Round: 1, Now: mat(1)})
	for r := uint64(1); r <= 3; r++ {
		up := only[agent.PublishUpdate](t, step(t, m, agent.RoundOpened{Round: r, ModelRound: r - 1, Now: mat(float64(r + 1))}))
		u := up.Update
		if r == 1 {
			if u.Descriptors.Len() != 24 || u.DescOrders != 1 || u.DescPrincipal != 2 || u.DescDim != 3 || u.Params.Len() != 5 {
				t.Fatalf("first update: %d descriptor values of shape %d/%d/%d, %d params", u.Descriptors.Len(), u.DescOrders, u.DescPrincipal, u.DescDim, u.Params.Len())
			}
			f := u.Descriptors.Floats()
			for row := 0; row < 24; row += 3 {
				n := math.Sqrt(float64(f[row]*f[row] + f[row+1]*f[row+1] + f[row+2]*f[row+2]))
				if math.Abs(n-1) > 1e-4 {
					t.Fatalf("released row %d has norm %v: not clipped to 1", row/3, n)
				}
			}
			if len(up.Releases) != 2 || up.Releases[1].Channel != privacy.ChannelDescriptor {
				t.Fatalf("releases %+v, want the model's and the descriptors'", up.Releases)
			}
		} else if u.Descriptors.Len() != 0 || u.DescOrders != 0 {
			t.Fatalf("round %d sent descriptors again", r)
		}
	}
	es := descriptorEntries(t, ledger)
	if len(es) != 1 || es[0].Round != 1 || es[0].Count != 8 || es[0].Dim != 3 || es[0].Clip != 1 || es[0].Sigma != 1e-6 ||
		es[0].Rho != privacy.Sensitivity(privacy.ChannelDescriptor, 1, 8) {
		t.Fatalf("descriptor ledger entries %+v, want one of 8 rows, clip 1, σ 1e-6", es)
	}
	if dl.confirmed != 1 || dl.offered != 1 {
		t.Fatalf("learner asked %d times, confirmed %d times; want once each", dl.offered, dl.confirmed)
	}

	// A restart: a new machine and a new learner over the same ledger.
	fresh := &descLearner{LogisticLearner: newLogistic(t, 3)}
	m2 := newDescMachine(t, fresh, ledger, agent.MachineConfig{DescriptorSigma: 1e-6})
	step(t, m2, agent.Start{Now: mat(10)})
	if fresh.confirmed != 1 || !fresh.released {
		t.Fatalf("the restarted agent did not confirm the earlier release to its learner (%d)", fresh.confirmed)
	}
	step(t, m2, agent.JoinReply{Accepted: true, Algo: "fedgsp", Reannounced: true, Round: 4, Now: mat(11)})
	up := only[agent.PublishUpdate](t, step(t, m2, agent.RoundOpened{Round: 4, ModelRound: 3, Now: mat(12)}))
	if up.Update.Descriptors.Len() != 0 || len(descriptorEntries(t, ledger)) != 1 || fresh.offered != 0 {
		t.Fatalf("the restarted agent released its descriptors again")
	}
	// A crash and restart of the same machine, whose learner remembers.
	step(t, m, agent.Crash{})
	step(t, m, agent.Start{Now: mat(20)})
	if len(descriptorEntries(t, ledger)) != 1 || dl.offered != 1 {
		t.Fatal("a crash and restart released the descriptors again")
	}
}

// A budget refusal sends the update without descriptors, once: the
// channel stays closed, the learner is never told they went out, and the
// parameters keep going.
func TestMachineDescriptorsRefusedByBudget(t *testing.T) {
	ledger := privacy.NewMemLedger()
	dl := &descLearner{LogisticLearner: newLogistic(t, 3)}
	seed := uint64(1)
	m := newDescMachine(t, dl, ledger, agent.MachineConfig{ModelSigma: 100, ModelClip: 1, DescriptorSigma: 1e-3,
		Privacy: privacy.Config{Delta: 1e-4, Seed: &seed, Budget: privacy.Budget{Epsilon: 1}}})
	step(t, m, agent.Start{Now: mat(0)})
	step(t, m, agent.JoinReply{Accepted: true, Algo: "fedgsp", Reannounced: true, Round: 1, Now: mat(1)})
	acts := step(t, m, agent.RoundOpened{Round: 1, Now: mat(2)})
	up := only[agent.PublishUpdate](t, acts)
	spent := only[agent.BudgetSpent](t, acts)
	if spent.Channel != privacy.ChannelDescriptor || up.Update.Descriptors.Len() != 0 || up.Update.DescDim != 0 || up.Update.Params.Len() != 5 {
		t.Fatalf("budget refusal: %+v, update with %d descriptor values and %d params", spent, up.Update.Descriptors.Len(), up.Update.Params.Len())
	}
	acts = step(t, m, agent.RoundOpened{Round: 2, ModelRound: 1, Now: mat(3)})
	up = only[agent.PublishUpdate](t, acts)
	for _, a := range acts {
		if _, ok := a.(agent.BudgetSpent); ok {
			t.Fatal("the closed descriptor channel was tried again")
		}
	}
	if up.Update.Params.Len() != 5 || dl.released || len(descriptorEntries(t, ledger)) != 0 {
		t.Fatalf("after the refusal: %d params, learner told released %v", up.Update.Params.Len(), dl.released)
	}
}
