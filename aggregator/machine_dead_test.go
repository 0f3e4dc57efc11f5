package aggregator

import (
	"testing"
)

// A dead client stays dead through messages the round drops: garbage of
// the wrong shape, a duplicate, an update from the future, a copy of an
// old round. Only an update the round accepts brings it back.
func TestMachineDroppedUpdateDoesNotRevive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ev     func(now float64) UpdateIn
		reason string
	}{
		{"wrong shape", func(now float64) UpdateIn { return upd("b", 3, now, 1, 1, 1, 1) }, "shape"},
		{"future round", func(now float64) UpdateIn { return upd("b", 9, now, 1, 1, 1) }, "future"},
		{"old round", func(now float64) UpdateIn { return upd("b", 1, now, 1, 1, 1) }, "late"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, Config{Rounds: 10, MissedToDead: 1})
			m.Step(join("a", 0))
			m.Step(join("b", 0))
			now := 0.0
			// Round 1: b misses it and dies; round 2 closes on a alone.
			m.Step(upd("a", 1, 1, 1, 1, 1))
			now = 20
			if c, _ := find[RoundClosed](m.Step(Tick{at(now)})); c.Reason != "deadline" || len(c.Dead) != 1 {
				t.Fatalf("round 1 closed %+v, want b dead at the deadline", c)
			}
			if c, ok := find[RoundClosed](m.Step(upd("a", 2, now+1, 1, 1, 1))); !ok || c.Reason != "quorum" {
				t.Fatalf("round 2: %+v, want a quorum of a alone", c)
			}
			now += 2
			d, ok := find[Dropped](m.Step(tc.ev(now)))
			if !ok || d.Reason != tc.reason {
				t.Fatalf("dropped %+v, want reason %s", d, tc.reason)
			}
			// Round 3 still closes on a alone.
			if c, ok := find[RoundClosed](m.Step(upd("a", 3, now+1, 1, 1, 1))); !ok || c.Reason != "quorum" {
				t.Fatalf("round 3 after b's dropped message: %+v, want a quorum of a alone", c)
			}
			// An accepted update revives b: round 4 waits for both.
			if _, ok := find[RoundClosed](m.Step(upd("b", 4, now+2, 1, 1, 1))); ok {
				t.Fatal("round 4 closed on b alone")
			}
			if c, ok := find[RoundClosed](m.Step(upd("a", 4, now+3, 1, 1, 1))); !ok || len(c.In) != 2 {
				t.Fatalf("round 4: %+v, want both in", c)
			}
		})
	}
}

// However long a job runs, the marks of updates already folded in stay
// bounded by clients × MaxStaleness, and an update older than that is
// dropped as late.
func TestMachineStaleMarksBounded(t *testing.T) {
	const rounds, maxStale = 400, 16
	m := newTestMachine(t, Config{Rounds: rounds + 1, MinClients: 2, Quorum: 1, MaxStaleness: maxStale,
		Staleness: Staleness{Policy: StaleConstant, Factor: 0.5}})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	now := 0.0
	for r := uint64(1); r <= rounds; r++ {
		now++
		// a closes each round; b's update for the previous round arrives late and is folded in.
		if _, ok := find[RoundClosed](m.Step(upd("a", r, now, 1, 1, 1))); !ok {
			t.Fatalf("round %d did not close on a's update", r)
		}
		if r >= 2 {
			if d, ok := find[Dropped](m.Step(upd("b", r-1, now, 1, 1, 1))); ok {
				t.Fatalf("round %d: b's one-round-late update dropped: %+v", r, d)
			}
		}
	}
	if n := len(m.staleBy); n > 2*(maxStale+2) {
		t.Fatalf("%d marks after %d rounds, want at most %d", n, rounds, 2*(maxStale+2))
	}
	now++
	d, ok := find[Dropped](m.Step(upd("b", rounds-maxStale-1, now, 1, 1, 1)))
	if !ok || d.Reason != "late" {
		t.Fatalf("an update %d rounds late: %+v, want dropped as late", maxStale+2, d)
	}
	if _, err := NewMachine(Config{Algo: AlgoFedAvg, Rounds: 1, MinClients: 1, RoundTimeout: 1, MaxStaleness: -1}); err == nil {
		t.Fatal("negative max staleness accepted")
	}
}
