package dsim

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// The checks must be able to fail: fed a broken history directly, the
// checker names the invariant it breaks.
func TestDsimCheckerCatchesBrokenHistories(t *testing.T) {
	t0 := epoch()
	open := func(round uint64, live ...string) aggregator.Snapshot {
		s := aggregator.Snapshot{Round: round, Open: true, Deadline: t0.Add(time.Second)}
		for _, id := range live {
			s.Clients = append(s.Clients, aggregator.ClientSnapshot{ID: id, Live: true})
		}
		return s
	}
	withPending := func(s aggregator.Snapshot, ids ...string) aggregator.Snapshot {
		for _, id := range ids {
			s.Pending = append(s.Pending, aggregator.Contribution{Client: id, Weight: 1})
		}
		return s
	}
	withStale := func(s aggregator.Snapshot, ids ...string) aggregator.Snapshot {
		for _, id := range ids {
			s.Stale = append(s.Stale, aggregator.Contribution{Client: id, Weight: 1})
		}
		return s
	}
	upd := func(id string, round uint64) aggregator.UpdateIn {
		return aggregator.UpdateIn{Client: id, Round: round, Weight: 1, Params: []float32{1}, Now: t0}
	}
	closed := func(round uint64, weight float64, in ...string) []aggregator.Action {
		return []aggregator.Action{aggregator.RoundClosed{Round: round, In: in, Weight: weight, Aggregate: weight > 0}}
	}
	type step struct {
		ev   aggregator.Event
		acts []aggregator.Action
		post aggregator.Snapshot
	}
	tests := []struct {
		name   string
		cfg    Config
		steps  []step
		want   string
		atStep int
	}{
		{"a duplicate update accepted", Config{Quorum: 5}, []step{
			{upd("a", 1), nil, withPending(open(1, "a", "b"), "a")},
			{upd("a", 1), nil, withPending(open(1, "a", "b"), "a")},
		}, InvCountedTwice, 1},
		{"an update listed twice in a close", Config{}, []step{
			{upd("a", 1), closed(1, 2, "a", "a"), open(2, "a")},
		}, InvCountedTwice, 0},
		{"an update in two aggregates", Config{Staleness: aggregator.Staleness{Policy: aggregator.StaleConstant, Factor: 1}}, []step{
			{upd("a", 1), closed(1, 1, "a"), open(2, "a", "b")},
			{upd("a", 1), nil, withStale(open(2, "a", "b"), "a")},
			{upd("b", 2), []aggregator.Action{aggregator.RoundClosed{Round: 2, In: []string{"b"}, Stale: []string{"a"},
				Weight: 2, Aggregate: true}}, open(3, "a", "b")},
		}, InvCountedTwice, 2},
		{"an accepted update left out", Config{Quorum: 2}, []step{
			{upd("a", 1), nil, withPending(open(1, "a", "b"), "a")},
			{upd("b", 1), closed(1, 1, "b"), open(2, "a", "b")},
		}, InvUpdateLost, 1},
		{"a snapshot that forgot a pending update", Config{Quorum: 2}, []step{
			{upd("a", 1), nil, open(1, "a", "b")},
		}, InvUpdateLost, 0},
		{"an aggregate weighing less than its updates", Config{}, []step{
			{upd("a", 1), closed(1, 0.5, "a"), open(2, "a")},
		}, InvUpdateLost, 0},
		{"a close counting a stranger", Config{}, []step{
			{upd("a", 1), closed(1, 2, "a", "x"), open(2, "a")},
		}, InvNotAccepted, 0},
		{"a round left open at quorum", Config{}, []step{
			{upd("a", 1), nil, withPending(open(1, "a"), "a")},
		}, InvRoundOpen, 0},
		{"a round left open with a full buffer", Config{Buffer: 1}, []step{
			{upd("a", 1), nil, withPending(open(1, "a", "b"), "a")},
		}, InvRoundOpen, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newChecker(tc.cfg, &Counters{}, nil)
			c.round, c.open, c.deadline = 1, true, t0.Add(time.Second)
			for i, s := range tc.steps {
				v := c.aggStep(s.ev, s.acts, s.post, t0)
				switch {
				case i < tc.atStep && v != nil:
					t.Fatalf("step %d: premature %v", i, v)
				case i == tc.atStep && (v == nil || v.Invariant != tc.want):
					t.Fatalf("step %d: got %v, want %s", i, v, tc.want)
				case i == tc.atStep:
					return
				}
			}
		})
	}
	c := newChecker(Config{}, &Counters{}, nil)
	c.round, c.open, c.deadline = 1, true, t0.Add(time.Second)
	if v := c.afterStep(true, t0.Add(time.Second)); v != nil {
		t.Fatalf("flagged a round at its deadline instant: %v", v)
	}
	if v := c.afterStep(false, t0.Add(2*time.Second)); v != nil {
		t.Fatalf("flagged a round while the aggregator was down: %v", v)
	}
	if v := c.afterStep(true, t0.Add(2*time.Second)); v == nil || v.Invariant != InvRoundOpen {
		t.Fatalf("a round open past its deadline: %v", v)
	}
}

// release makes one real gated release through an agent machine.
func release(t *testing.T, ledger privacy.Ledger, round uint64) agent.PublishUpdate {
	t.Helper()
	ctx := context.Background()
	m, err := agent.NewMachine(agent.MachineConfig{Job: jobID, Client: "bank-0", EvalEvery: -1, ModelSigma: 2, ModelClip: 1,
		Privacy: privacy.Config{Delta: 1e-4}, Ledger: ledger}, mustLogistic(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []agent.MachineEvent{agent.Start{Now: epoch()}, agent.JoinReply{Accepted: true, Algo: "fedavg", Now: epoch()}} {
		if _, err := m.Step(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	acts, err := m.Step(ctx, agent.RoundOpened{Round: round, Now: epoch()})
	if err != nil || len(acts) != 1 {
		t.Fatalf("%v %#v", err, acts)
	}
	return acts[0].(agent.PublishUpdate)
}

func mustLogistic(t *testing.T) *agent.LogisticLearner {
	t.Helper()
	l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 3, Samples: 16})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestDsimCheckerCatchesBrokenReleases(t *testing.T) {
	ctx := context.Background()
	e1, _ := privacy.RDPEpsilon(1, 1e-4)
	tests := []struct {
		name   string
		budget float64
		tamper func(pu *agent.PublishUpdate, ledger []privacy.Entry) []privacy.Entry
		want   string
	}{
		{"honest release", 0, nil, ""},
		{"release missing from the ledger", 0, func(_ *agent.PublishUpdate, l []privacy.Entry) []privacy.Entry { return nil }, InvReleaseLedger},
		{"release without its entry", 0, func(pu *agent.PublishUpdate, l []privacy.Entry) []privacy.Entry { pu.Releases = nil; return l }, InvReleaseLedger},
		{"entry of another round", 0, func(pu *agent.PublishUpdate, l []privacy.Entry) []privacy.Entry {
			pu.Releases[0].Round, l[0].Round = 7, 7
			return l
		}, InvReleaseLedger},
		{"ledger entry differs from the release", 0, func(_ *agent.PublishUpdate, l []privacy.Entry) []privacy.Entry {
			l[0].Sigma *= 2
			return l
		}, InvReleaseLedger},
		{"over the budget", e1 / 2, nil, InvBudget},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ledger := privacy.NewMemLedger()
			pu := release(t, ledger, 1)
			entries, err := ledger.Entries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.tamper != nil {
				pu.Releases = slices.Clone(pu.Releases)
				entries = tc.tamper(&pu, entries)
			}
			c := newChecker(Config{Delta: 1e-4, Budget: privacy.Budget{Epsilon: tc.budget}}, &Counters{}, nil)
			v := c.agentStep("bank-0", 0, []agent.MachineAction{pu}, entries)
			switch {
			case tc.want == "" && v != nil:
				t.Fatalf("honest release flagged: %v", v)
			case tc.want != "" && (v == nil || v.Invariant != tc.want):
				t.Fatalf("got %v, want %s", v, tc.want)
			}
			if tc.want == "" {
				if v := c.agentStep("bank-0", 0, []agent.MachineAction{pu}, entries); v == nil || v.Invariant != InvReleaseLedger {
					t.Fatalf("one release published twice: %v", v)
				}
			}
		})
	}
}

// End to end: a deliberately broken aggregator or agent inside the
// simulator is caught within a few seeds, by the right invariant.
func TestDsimCatchesBrokenParties(t *testing.T) {
	closeEdit := func(edit func(rc *aggregator.RoundClosed)) func([]aggregator.Action) []aggregator.Action {
		return func(acts []aggregator.Action) []aggregator.Action {
			out := slices.Clone(acts)
			for i, a := range out {
				if rc, ok := a.(aggregator.RoundClosed); ok && len(rc.In) > 0 {
					rc.In = slices.Clone(rc.In)
					edit(&rc)
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
		{"aggregator counts an update twice", func(c *Config) {
			c.mutate = closeEdit(func(rc *aggregator.RoundClosed) { rc.In = append(rc.In, rc.In[0]) })
		}, InvCountedTwice},
		{"aggregator forgets an update", func(c *Config) {
			c.mutate = closeEdit(func(rc *aggregator.RoundClosed) { rc.In = rc.In[1:] })
		}, InvUpdateLost},
		{"aggregator inflates a round's weight", func(c *Config) {
			c.mutate = closeEdit(func(rc *aggregator.RoundClosed) { rc.Weight = 2*rc.Weight + 1 })
		}, InvCountedTwice},
		{"agent publishes without its ledger entry", func(c *Config) {
			c.mutateAgent = func(acts []agent.MachineAction) []agent.MachineAction {
				out := slices.Clone(acts)
				for i, a := range out {
					if pu, ok := a.(agent.PublishUpdate); ok {
						pu.Releases = nil
						out[i] = pu
					}
				}
				return out
			}
		}, InvReleaseLedger},
		{"aggregator refuses a flood message for the wrong reason", func(c *Config) {
			c.Flood = 3
			c.mutateReject = func(reason string) string {
				if reason == bus.ReasonShape {
					return bus.ReasonGarbage
				}
				return reason
			}
		}, InvNotRejected},
		{"agent publishes embeddings without their ledger entry", func(c *Config) {
			c.mutateAgent = func(acts []agent.MachineAction) []agent.MachineAction {
				out := slices.Clone(acts)
				for i, a := range out {
					if pe, ok := a.(agent.PublishEmbeddings); ok {
						pe.Releases = slices.Clone(pe.Releases)
						pe.Releases[0].Seq += 1000 // an entry no ledger holds
						out[i] = pe
					}
				}
				return out
			}
		}, InvReleaseLedger},
		{"agent sends embeddings to a stranger", func(c *Config) {
			c.mutateAgent = func(acts []agent.MachineAction) []agent.MachineAction {
				out := slices.Clone(acts)
				for i, a := range out {
					if pe, ok := a.(agent.PublishEmbeddings); ok {
						pe.To = "bank-9"
						out[i] = pe
					}
				}
				return out
			}
		}, InvNotNeighbour},
		{"aggregator sends a personalized model to another client", func(c *Config) {
			c.mutate = func(acts []aggregator.Action) []aggregator.Action {
				out := slices.Clone(acts)
				for i, a := range out {
					if p, ok := a.(aggregator.PublishModel); ok && p.To == "bank-0" {
						p.To = "bank-1"
						out[i] = p
					}
				}
				return out
			}
		}, InvMisrouted},
		{"agent publishes descriptors without their ledger entry", func(c *Config) {
			c.mutateAgent = func(acts []agent.MachineAction) []agent.MachineAction {
				out := slices.Clone(acts)
				for i, a := range out {
					if pu, ok := a.(agent.PublishUpdate); ok && pu.Update.Descriptors.Len() > 0 {
						pu.Releases = pu.Releases[:len(pu.Releases)-1] // the descriptors' release is the last
						out[i] = pu
					}
				}
				return out
			}
		}, InvReleaseLedger},
		{"aggregator drops honest descriptors", func(c *Config) {
			c.mutate = func(acts []aggregator.Action) []aggregator.Action {
				if !slices.ContainsFunc(acts, func(a aggregator.Action) bool { _, ok := a.(aggregator.RoundClosed); return ok }) {
					return acts
				}
				// Beside a close, so that only the descriptor check can see it.
				return append(slices.Clone(acts), aggregator.Dropped{Client: "bank-0", Round: 1 << 30, Reason: aggregator.ReasonDescriptorShape})
			}
		}, InvHonestRefused},
		{"job cut short", func(c *Config) { c.MaxSteps = 10 }, InvNoProgress},
		// Seeds 15 and 16 run FedAvgM (serverOptOf): an aggregator that
		// comes back without its moments is another machine.
		{"aggregator restored without its server optimizer's moments", func(c *Config) {
			if c.ServerOpt.Rule != "" {
				c.loseStrategyState, c.Faults.AggCrashes = true, 3
			}
		}, InvRestoreDiffers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sum, err := RunSeeds(context.Background(), Seeds{First: 1, Count: 20, MaxFailures: 1, TraceDir: dir,
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
			// The failing seed's trace is written, and ends at the violation.
			v := sum.Failures[0]
			b, err := os.ReadFile(v.TraceFile)
			if err != nil || !strings.Contains(string(b), "VIOLATION "+tc.want) || filepath.Dir(v.TraceFile) != dir {
				t.Fatalf("trace %q of seed %d: %v\n%.300s", v.TraceFile, v.Seed, err, b)
			}
		})
	}
}

// FedGSP's descriptors are released once per client in all: a second
// release, in a later round of the same life or after a restart, breaks
// released-twice; an update whose descriptors have no release of their
// own, or another shape than their entry, breaks release-without-ledger.
func TestDsimCheckerDescriptorsOnce(t *testing.T) {
	ctx := context.Background()
	descriptors := func(t *testing.T, g *privacy.Gate, round uint64) privacy.Released {
		t.Helper()
		rel, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelDescriptor, Round: round,
			Flat: []float32{0.6, 0.8, 1, 0, 0, 1, 0.8, -0.6}, Dim: 2, Sigma: 1, Clip: 1})
		if err != nil {
			t.Fatal(err)
		}
		return rel
	}
	update := func(g *privacy.Gate, rel privacy.Released, orders, principal, dim int) agent.PublishUpdate {
		return agent.PublishUpdate{Update: bus.Update{Round: rel.Entry().Round, Descriptors: bus.FromReleased(rel),
			DescOrders: orders, DescPrincipal: principal, DescDim: dim, Ledger: bus.NewLedgerRef(g.Head())},
			Releases: []privacy.Entry{rel.Entry()}}
	}
	tests := []struct {
		name string
		// second, when set, is a later descriptor release: its round and
		// the life it comes in.
		second     bool
		round      uint64
		life       uint64
		dropEntry  bool // the update goes without its descriptors' release
		orders     int  // the update's DescOrders (the release is 1·1·4 rows of 2)
		wantSecond string
		wantFirst  string
	}{
		{name: "once", orders: 1},
		{name: "again in a later round", second: true, round: 3, orders: 1, wantSecond: InvReleasedTwice},
		{name: "again after a restart", second: true, round: 2, life: 1, orders: 1, wantSecond: InvReleasedTwice},
		{name: "without their release", dropEntry: true, orders: 1, wantFirst: InvReleaseLedger},
		{name: "another shape than their entry", orders: 2, wantFirst: InvReleaseLedger},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ledger := privacy.NewMemLedger()
			g := gated(t, jobID, "bank-0", ledger)
			c := newChecker(Config{Delta: 1e-4}, &Counters{}, nil)
			pu := update(g, descriptors(t, g, 1), tc.orders, 1, 2)
			if tc.dropEntry {
				pu.Releases = nil
			}
			entries, _ := ledger.Entries(ctx)
			v := c.agentStep("bank-0", 0, []agent.MachineAction{pu}, entries)
			if got := invariantOf(v); got != tc.wantFirst {
				t.Fatalf("first release: %v, want %q", v, tc.wantFirst)
			}
			if !tc.second {
				return
			}
			pu = update(g, descriptors(t, g, tc.round), 1, 1, 2)
			entries, _ = ledger.Entries(ctx)
			v = c.agentStep("bank-0", tc.life, []agent.MachineAction{pu}, entries)
			if got := invariantOf(v); got != tc.wantSecond {
				t.Fatalf("second release: %v, want %q", v, tc.wantSecond)
			}
		})
	}
}

func invariantOf(v *Violation) string {
	if v == nil {
		return ""
	}
	return v.Invariant
}
