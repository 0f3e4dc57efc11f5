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
