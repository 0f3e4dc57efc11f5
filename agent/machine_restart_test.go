package agent_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"graphfed/agent"
	"graphfed/privacy"
)

// replay drives one agent machine through rounds 1..rounds as a one-client
// FedAvg aggregator would (the update's parameters become the next global
// model), crashing it after crashAfter's update when crashAfter > 0 and
// restarting it over the same ledger; lost says the crash also lost that
// update on the wire, so that the aggregator opens the round again. It
// returns the parameters released per round, bit for bit, and the ledger.
func replay(t *testing.T, rounds, crashAfter uint64, lost bool) (map[uint64][]uint32, []privacy.Entry) {
	t.Helper()
	m, ledger := newMachine(t, nil, 0)
	boot(t, m, 0, 0)
	step(t, m, agent.JoinReply{Accepted: true, Algo: "fedavg", InitSeed: 5, Now: mat(1)})
	released := map[uint64][]uint32{}
	var model []float32
	var modelRound uint64
	sec := 2.0
	for r := uint64(1); r <= rounds; r++ {
		sec++
		acts := step(t, m, agent.RoundOpened{Round: r, ModelRound: modelRound, Now: mat(sec)})
		up := only[agent.PublishUpdate](t, acts)
		if _, dup := released[r]; dup {
			t.Fatalf("round %d released twice", r)
		}
		for _, v := range up.Update.Params.Floats() {
			released[r] = append(released[r], math.Float32bits(v))
		}
		if r == crashAfter {
			step(t, m, agent.Crash{})
			boot(t, m, sec+0.5, 1)
			open := uint64(0)
			if lost {
				open = r // the round is still open at the aggregator
			}
			if acts := step(t, m, agent.JoinReply{Accepted: true, Algo: "fedavg", InitSeed: 5, Round: open, Now: mat(sec + 0.6)}); len(acts) != 0 {
				t.Fatalf("restart after round %d acted on the join: %#v", r, acts)
			}
			if model != nil {
				step(t, m, agent.ModelIn{Round: modelRound, Params: model, Now: mat(sec + 0.7)}) // resent after the join
			}
			if lost {
				// The aggregator announces the open round again: the ledger
				// says it was released, so nothing is trained or charged.
				n := ledgerLen(t, ledger)
				if acts := step(t, m, agent.RoundOpened{Round: r, ModelRound: modelRound, Now: mat(sec + 0.8)}); slices.ContainsFunc(acts,
					func(a agent.MachineAction) bool { _, ok := a.(agent.PublishUpdate); return ok }) {
					t.Fatalf("round %d released again after the restart", r)
				}
				if got := ledgerLen(t, ledger); got != n {
					t.Fatalf("the repeated round %d charged the ledger: %d entries, had %d", r, got, n)
				}
				continue // its update is lost: the aggregator keeps the old model
			}
		}
		model, modelRound = up.Update.Params.Floats(), r
		step(t, m, agent.ModelIn{Round: r, Params: model, Now: mat(sec + 0.9)})
	}
	es, err := ledger.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return released, es
}

// With a fixed noise seed, a crash and restart anywhere in the job gives
// releases bit-identical to an uninterrupted run: the gate derives each
// release's noise from what it releases, not from its incarnation, and
// the learner is deterministic given the model it starts from.
func TestMachineCrashReplayIsBitIdentical(t *testing.T) {
	const rounds = 5
	want, wantLedger := replay(t, rounds, 0, false)
	for r := uint64(1); r < rounds; r++ {
		if slices.Equal(want[r], want[r+1]) {
			t.Fatalf("rounds %d and %d released the same bits: the test could not tell noise streams apart", r, r+1)
		}
	}
	for crash := uint64(1); crash < rounds; crash++ {
		t.Run(fmt.Sprintf("crash after round %d", crash), func(t *testing.T) {
			got, ledger := replay(t, rounds, crash, false)
			for r := uint64(1); r <= rounds; r++ {
				if !slices.Equal(got[r], want[r]) {
					t.Fatalf("round %d released %x, uninterrupted %x", r, got[r], want[r])
				}
			}
			if len(ledger) != len(wantLedger) {
				t.Fatalf("%d ledger entries, uninterrupted %d", len(ledger), len(wantLedger))
			}
			for i := range ledger {
				a, b := ledger[i], wantLedger[i]
				if a.Seq != b.Seq || a.Round != b.Round || a.Channel != b.Channel || a.Rho != b.Rho {
					t.Fatalf("ledger entry %d: %+v, uninterrupted %+v", i, a, b)
				}
			}
		})
	}
}

// A restart never releases a round its ledger holds, even when the update
// was lost and the aggregator opens the round again; the next round
// trains and releases as usual, once.
func TestMachineRestartNeverReleasesARoundTwice(t *testing.T) {
	const rounds = 4
	for crash := uint64(1); crash <= rounds; crash++ {
		released, ledger := replay(t, rounds, crash, true)
		seen := map[uint64]bool{}
		for _, e := range ledger {
			if e.Channel != privacy.ChannelModel {
				continue
			}
			if seen[e.Round] {
				t.Fatalf("crash after round %d: round %d released twice: %+v", crash, e.Round, ledger)
			}
			seen[e.Round] = true
		}
		if len(seen) != rounds || len(released) != rounds {
			t.Fatalf("crash after round %d: %d rounds in the ledger, %d released, want %d", crash, len(seen), len(released), rounds)
		}
	}
}
