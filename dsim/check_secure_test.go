package dsim

import (
	"context"
	"slices"
	"testing"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/secagg"
)

// The ground truth of the secure sums: under the agents' fixed noise
// seeds, shadowRelease reads exactly what each gate released. Checked
// where the release is on the wire, on seeds that aggregate in the clear.
func TestDsimShadowReleaseIsTheRelease(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 12; seed++ {
		cfg := RandomConfig(seed)
		if cfg.SecAgg || cfg.Strategy() == StrategyFedGSP {
			continue
		}
		cfg.shadowCheck = true
		res, err := Run(context.Background(), cfg)
		if err != nil || res.Violation != nil {
			t.Fatalf("seed %d (%s): %v %v", seed, cfg.Strategy(), err, res.Violation)
		}
		checked += res.Counters.ReleasesSent
	}
	if checked == 0 {
		t.Fatal("no release compared")
	}
}

// The secure invariants must be able to fail: a broken aggregator or
// agent, on secure seeds, is caught by name.
func TestDsimCatchesBrokenSecureParties(t *testing.T) {
	secureClose := func(edit func(rc *aggregator.RoundClosed, sc *aggregator.SecureClose)) func([]aggregator.Action) []aggregator.Action {
		return func(acts []aggregator.Action) []aggregator.Action {
			out := slices.Clone(acts)
			for i, a := range out {
				if rc, ok := a.(aggregator.RoundClosed); ok && rc.SecAgg != nil && rc.SecAgg.Failure == "" && len(rc.In) > 0 {
					sc := *rc.SecAgg
					rc.In, sc.Survivors = slices.Clone(rc.In), slices.Clone(sc.Survivors)
					edit(&rc, &sc)
					rc.SecAgg = &sc
					out[i] = rc
				}
			}
			return out
		}
	}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"aggregator publishes another mean than the survivors'", func(c *Config) {
			c.mutate = func(acts []aggregator.Action) []aggregator.Action {
				closes := slices.ContainsFunc(acts, func(a aggregator.Action) bool { _, ok := a.(aggregator.RoundClosed); return ok })
				out := slices.Clone(acts)
				for i, a := range out {
					if p, ok := a.(aggregator.PublishModel); ok && closes {
						p.Params = slices.Clone(p.Params)
						p.Params[0] += 1e-3
						out[i] = p
					}
				}
				return out
			}
		}, InvSecureSum},
		{"aggregator inflates a secure sum's weight", func(c *Config) {
			c.mutate = secureClose(func(rc *aggregator.RoundClosed, _ *aggregator.SecureClose) { rc.Weight++ })
		}, InvSecureSum},
		{"aggregator sums fewer than t survivors", func(c *Config) {
			c.mutate = secureClose(func(rc *aggregator.RoundClosed, sc *aggregator.SecureClose) {
				rc.In = rc.In[:1]
				sc.Survivors = rc.In
			})
		}, InvBelowThreshold},
		{"aggregator publishes the model of a failed round", func(c *Config) {
			c.mutate = secureClose(func(_ *aggregator.RoundClosed, sc *aggregator.SecureClose) { sc.Failure = "below t" })
		}, InvBelowThreshold},
		{"agent reveals both kinds of share", func(c *Config) {
			c.mutateAgent = func(acts []agent.MachineAction) []agent.MachineAction {
				out := slices.Clone(acts)
				for i, a := range out {
					if p, ok := a.(agent.PublishSecAgg); ok {
						if r, ok := p.Msg.(secagg.Reveal); ok && len(r.Self) > 0 {
							r.Mask = append(slices.Clone(r.Mask), r.Self[0])
							out[i] = agent.PublishSecAgg{Msg: r}
						}
					}
				}
				return out
			}
		}, InvBothKinds},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sum, err := RunSeeds(context.Background(), Seeds{First: 1, Count: 24, SecureOnly: true, MaxFailures: 1,
				Config: func(seed uint64) (Config, error) {
					c := RandomConfig(seed)
					tc.edit(&c)
					return c, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Failures) == 0 || sum.Failures[0].Invariant != tc.want {
				t.Fatalf("want %s caught, got %v", tc.want, sum.Failures)
			}
		})
	}
}

// The view check (secagg.Simulate's invariant 5, in dsim's terms) on
// hand-made views of one round of three parties at t = 2.
func TestDsimSecureViewCatchesComputableInputs(t *testing.T) {
	from := func(ids ...string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	peers := map[string][]string{"a": {"b", "c"}, "b": {"a", "c"}, "c": {"a", "b"}}
	tests := []struct {
		name       string
		self, mask map[string]map[string]bool
		summed     []string
		want       string
	}{
		{"survivors' self seeds only", map[string]map[string]bool{"a": from("a", "b"), "b": from("a", "b")}, nil, []string{"a", "b"}, ""},
		{"a dropout's mask key, survivors' self seeds", map[string]map[string]bool{"a": from("a", "b"), "b": from("a", "b")},
			map[string]map[string]bool{"c": from("a", "b")}, []string{"a", "b"}, ""},
		{"both kinds of one party", map[string]map[string]bool{"a": from("b")}, map[string]map[string]bool{"a": from("c")}, nil, InvBothKinds},
		{"self seed and every peer's mask key", map[string]map[string]bool{"a": from("a", "b")},
			map[string]map[string]bool{"b": from("b", "c"), "c": from("b", "c")}, nil, InvInputComputable},
		{"a self seed and one peer's mask key", map[string]map[string]bool{"a": from("b", "c")}, map[string]map[string]bool{"b": from("a", "c")}, nil, ""},
		{"a sum of one", map[string]map[string]bool{"a": from("a", "b"), "b": from("a", "b")},
			nil, []string{"a"}, InvInputComputable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &checker{sec: newSecChecker()}
			r := &secRound{ann: &bus.SecAggRound{Threshold: 2}, self: tc.self, mask: tc.mask, peers: peers, summed: tc.summed}
			if r.self == nil {
				r.self = map[string]map[string]bool{}
			}
			if r.mask == nil {
				r.mask = map[string]map[string]bool{}
			}
			c.sec.rounds[1] = r
			v := c.secureView(1)
			switch {
			case tc.want == "" && v != nil:
				t.Fatalf("flagged an honest view: %v", v)
			case tc.want != "" && (v == nil || v.Invariant != tc.want):
				t.Fatalf("want %s, got %v", tc.want, v)
			}
		})
	}
}

// Machine.Deadline covers the secure stages' waits (the inputs' from the
// keys, the reveals' from the list), so a driver that wakes the machine
// at Deadline alone closes a stage a party dropped out of. Before, it
// returned the keys' deadline throughout, and seeds 6 and 8 stalled
// without the simulator's own stage ticks (noStageTicks).
func TestDsimMachineDeadlineCoversSecureStages(t *testing.T) {
	for seed := uint64(6); seed <= 8; seed++ {
		cfg := RandomConfig(seed)
		cfg.noStageTicks = true
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if v := res.Violation; v != nil {
			t.Fatalf("seed %d without stage ticks: %v", seed, v)
		}
	}
}
