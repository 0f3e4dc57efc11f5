package aggregator

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func secs(xs ...float64) []time.Duration {
	var out []time.Duration
	for _, x := range xs {
		out = append(out, time.Duration(x*float64(time.Second)))
	}
	return out
}

func testPolicy(factor float64, window int, samples ...float64) deadlinePolicy {
	p := newDeadlinePolicy(Config{RoundTimeout: 10 * time.Second, DeadlineFactor: factor, DeadlineCap: 100 * time.Second, DeadlineWindow: window})
	for _, d := range secs(samples...) {
		p.observe(d)
	}
	return p
}

func TestDeadlinePolicyBudget(t *testing.T) {
	tests := []struct {
		name    string
		p       deadlinePolicy
		kept    []time.Duration
		median  time.Duration
		budget  time.Duration
		comment string
	}{
		{"off: the floor whatever is measured", testPolicy(0, 4, 30, 40), nil, 0, 10 * time.Second, ""},
		{"nothing measured: the floor", testPolicy(3, 4), nil, 0, 10 * time.Second, ""},
		{"below the floor: the floor", testPolicy(3, 4, 1, 2, 3), secs(1, 2, 3), 2 * time.Second, 10 * time.Second, ""},
		{"factor times the median", testPolicy(3, 4, 5, 30, 7), secs(5, 30, 7), 7 * time.Second, 21 * time.Second, ""},
		{"even count: mean of the middle two", testPolicy(2, 4, 4, 8, 6, 100), secs(4, 8, 6, 100), 7 * time.Second, 14 * time.Second, ""},
		{"window keeps the latest", testPolicy(2, 3, 90, 90, 90, 6, 8, 7), secs(6, 8, 7), 7 * time.Second, 14 * time.Second, ""},
		{"the cap bounds the budget", testPolicy(3, 4, 40, 50), secs(40, 50), 45 * time.Second, 100 * time.Second, ""},
		{"a sample beyond the cap is clipped to it", testPolicy(1, 4, 5000), secs(100), 100 * time.Second, 100 * time.Second, ""},
		{"non-positive samples are ignored", testPolicy(3, 4, 0, -5, 20), secs(20), 20 * time.Second, 60 * time.Second, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.Equal(tc.p.samples, tc.kept) {
				t.Errorf("kept %v, want %v", tc.p.samples, tc.kept)
			}
			if got := tc.p.median(); got != tc.median {
				t.Errorf("median %v, want %v", got, tc.median)
			}
			if got := tc.p.budget(); got != tc.budget {
				t.Errorf("budget %v, want %v", got, tc.budget)
			}
		})
	}
}

func TestDeadlinePolicyExtension(t *testing.T) {
	on, off := testPolicy(3, 4), testPolicy(0, 4)
	open := at(0)
	view := func(deadline, now float64, in, live int, starved bool) roundView {
		return roundView{openedAt: open, deadline: at(deadline), now: at(now), in: in, live: live, starved: starved}
	}
	tests := []struct {
		name string
		p    deadlinePolicy
		r    roundView
		want time.Time // zero: no extension, the round closes
	}{
		{"empty with live clients: one more floor", on, view(10, 10, 0, 3, false), at(20)},
		{"checked late: a floor from now", on, view(10, 35, 0, 3, false), at(45)},
		{"the last extension stops at the cap", on, view(95, 95, 0, 3, false), at(100)},
		{"at the cap: closes", on, view(100, 100, 0, 3, false), time.Time{}},
		{"an update in: closes", on, view(10, 10, 1, 3, false), time.Time{}},
		{"every client dead or gone: closes", on, view(10, 10, 0, 0, false), time.Time{}},
		{"starved by an earlier empty round: closes", on, view(10, 10, 0, 3, true), time.Time{}},
		{"adaptation off: closes", off, view(10, 10, 0, 3, false), time.Time{}},
		{"deadline not reached: nothing to extend", on, view(10, 9, 0, 3, false), time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.p.extension(tc.r)
			if ok != !tc.want.IsZero() || !got.Equal(tc.want) {
				t.Fatalf("extension %v %v, want %v", got, ok, tc.want)
			}
		})
	}
}

func TestDeadlineConfigValidate(t *testing.T) {
	base := Config{Algo: AlgoFedAvg, Rounds: 1, MinClients: 1, RoundTimeout: 10 * time.Second}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		ok   bool
	}{
		{"off", func(c *Config) {}, true},
		{"factor 3", func(c *Config) { c.DeadlineFactor = 3 }, true},
		{"factor below 1", func(c *Config) { c.DeadlineFactor = 0.5 }, false},
		{"negative factor", func(c *Config) { c.DeadlineFactor = -1 }, false},
		{"cap below the floor", func(c *Config) { c.DeadlineFactor, c.DeadlineCap = 3, time.Second }, false},
		{"negative window", func(c *Config) { c.DeadlineWindow = -1 }, false},
	} {
		c := base
		tc.edit(&c)
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// adaptiveConfig is a machine whose deadline adapts: a 1 s floor, a 20 s
// cap.
func adaptiveConfig() Config {
	return Config{Rounds: 3, RoundTimeout: time.Second, DeadlineFactor: 3, DeadlineCap: 20 * time.Second}
}

// TestMachineEmptyRoundWaitsForLiveClients: with nothing measured, a round
// whose clients all train longer than the floor is extended instead of
// closing empty, and the first update sizes the round.
func TestMachineEmptyRoundWaitsForLiveClients(t *testing.T) {
	m := newTestMachine(t, adaptiveConfig())
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	var adapted []DeadlineAdapted
	step := func(ev Event) []Action {
		acts := m.Step(ev)
		for _, a := range acts {
			if d, ok := a.(DeadlineAdapted); ok {
				adapted = append(adapted, d)
			}
		}
		return acts
	}
	for s := 1.0; s < 5; s += 0.5 {
		if rc, ok := find[RoundClosed](step(Tick{at(s)})); ok {
			t.Fatalf("round closed empty at %vs while both clients live: %+v", s, rc)
		}
	}
	if len(adapted) == 0 || adapted[0].Reason != AdaptEmpty || adapted[0].Deadline != at(2) {
		t.Fatalf("want an empty-round extension to +2s first, got %+v", adapted)
	}
	// a's update after 5 s: the round may now last 3 × 5 s.
	step(UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1, 1}, Took: 4 * time.Second, Now: at(5)})
	last := adapted[len(adapted)-1]
	if last.Reason != AdaptMeasured || last.Budget != 15*time.Second || last.Median != 5*time.Second || m.Deadline() != at(15) {
		t.Fatalf("after the first update: %+v, deadline %v", last, m.Deadline().Sub(t0))
	}
	if _, ok := find[RoundClosed](step(Tick{at(14)})); ok {
		t.Fatal("closed before the measured deadline")
	}
	acts := step(UpdateIn{Client: "b", Round: 1, Weight: 1, Params: []float32{3, 3}, Took: 7 * time.Second, Now: at(14.5)})
	rc, ok := find[RoundClosed](acts)
	if !ok || rc.Reason != "quorum" || !reflect.DeepEqual(rc.In, []string{"a", "b"}) || rc.Budget != 20*time.Second || rc.Extensions != 4 {
		// b's 14.5 s raised the budget to the 20 s cap before the close.
		t.Fatalf("want round 1 closed by quorum with both in, budget 20s, 4 extensions; got %+v", rc)
	}
	// Round 2 opens sized by the median of 5 s and 14.5 s: 3 × 9.75 s,
	// capped at 20 s.
	d, ok := adapted[len(adapted)-1], len(adapted) > 0
	if o, _ := find[OpenRound](acts); !ok || d.Round != 2 || d.Budget != 20*time.Second || d.Median != 9750*time.Millisecond ||
		o.Deadline != at(14.5).Add(20*time.Second) {
		t.Fatalf("round 2: adapted %+v, open %+v", d, o)
	}
}

// TestMachineEmptyRoundWithoutLiveClientsCloses: the extension needs
// someone to wait for, and stops at the cap, so a job whose clients all
// died or left still ends.
func TestMachineEmptyRoundWithoutLiveClientsCloses(t *testing.T) {
	t.Run("all left", func(t *testing.T) {
		m := newTestMachine(t, adaptiveConfig())
		m.Step(join("a", 0))
		m.Step(join("b", 0))
		m.Step(Leave{Client: "a", Now: at(0.2)})
		m.Step(Leave{Client: "b", Now: at(0.3)})
		rc, ok := find[RoundClosed](m.Step(Tick{at(1)}))
		if !ok || rc.Reason != "deadline" || len(rc.In) != 0 {
			t.Fatalf("want an empty deadline close at the floor, got %+v", rc)
		}
	})
	t.Run("all silent: the cap, then the budget", func(t *testing.T) {
		cfg := adaptiveConfig()
		cfg.Rounds, cfg.MissedToDead = 4, 2
		m := newTestMachine(t, cfg)
		m.Step(join("a", 0))
		m.Step(join("b", 0))
		var closes []RoundClosed
		for s := 0.5; s < 200 && !m.Finished(); s += 0.5 {
			for _, a := range m.Step(Tick{at(s)}) {
				if rc, ok := a.(RoundClosed); ok {
					closes = append(closes, rc)
				}
			}
		}
		if !m.Finished() || len(closes) != 4 {
			t.Fatalf("job did not end: %d closes", len(closes))
		}
		// Round 1 waits to its cap; round 2 (starved) closes at the floor
		// and declares both dead; rounds 3 and 4 have nobody to wait for.
		for i, want := range []time.Duration{20 * time.Second, time.Second, time.Second, time.Second} {
			if closes[i].Duration != want || len(closes[i].In) != 0 {
				t.Errorf("round %d: %+v, want an empty close after %v", i+1, closes[i], want)
			}
		}
		if !reflect.DeepEqual(closes[1].Dead, []string{"a", "b"}) {
			t.Errorf("round 2 dead %v", closes[1].Dead)
		}
	})
	t.Run("an update ends the starvation", func(t *testing.T) {
		m := newTestMachine(t, adaptiveConfig())
		m.Step(join("a", 0))
		m.Step(join("b", 0))
		m.Step(Tick{at(20)}) // round 1 closes empty at its cap
		// a's late update of round 1: it took 2 s, the next deadlines fit
		// 3 × 2 s, and extensions resume.
		m.Step(UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1, 1}, Took: 2 * time.Second, Now: at(20.5)})
		if m.Deadline() != at(26) {
			t.Fatalf("round 2 deadline +%v, want +26s", m.Deadline().Sub(t0))
		}
		if rc, ok := find[RoundClosed](m.Step(Tick{at(26)})); ok {
			t.Fatalf("round 2 closed empty although an update came since the starved round: %+v", rc)
		}
	})
}

// TestMachineDeadlineOffKeepsTheFloor: without adaptation an empty round
// closes at RoundTimeout and nothing is measured.
func TestMachineDeadlineOffKeepsTheFloor(t *testing.T) {
	cfg := adaptiveConfig()
	cfg.DeadlineFactor = 0
	m := newTestMachine(t, cfg)
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	acts := m.Step(Tick{at(1)})
	rc, ok := find[RoundClosed](acts)
	if !ok || rc.Reason != "deadline" || rc.Budget != 0 {
		t.Fatalf("want the old deadline close, got %+v", acts)
	}
	if _, ok := find[DeadlineAdapted](acts); ok {
		t.Fatal("adapted with adaptation off")
	}
	if s := m.Snapshot(); s.DeadlinePolicy != nil {
		t.Fatalf("snapshot holds a deadline policy with adaptation off: %+v", s.DeadlinePolicy)
	}
}
