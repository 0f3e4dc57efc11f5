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
	old, cur, later, third := id(10), id(20), id(30), id(40)
	type step struct {
		admitted string   // Admitted before the check, when set
		ended    []string // with admitted
		body     any
		reason   string // the reject's reason; "" to pass
		known    string // the run followed after the step
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"done before joining", []step{{body: &bus.Done{Run: cur}, reason: bus.ReasonReplay}}},
		{"a round before joining passes, not adopted", []step{{body: &bus.RoundOpen{Round: 1, Run: cur}}}},
		{"done of the run", []step{{admitted: cur, body: &bus.Done{Run: cur}, known: cur}}},
		{"done of an earlier run", []step{{admitted: cur, body: &bus.Done{Run: old}, reason: bus.ReasonReplay, known: cur}}},
		{"done without a run", []step{{admitted: cur, body: &bus.Done{}, reason: bus.ReasonReplay, known: cur}}},
		{"done of a later run that does not succeed it", []step{{admitted: cur, body: &bus.Done{Run: later}, reason: bus.ReasonOtherRun, known: cur}}},
		{"done of the successor", []step{{admitted: cur, body: &bus.Done{Run: later, Ended: []string{cur}}, known: later}}},
		{"round of an earlier run", []step{{admitted: cur, body: &bus.RoundOpen{Round: 9, Run: old}, reason: bus.ReasonReplay, known: cur}}},
		// The hang of issue 28: a second aggregator's newer run must not
		// pull the agent off the job's run, whose rounds go on.
		{"a newer run alone is not followed", []step{
			{admitted: cur, body: &bus.RoundOpen{Round: 3, Run: later}, reason: bus.ReasonOtherRun, known: cur},
			{body: &bus.RoundOpen{Round: 3, Run: cur}, known: cur},
			{body: &bus.Done{Run: cur}, known: cur}}},
		{"the successor is followed, the ended run refused", []step{
			{admitted: cur, body: &bus.RoundOpen{Round: 2, Run: later, Ended: []string{old, cur}}, known: later},
			{body: &bus.Done{Run: cur}, reason: bus.ReasonReplay, known: later},
			{body: &bus.RoundOpen{Round: 2, Run: old}, reason: bus.ReasonReplay, known: later}}},
		{"a successor's successor the agent missed", []step{
			{admitted: cur, body: &bus.RoundOpen{Round: 4, Run: third, Ended: []string{cur, later}}, known: third},
			{body: &bus.RoundOpen{Round: 4, Run: later, Ended: []string{cur}}, reason: bus.ReasonReplay, known: third}}},
		{"an ended run cannot come back as a successor", []step{
			{admitted: later, ended: []string{cur}, body: &bus.RoundOpen{Round: 1, Run: cur, Ended: []string{later}}, reason: bus.ReasonReplay, known: later}}},
		{"other bodies pass", []step{{body: &bus.Model{Round: 1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g RunGuard
			for i, s := range tc.steps {
				if s.admitted != "" {
					if err := g.Admitted(s.admitted, s.ended); err != nil {
						t.Fatalf("step %d: admitted: %v", i, err)
					}
				}
				err := g.Check(s.body, true)
				if got := bus.ReasonOf(err); (err != nil) != (s.reason != "") || got != s.reason {
					t.Fatalf("step %d: %v (reason %q), want reason %q", i, err, got, s.reason)
				}
				if g.Run() != s.known {
					t.Fatalf("step %d: follows run %q, want %q", i, g.Run(), s.known)
				}
			}
		})
	}
}

// A peek (adopt unset) takes a successor's message without switching, so
// that the queue's turn still sees the agent's run.
func TestRunGuardPeekDoesNotAdopt(t *testing.T) {
	cur, next := "0000000000000014-0000000000000001", "000000000000001e-0000000000000002"
	var g RunGuard
	if err := g.Admitted(cur, nil); err != nil {
		t.Fatal(err)
	}
	if err := g.Check(&bus.Done{Run: next, Ended: []string{cur}}, false); err != nil || g.Run() != cur {
		t.Fatalf("peek: %v, follows %q; want a pass and %q", err, g.Run(), cur)
	}
}

// A hello reply of a run that ended is refused: the agent follows the run
// that took the job over.
func TestRunGuardRefusesReplyOfEndedRun(t *testing.T) {
	cur, next := "0000000000000014-0000000000000001", "000000000000001e-0000000000000002"
	var g RunGuard
	if err := g.Admitted(next, []string{cur}); err != nil {
		t.Fatal(err)
	}
	if err := g.Admitted(cur, nil); bus.ReasonOf(err) != bus.ReasonReplay || g.Run() != next {
		t.Fatalf("reply of the ended run: %v, follows %q; want a replay and %q", err, g.Run(), next)
	}
}
