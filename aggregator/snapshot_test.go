package aggregator

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// snapshotCase drives a machine into a state a crash can interrupt; then is
// applied to both the original and the restored machine, which must answer
// identically.
type snapshotCase struct {
	name  string
	cfg   Config
	steps []Event
	then  []Event
}

func snapshotCases() []snapshotCase {
	return []snapshotCase{
		{"waiting for joins", Config{}, []Event{join("a", 0)},
			[]Event{join("b", 1), upd("a", 1, 2, 1, 1, 1), upd("b", 1, 3, 1, 3, 3)}},
		{"open round with a pending update", Config{}, []Event{join("a", 0), join("b", 0), upd("a", 1, 1, 2, 1, 2)},
			[]Event{upd("a", 1, 2, 2, 9, 9), upd("b", 1, 3, 1, 4, 5), Tick{at(30)}}},
		{"late update folded in", Config{Quorum: 1, Staleness: Staleness{Policy: StaleConstant, Factor: 0.5}},
			[]Event{join("a", 0), join("b", 0), upd("b", 1, 1, 1, 1, 1), upd("a", 1, 2, 1, 8, 8)},
			[]Event{upd("a", 1, 3, 1, 8, 8), upd("b", 2, 4, 1, 2, 2)}},
		{"dead client", Config{Rounds: 6, MissedToDead: 1}, []Event{join("a", 0), join("b", 0), upd("a", 1, 1, 1, 1, 1), Tick{at(10)}},
			[]Event{upd("a", 2, 11, 1, 2, 2), upd("b", 2, 12, 1, 2, 2)}},
		{"gradient estimators", Config{Algo: AlgoCEFedGNN}, []Event{join("a", 0), join("b", 0),
			UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1, 1}, Grad: []float32{0.1, -3e-7}, Now: at(1)}},
			[]Event{UpdateIn{Client: "b", Round: 1, Weight: 3, Params: []float32{5, 5}, Grad: []float32{6, 4}, Now: at(1)}, join("c", 2)}},
		// The adaptive deadline's samples, extensions and starvation survive
		// a restart: the restored machine sizes and extends rounds alike.
		{"adaptive deadline: extended empty round", adaptiveConfig(), []Event{join("a", 0), join("b", 0), Tick{at(1)}, Tick{at(2)}},
			[]Event{Tick{at(3)}, UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1, 1}, Took: 2 * time.Second, Now: at(3.5)},
				Tick{at(9)}, UpdateIn{Client: "b", Round: 1, Weight: 1, Params: []float32{2, 2}, Now: at(9.5)}, Tick{at(40)}}},
		{"adaptive deadline: measured and starved", adaptiveRounds(5), []Event{join("a", 0), join("b", 0),
			upd("a", 1, 4, 1, 1, 1), upd("b", 1, 5, 1, 1, 1), Tick{at(30)}, Tick{at(50)}},
			[]Event{Tick{at(60)}, upd("a", 3, 61, 1, 1, 1), Tick{at(70)}, Tick{at(100)}}},
		{"finished", Config{Rounds: 1}, []Event{join("a", 0), join("b", 0), upd("a", 1, 1, 1, 1, 1), upd("b", 1, 1, 1, 1, 1)},
			[]Event{upd("a", 2, 2, 1, 1, 1), join("c", 3)}},
	}
}

func TestSnapshotRestoreResumesIdentically(t *testing.T) {
	for _, tc := range snapshotCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, tc.cfg)
			for _, ev := range tc.steps {
				m.Step(ev)
			}
			snap := m.Snapshot()
			b, err := snap.Encode()
			if err != nil {
				t.Fatal(err)
			}
			dec, err := DecodeSnapshot(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(dec, snap) {
				t.Fatalf("snapshot changed through its encoding:\n got %+v\nwant %+v", dec, snap)
			}
			r, err := Restore(dec)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Snapshot(); !reflect.DeepEqual(got, snap) {
				t.Fatalf("restored machine's snapshot differs:\n got %+v\nwant %+v", got, snap)
			}
			for i, ev := range tc.then {
				want, got := m.Step(ev), r.Step(ev)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("event %d: restored machine answered\n%#v\nwant\n%#v", i, got, want)
				}
			}
		})
	}
}

func TestSnapshotSharesNoMemory(t *testing.T) {
	m := newTestMachine(t, Config{})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	m.Step(UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1, 2}, Now: at(1)})
	s := m.Snapshot()
	s.Pending[0].Params[0] = 99
	if again := m.Snapshot(); again.Pending[0].Params[0] != 1 {
		t.Fatal("editing a snapshot changed the machine")
	}
	r, err := Restore(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Pending[0].Params[1] = 77
	if got := r.Snapshot().Pending[0].Params; got[0] != 99 || got[1] != 2 {
		t.Fatalf("restored machine aliases its snapshot: %v", got)
	}
}

func TestSnapshotRestoreRefusesInconsistentState(t *testing.T) {
	good := func() Snapshot {
		m := newTestMachine(t, Config{})
		m.Step(join("a", 0))
		m.Step(join("b", 0))
		m.Step(upd("a", 1, 1, 1, 1, 1))
		return m.Snapshot()
	}
	tests := []restoreRefusal{
		{"future version", func(s *Snapshot) { s.Version = SnapshotVersion + 1 }, "version"},
		{"a version 1 snapshot", func(s *Snapshot) { s.Version = 1 }, "version"},
		{"invalid config", func(s *Snapshot) { s.Config.Rounds = 0 }, "rounds"},
		{"duplicate client", func(s *Snapshot) { s.Clients = append(s.Clients, s.Clients[0]) }, "twice"},
		{"pending of a stranger", func(s *Snapshot) { s.Pending[0].Client = "x" }, "unknown client"},
		{"two pending of one client", func(s *Snapshot) { s.Pending = append(s.Pending, s.Pending[0]) }, "two pending"},
		{"round 0 open", func(s *Snapshot) { s.Round = 0; s.Closed = 0 }, "round 0"},
		{"more closed than opened", func(s *Snapshot) { s.Closed = 5 }, "closed"},
		{"deadline samples with adaptation off", func(s *Snapshot) {
			s.DeadlinePolicy = &DeadlineSnapshot{Samples: []time.Duration{time.Second}}
		}, "adaptation off"},
	}
	checkRestoreRefusals(t, good, tests)
	adaptive := func() Snapshot {
		m := newTestMachine(t, adaptiveConfig())
		m.Step(join("a", 0))
		m.Step(join("b", 0))
		m.Step(upd("a", 1, 2, 1, 1, 1))
		return m.Snapshot()
	}
	checkRestoreRefusals(t, adaptive, []restoreRefusal{
		{"a sample beyond the cap", func(s *Snapshot) { s.DeadlinePolicy.Samples[0] = time.Hour }, "outside"},
		{"a negative sample", func(s *Snapshot) { s.DeadlinePolicy.Samples[0] = -1 }, "outside"},
		{"more samples than the window", func(s *Snapshot) {
			s.DeadlinePolicy.Samples = make([]time.Duration, DefaultDeadlineWindow+1)
		}, "window"},
		{"negative extensions", func(s *Snapshot) { s.DeadlinePolicy.Extensions = -1 }, "extensions"},
	})
	if _, err := DecodeSnapshot([]byte("{")); err == nil {
		t.Fatal("decoded a truncated snapshot")
	}
}

// restoreRefusal is a snapshot mutation that Restore must refuse with an
// error mentioning want.
type restoreRefusal struct {
	name   string
	mutate func(*Snapshot)
	want   string
}

// checkRestoreRefusals applies each mutation to a fresh good snapshot and
// checks that Restore refuses it with the operation and the reason.
func checkRestoreRefusals(t *testing.T, good func() Snapshot, tests []restoreRefusal) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.mutate(&s)
			_, err := Restore(s)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "aggregator: restore snapshot") {
				t.Fatalf("err %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestSnapshotWithoutDeadlinePolicyRestores: a version 2 checkpoint written
// before the adaptive deadline existed restores with nothing measured.
func TestSnapshotWithoutDeadlinePolicyRestores(t *testing.T) {
	m := newTestMachine(t, adaptiveConfig())
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	m.Step(upd("a", 1, 2, 1, 1, 1))
	snap := m.Snapshot()
	if snap.DeadlinePolicy == nil || len(snap.DeadlinePolicy.Samples) != 1 {
		t.Fatalf("snapshot policy %+v, want one sample", snap.DeadlinePolicy)
	}
	b, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(b), `,"deadline_policy":{"samples":[2000000000]}`, "", 1)
	if old == string(b) {
		t.Fatalf("no deadline policy in %s", b)
	}
	dec, err := DecodeSnapshot([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Restore(dec)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Snapshot().DeadlinePolicy; got == nil || len(got.Samples) != 0 {
		t.Fatalf("restored policy %+v, want nothing measured", got)
	}
}

func adaptiveRounds(n int) Config {
	c := adaptiveConfig()
	c.Rounds = n
	return c
}
