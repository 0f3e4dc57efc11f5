package aggregator

import (
	"testing"
	"time"

	"graphfed/bus"
)

func TestHelloGuard(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(from string, sec float64, seq uint64) bus.Envelope {
		return bus.Envelope{From: from, Kind: bus.KindHello, Seq: seq, Time: start.Add(time.Duration(sec * float64(time.Second))).UnixNano()}
	}
	type step struct {
		env    bus.Envelope
		replay bool
	}
	for _, tc := range []struct {
		name  string
		skew  time.Duration
		steps []step
	}{
		{"fresh hellos and retries", time.Second, []step{{at("a", 0.1, 1), false}, {at("a", 1.1, 2), false}, {at("b", 0.5, 9), false}}},
		{"within the skew", time.Second, []step{{at("a", -0.5, 1), false}}},
		{"before the run", time.Second, []step{{at("a", -1.5, 1), true}, {at("a", 0.2, 2), false}}},
		{"no skew", -1, []step{{at("a", -0.001, 1), true}}},
		{"copy of the last", time.Second, []step{{at("a", 2, 5), false}, {at("a", 2, 5), true}}},
		{"older than the last", time.Second, []step{{at("a", 2, 5), false}, {at("a", 1, 4), true}}},
		{"same time, later seq", time.Second, []step{{at("a", 2, 5), false}, {at("a", 2, 6), false}}},
		{"a refused replay does not move the mark", time.Second, []step{{at("a", 2, 5), false}, {at("a", -3, 1), true}, {at("a", 2, 5), true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewHelloGuard(start, tc.skew)
			for i, s := range tc.steps {
				err := g.Check(s.env)
				if (err != nil) != s.replay || (err != nil && bus.ReasonOf(err) != bus.ReasonReplay) {
					t.Fatalf("step %d (%s seq %d): %v, want replay %v", i, s.env.From, s.env.Seq, err, s.replay)
				}
			}
		})
	}
}
