package agent

import (
	"testing"
	"time"

	"graphfed/bus"
)

func TestRunGuard(t *testing.T) {
	id := func(sec int64) string {
		r, err := bus.NewRunID(time.Unix(sec, 0))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	old, cur, later := id(10), id(20), id(30)
	type step struct {
		heard  string // Heard before the check, when set
		body   any
		replay bool
		known  string // the run known after the step
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"done before joining", []step{{body: &bus.Done{Run: cur}, replay: true}}},
		{"done of the run", []step{{heard: cur, body: &bus.Done{Run: cur}, known: cur}}},
		{"done of an earlier run", []step{{heard: cur, body: &bus.Done{Run: old}, replay: true, known: cur}}},
		{"done without a run", []step{{heard: cur, body: &bus.Done{}, replay: true, known: cur}}},
		{"done of a later run", []step{{heard: cur, body: &bus.Done{Run: later}, known: later}}},
		{"round of an earlier run", []step{{heard: cur, body: &bus.RoundOpen{Round: 9, Run: old}, replay: true, known: cur}}},
		{"a later run is adopted", []step{{heard: cur, body: &bus.RoundOpen{Round: 2, Run: later}, known: later},
			{body: &bus.Done{Run: cur}, replay: true, known: later}}},
		{"an earlier hello reply is not adopted", []step{{heard: cur, body: &bus.Model{}, known: cur}, {heard: old, body: &bus.Done{Run: old}, replay: true, known: cur}}},
		{"other bodies pass", []step{{body: &bus.Model{Round: 1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g RunGuard
			for i, s := range tc.steps {
				if s.heard != "" {
					g.Heard(s.heard)
				}
				err := g.Check(s.body, true)
				if (err != nil) != s.replay || (err != nil && bus.ReasonOf(err) != bus.ReasonReplay) {
					t.Fatalf("step %d: %v, want replay %v", i, err, s.replay)
				}
				if g.Run() != s.known {
					t.Fatalf("step %d: knows run %q, want %q", i, g.Run(), s.known)
				}
			}
		})
	}
}
