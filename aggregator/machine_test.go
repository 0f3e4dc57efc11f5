package aggregator

import (
	"math"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func newTestMachine(t *testing.T, cfg Config) *Machine {
	t.Helper()
	if cfg.Algo == "" {
		cfg.Algo = AlgoFedAvg
	}
	if cfg.Rounds == 0 {
		cfg.Rounds = 3
	}
	if cfg.MinClients == 0 {
		cfg.MinClients = 2
	}
	if cfg.RoundTimeout == 0 {
		cfg.RoundTimeout = 10 * time.Second
	}
	m, err := NewMachine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func join(id string, sec float64) Join {
	return Join{Client: id, SchemaHash: "h", NumParams: 2, Weight: 1000, Now: at(sec)}
}

func upd(id string, round uint64, sec float64, w float64, p ...float32) UpdateIn {
	return UpdateIn{Client: id, Round: round, BaseRound: round - 1, Weight: w, Params: p, Now: at(sec)}
}

func find[T Action](acts []Action) (T, bool) {
	for _, a := range acts {
		if x, ok := a.(T); ok {
			return x, true
		}
	}
	var zero T
	return zero, false
}

func TestMachineRounds(t *testing.T) {
	type step struct {
		ev    Event
		check func(t *testing.T, acts []Action)
	}
	opened := func(round uint64) func(*testing.T, []Action) {
		return func(t *testing.T, acts []Action) {
			o, ok := find[OpenRound](acts)
			if !ok || o.Round != round {
				t.Fatalf("want round %d opened, got %#v", round, acts)
			}
		}
	}
	closedBy := func(round uint64, reason string, in, late []string) func(*testing.T, []Action) {
		return func(t *testing.T, acts []Action) {
			c, ok := find[RoundClosed](acts)
			if !ok {
				t.Fatalf("want round %d closed, got %#v", round, acts)
			}
			if c.Round != round || c.Reason != reason || !reflect.DeepEqual(c.In, in) || !reflect.DeepEqual(c.Late, late) {
				t.Fatalf("closed %+v, want round %d by %s in %v late %v", c, round, reason, in, late)
			}
		}
	}
	dropped := func(reason string) func(*testing.T, []Action) {
		return func(t *testing.T, acts []Action) {
			d, ok := find[Dropped](acts)
			if !ok || d.Reason != reason {
				t.Fatalf("want drop %q, got %#v", reason, acts)
			}
		}
	}
	nothing := func(t *testing.T, acts []Action) {
		if len(acts) != 0 {
			t.Fatalf("want no action, got %#v", acts)
		}
	}
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"opens at min clients and closes at quorum", Config{}, []step{
			{join("a", 0), func(t *testing.T, acts []Action) {
				if _, ok := find[OpenRound](acts); ok {
					t.Fatal("opened with one of two clients")
				}
			}},
			{join("b", 1), opened(1)},
			{upd("a", 1, 2, 1, 1, 1), nothing},
			{upd("b", 1, 3, 3, 5, 5), closedBy(1, "quorum", []string{"a", "b"}, nil)},
		}},
		{"deadline closes without the slow client", Config{}, []step{
			{join("a", 0), nil},
			{join("b", 0), opened(1)},
			{upd("a", 1, 1, 1, 1, 1), nothing},
			{Tick{at(9.9)}, nothing},
			{Tick{at(10)}, closedBy(1, "deadline", []string{"a"}, []string{"b"})},
		}},
		{"duplicate update is dropped", Config{MinClients: 1, Quorum: 2}, []step{
			{join("a", 0), opened(1)},
			{join("b", 0), nil},
			{upd("a", 1, 1, 1, 1, 1), nothing},
			{upd("a", 1, 2, 1, 1, 1), dropped("duplicate")},
		}},
		{"unknown client is dropped", Config{}, []step{
			{upd("x", 1, 1, 1, 1, 1), dropped("unknown_client")},
		}},
		{"wrong length is dropped", Config{}, []step{
			{join("a", 0), nil},
			{join("b", 0), opened(1)},
			{upd("a", 1, 1, 1, 1, 1, 1), dropped("shape")},
		}},
		{"late update dropped by default", Config{}, []step{
			{join("a", 0), nil},
			{join("b", 0), opened(1)},
			{upd("a", 1, 1, 1, 1, 1), nothing},
			{Tick{at(10)}, opened(2)},
			{upd("b", 1, 11, 1, 1, 1), dropped("late")},
		}},
		{"schema mismatch is refused", Config{}, []step{
			{join("a", 0), nil},
			{Join{Client: "b", SchemaHash: "other", NumParams: 2, Now: at(0)}, func(t *testing.T, acts []Action) {
				r, _ := find[ReplyJoin](acts)
				if r.Accepted {
					t.Fatal("accepted a client with another schema")
				}
			}},
		}},
		{"leave lets the round close at quorum", Config{}, []step{
			{join("a", 0), nil},
			{join("b", 0), opened(1)},
			{upd("a", 1, 1, 1, 1, 1), nothing},
			{Leave{Client: "b", Now: at(2)}, closedBy(1, "quorum", []string{"a"}, nil)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, tc.cfg)
			for i, s := range tc.steps {
				acts := m.Step(s.ev)
				if s.check != nil {
					t.Logf("step %d", i)
					s.check(t, acts)
				}
			}
		})
	}
}

func TestMachineFedAvgWeights(t *testing.T) {
	m := newTestMachine(t, Config{})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	m.Step(upd("a", 1, 1, 1, 1, 2))
	acts := m.Step(upd("b", 1, 1, 3, 5, 6))
	p, ok := find[PublishModel](acts)
	if !ok {
		t.Fatalf("no model published: %#v", acts)
	}
	want := []float32{(1*1 + 3*5) / 4.0, (1*2 + 3*6) / 4.0}
	if !reflect.DeepEqual(p.Params, want) {
		t.Fatalf("fedavg %v, want %v", p.Params, want)
	}
	if o, _ := find[OpenRound](acts); o.ModelRound != 1 {
		t.Fatalf("round 2 should start from model 1, got %d", o.ModelRound)
	}
}

func TestMachineStalenessPolicies(t *testing.T) {
	tests := []struct {
		name string
		st   Staleness
		want []float32 // round-2 model when a's round-1 update arrives late
	}{
		{"drop", Staleness{Policy: StaleDrop}, []float32{2, 2}},
		// b's round-2 update (2,2) w=1 plus a's stale (8,8) w=1·0.5.
		{"constant", Staleness{Policy: StaleConstant, Factor: 0.5}, []float32{(2 + 0.5*8) / 1.5, (2 + 0.5*8) / 1.5}},
		// staleness s=1, a=1: factor 1/2.
		{"polynomial", Staleness{Policy: StalePolynomial, A: 1}, []float32{(2 + 0.5*8) / 1.5, (2 + 0.5*8) / 1.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, Config{Staleness: tc.st, Quorum: 1})
			m.Step(join("a", 0))
			m.Step(join("b", 0))
			m.Step(upd("b", 1, 1, 1, 1, 1)) // quorum 1 closes round 1
			m.Step(upd("a", 1, 2, 1, 8, 8)) // late for round 1
			acts := m.Step(upd("b", 2, 3, 1, 2, 2))
			p, ok := find[PublishModel](acts)
			if !ok {
				t.Fatalf("no model: %#v", acts)
			}
			for i := range tc.want {
				if d := p.Params[i] - tc.want[i]; d > 1e-6 || d < -1e-6 {
					t.Fatalf("model %v, want %v", p.Params, tc.want)
				}
			}
		})
	}
}

func TestMachineDeadClientLeavesQuorum(t *testing.T) {
	m := newTestMachine(t, Config{Rounds: 10, MissedToDead: 2})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	now := 0.0
	var reasons []string
	for r := uint64(1); r <= 4; r++ {
		now += 1
		acts := m.Step(upd("a", r, now, 1, 1, 1))
		if c, ok := find[RoundClosed](acts); ok {
			reasons = append(reasons, c.Reason)
			continue
		}
		now += 10
		acts = m.Step(Tick{at(now)})
		c, _ := find[RoundClosed](acts)
		reasons = append(reasons, c.Reason)
	}
	want := []string{"deadline", "deadline", "quorum", "quorum"}
	if !reflect.DeepEqual(reasons, want) {
		t.Fatalf("close reasons %v, want %v", reasons, want)
	}
	// b comes back: it counts again.
	acts := m.Step(upd("b", 5, now+1, 1, 1, 1))
	if _, ok := find[RoundClosed](acts); ok {
		t.Fatal("round closed without a's update after b revived")
	}
}

func TestMachineLateJoinerResyncs(t *testing.T) {
	m := newTestMachine(t, Config{Quorum: 2})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	m.Step(upd("a", 1, 1, 1, 1, 1))
	m.Step(upd("b", 1, 1, 1, 3, 3))
	acts := m.Step(join("c", 2))
	p, ok := find[PublishModel](acts)
	if !ok || p.To != "c" || p.Round != 1 {
		t.Fatalf("late joiner not resynchronized: %#v", acts)
	}
}

func TestMachineFinishes(t *testing.T) {
	m := newTestMachine(t, Config{Rounds: 2})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	for r := uint64(1); r <= 2; r++ {
		m.Step(upd("a", r, float64(r), 1, 1, 1))
		acts := m.Step(upd("b", r, float64(r), 1, 1, 1))
		if r == 2 {
			if _, ok := find[Finished](acts); !ok {
				t.Fatalf("not finished after 2 rounds: %#v", acts)
			}
			if p, _ := find[PublishModel](acts); !p.Final {
				t.Fatal("last model not marked final")
			}
		}
	}
	if acts := m.Step(upd("a", 3, 5, 1, 1, 1)); len(acts) != 1 {
		t.Fatalf("update after finish: %#v", acts)
	}
}

// The aggregate must not depend on the order updates arrive in.
func TestMachineOrderIndependent(t *testing.T) {
	run := func(order []string) []float32 {
		m := newTestMachine(t, Config{MinClients: 3})
		for _, id := range []string{"a", "b", "c"} {
			m.Step(join(id, 0))
		}
		vals := map[string][]float32{"a": {0.1, 0.7}, "b": {0.3, 1e-3}, "c": {1e7, -2}}
		var last []Action
		for _, id := range order {
			last = m.Step(upd(id, 1, 1, 1.7, vals[id]...))
		}
		p, _ := find[PublishModel](last)
		return p.Params
	}
	a := run([]string{"a", "b", "c"})
	b := run([]string{"c", "a", "b"})
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("order changes the model: %v vs %v", a, b)
	}
}

func TestMachineWithheldCountsForQuorumOnly(t *testing.T) {
	m := newTestMachine(t, Config{})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	m.Step(upd("a", 1, 1, 1, 4, 4))
	acts := m.Step(UpdateIn{Client: "b", Round: 1, Weight: 100, Withheld: true, Now: at(2)})
	c, ok := find[RoundClosed](acts)
	if !ok || c.Reason != "quorum" {
		t.Fatalf("withheld update did not complete the quorum: %#v", acts)
	}
	p, _ := find[PublishModel](acts)
	if !reflect.DeepEqual(p.Params, []float32{4, 4}) {
		t.Fatalf("withheld update changed the average: %v", p.Params)
	}
}

func TestMachineAveragesGradientEstimators(t *testing.T) {
	m := newTestMachine(t, Config{Algo: AlgoCEFedGNN})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	m.Step(UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1, 1}, Grad: []float32{2, 0}, Now: at(1)})
	acts := m.Step(UpdateIn{Client: "b", Round: 1, Weight: 3, Params: []float32{5, 5}, Grad: []float32{6, 4}, Now: at(1)})
	p, ok := find[PublishModel](acts)
	if !ok {
		t.Fatalf("no model: %#v", acts)
	}
	if !reflect.DeepEqual(p.Params, []float32{4, 4}) || !reflect.DeepEqual(p.Grad, []float32{5, 3}) {
		t.Fatalf("params %v grad %v, want [4 4] and [5 3]", p.Params, p.Grad)
	}
	if acts := m.Step(UpdateIn{Client: "a", Round: 2, Weight: 1, Params: []float32{1, 1}, Grad: []float32{1}, Now: at(2)}); len(acts) == 0 {
		t.Fatal("a gradient of the wrong length was accepted")
	} else if d, _ := find[Dropped](acts); d.Reason != "shape" {
		t.Fatalf("want shape drop, got %#v", acts)
	}
}

// FedBuff: a round closes after B updates, counting late ones folded in by
// the staleness policy, without waiting for the rest.
func TestMachineBufferedAggregation(t *testing.T) {
	m := newTestMachine(t, Config{MinClients: 3, Buffer: 2, Rounds: 5, Staleness: Staleness{Policy: StalePolynomial, A: 0.5}})
	for _, id := range []string{"a", "b", "c"} {
		m.Step(join(id, 0))
	}
	if acts := m.Step(upd("a", 1, 1, 1, 1, 1)); len(acts) != 0 {
		t.Fatalf("closed after one update: %#v", acts)
	}
	c, ok := find[RoundClosed](m.Step(upd("b", 1, 2, 1, 3, 3)))
	if !ok || c.Reason != "buffer" || !reflect.DeepEqual(c.In, []string{"a", "b"}) {
		t.Fatalf("want round 1 closed by the buffer with a, b: %+v", c)
	}
	// c's round-1 update is late; with a's round-2 update it fills the buffer.
	m.Step(upd("c", 1, 3, 1, 9, 9))
	acts := m.Step(upd("a", 2, 4, 1, 1, 1))
	c2, ok := find[RoundClosed](acts)
	if !ok || c2.Reason != "buffer" || !reflect.DeepEqual(c2.Stale, []string{"c"}) {
		t.Fatalf("want round 2 closed by the buffer with c stale: %#v", acts)
	}
	p, _ := find[PublishModel](acts)
	f := float32(1 / math.Sqrt(2)) // (1+s)^-0.5 with s = 1
	want := (1 + f*9) / (1 + f)
	if d := p.Params[0] - want; d > 1e-5 || d < -1e-5 {
		t.Fatalf("model %v, want %v", p.Params[0], want)
	}
}
