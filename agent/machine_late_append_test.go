package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"graphfed/agent"
	"graphfed/privacy"
)

// An agent killed with its ledger append in flight and started again: the
// ledger may store that append only after the restarted agent read its
// chain. The restarted agent never releases a round twice and does not
// stop when its own append of that round is refused: the round counts as
// released in the earlier life. Only the earlier life's entry of another
// round stops it, with an error that says what the ledger holds.
func TestMachineRestartSettlesALateAppendOfTheEarlierLife(t *testing.T) {
	cases := []struct {
		name string
		// prebuilt: the restarted life's gate is built before the late
		// append lands and its machine started after (deploy builds the
		// gate in NewAgent, the machine starts in Run).
		prebuilt bool
		// lateRound is the round the earlier life releases late (seq 3).
		lateRound uint64
		wantErr   string // "" for no error
	}{
		{name: "stored after the restart read the ledger", lateRound: 3},
		{name: "stored between the gate's read and the machine's start", prebuilt: true, lateRound: 3},
		{name: "an entry of another round", lateRound: 4, wantErr: "its model entry of round 4, not a release of model in round 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			// The earlier life releases rounds 1 and 2 (seq 1, 2).
			old, ledger := newMachine(t, nil, 0)
			boot(t, old, 0, 0)
			step(t, old, agent.JoinReply{Accepted: true, Algo: "fedavg", InitSeed: 5, Now: mat(1)})
			for r := uint64(1); r <= 2; r++ {
				only[agent.PublishUpdate](t, step(t, old, agent.RoundOpened{Round: r, Now: mat(float64(r) + 1)}))
			}
			// It is killed with the append of its next round in flight; the
			// restarted life reads the ledger before that append is stored.
			seed := uint64(42)
			cfg := agent.MachineConfig{Job: "j", Client: "bank-1", ModelSigma: 2, ModelClip: 1,
				Privacy: privacy.Config{Delta: 1e-4, Seed: &seed}, Ledger: ledger}
			var now time.Time
			if tc.prebuilt {
				pc := cfg.Privacy
				pc.Job, pc.Client = cfg.Job, cfg.Client
				g, err := privacy.NewGate(ctx, pc, ledger, func() time.Time { return now })
				if err != nil {
					t.Fatal(err)
				}
				cfg.Gate = g
			}
			restarted, err := agent.NewMachine(cfg, newLogistic(t, 7))
			if err != nil {
				t.Fatal(err)
			}
			lateAppend := func() {
				only[agent.PublishUpdate](t, step(t, old, agent.RoundOpened{Round: tc.lateRound, Now: mat(9)}))
			}
			if tc.prebuilt {
				lateAppend()
				now = mat(10)
				boot(t, restarted, 10, 1)
			} else {
				boot(t, restarted, 10, 1)
				lateAppend()
			}
			step(t, restarted, agent.JoinReply{Accepted: true, Algo: "fedavg", InitSeed: 5, Now: mat(11)})

			// The aggregator opens round 3 (the earlier life's update of it,
			// if any, was lost with it).
			now = mat(12)
			acts, err := restarted.Step(ctx, agent.RoundOpened{Round: 3, ModelRound: 2, Now: now})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, privacy.ErrAlreadyReleased) {
					t.Fatalf("round 3 over the earlier life's seq 3 of round %d: %v; want an error saying %q", tc.lateRound, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("round 3: %v", err)
			}
			for _, a := range acts {
				if _, ok := a.(agent.PublishUpdate); ok {
					t.Fatalf("round 3, released in the earlier life, was released again: %#v", acts)
				}
			}
			if restarted.Trained() != 3 {
				t.Fatalf("trained %d, want 3", restarted.Trained())
			}
			// The next round goes out once, after the earlier life's entry.
			now = mat(13)
			up := only[agent.PublishUpdate](t, step(t, restarted, agent.RoundOpened{Round: 4, ModelRound: 2, Now: now}))
			if len(up.Releases) != 1 || up.Releases[0].Seq != 4 || up.Releases[0].Round != 4 {
				t.Fatalf("round 4 releases %+v, want one at seq 4", up.Releases)
			}
			rd, err := privacy.ReadLedger(ctx, ledger, privacy.VerifyOptions{})
			if err != nil || len(rd.Breaks) != 0 || len(rd.Rejected) != 0 || len(rd.Entries) != 4 {
				t.Fatalf("ledger: %d entries, breaks %v, rejects %v, %v", len(rd.Entries), rd.Breaks, rd.Rejected, err)
			}
			for i, e := range rd.Entries {
				if e.Seq != uint64(i+1) || e.Round != uint64(i+1) || e.Channel != privacy.ChannelModel {
					t.Fatalf("ledger entry %d: %+v; want model of round %d", i, e, i+1)
				}
			}
			// Accounted once: the restarted gate holds what a gate built
			// from the ledger holds.
			fresh, err := privacy.NewGate(ctx, privacy.Config{Job: "j", Client: "bank-1", Delta: 1e-4}, ledger, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := restarted.Gate().Spent(1).Client, fresh.Spent(1).Client; a != b {
				t.Fatalf("restarted gate spent ε %v, the ledger %v", a, b)
			}
		})
	}
}

// The earlier life's late append can be of an earlier round than the one
// the restarted life releases: here its descriptors of round 1 (released
// once a job, with the first update), stored after the restarted life read
// its chain at the model entry of round 1. The restarted life's release
// of round 2 is refused over them; its gate accounts them and releases
// round 2 after them, and the machine, told by its gate (no ledger read),
// never releases the descriptors again.
func TestMachineRestartAdoptsALateDescriptorReleaseOfTheEarlierLife(t *testing.T) {
	ctx := context.Background()
	// The earlier life releases round 1: its model (seq 1) and its
	// descriptors (seq 2), on a ledger of its own, so that seq 2 can reach
	// the shared ledger late.
	staging := privacy.NewMemLedger()
	old := newDescMachine(t, &descLearner{LogisticLearner: newLogistic(t, 3)}, staging, agent.MachineConfig{DescriptorSigma: 1e-6})
	step(t, old, agent.Start{Now: mat(0)})
	step(t, old, agent.JoinReply{Accepted: true, Algo: "fedgsp", Reannounced: true, Round: 1, Now: mat(1)})
	only[agent.PublishUpdate](t, step(t, old, agent.RoundOpened{Round: 1, Now: mat(2)}))
	earlier, err := staging.Entries(ctx)
	if err != nil || len(earlier) != 2 || earlier[1].Channel != privacy.ChannelDescriptor {
		t.Fatalf("the earlier life's entries %+v, %v; want the model's and the descriptors'", earlier, err)
	}
	ledger := privacy.NewMemLedger()
	if err := ledger.Append(ctx, earlier[0]); err != nil {
		t.Fatal(err)
	}
	fresh := &descLearner{LogisticLearner: newLogistic(t, 3)}
	restarted := newDescMachine(t, fresh, ledger, agent.MachineConfig{DescriptorSigma: 1e-6})
	step(t, restarted, agent.Start{Now: mat(10)}) // reads seq 1
	if err := ledger.Append(ctx, earlier[1]); err != nil {
		t.Fatal(err)
	}
	step(t, restarted, agent.JoinReply{Accepted: true, Algo: "fedgsp", Reannounced: true, Round: 2, Now: mat(11)})
	up := only[agent.PublishUpdate](t, step(t, restarted, agent.RoundOpened{Round: 2, ModelRound: 1, Now: mat(12)}))
	if up.Update.Params.Len() != 5 || up.Update.Descriptors.Len() != 0 || len(up.Releases) != 1 ||
		up.Releases[0].Seq != 3 || up.Releases[0].Channel != privacy.ChannelModel || up.Releases[0].Round != 2 {
		t.Fatalf("round 2: %d params, %d descriptor values, releases %+v; want the model alone, at seq 3",
			up.Update.Params.Len(), up.Update.Descriptors.Len(), up.Releases)
	}
	if fresh.offered != 0 || fresh.confirmed != 1 || !fresh.released {
		t.Fatalf("learner asked %d times, confirmed %d times; want never asked, confirmed once", fresh.offered, fresh.confirmed)
	}
	// Round 3 neither: the machine keeps it.
	up = only[agent.PublishUpdate](t, step(t, restarted, agent.RoundOpened{Round: 3, ModelRound: 2, Now: mat(13)}))
	if up.Update.Descriptors.Len() != 0 || fresh.offered != 0 || fresh.confirmed != 1 {
		t.Fatal("round 3 released the descriptors")
	}
	rd, err := privacy.ReadLedger(ctx, ledger, privacy.VerifyOptions{})
	if err != nil || len(rd.Breaks) != 0 || len(rd.Rejected) != 0 || len(rd.Entries) != 4 || len(descriptorEntries(t, ledger)) != 1 {
		t.Fatalf("ledger: %+v, breaks %v, rejects %v, %v; want 4 entries, the descriptors once", rd.Entries, rd.Breaks, rd.Rejected, err)
	}
	ref, err := privacy.NewGate(ctx, privacy.Config{Job: "j", Client: "lab-1", Delta: 1e-4}, ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := restarted.Gate().Spent(1).Client, ref.Spent(1).Client; a != b {
		t.Fatalf("restarted gate spent ε %v, the ledger %v", a, b)
	}
}
