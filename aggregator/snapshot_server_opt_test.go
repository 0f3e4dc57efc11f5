package aggregator

import (
	"encoding/json"
	"reflect"
	"testing"
)

// serverOptJob is a five-round FedAdam (or FedYogi) job's events: two
// clients, each round's updates moving; cut is where the first part of
// the job ends.
func serverOptJob(rule string) (Config, []Event) {
	cfg := Config{Rounds: 5, ServerOpt: DefaultServerOpt(rule)}
	evs := []Event{join("a", 0), join("b", 0)}
	for r := uint64(1); r <= 5; r++ {
		f := float32(r)
		evs = append(evs, upd("a", r, float64(r), 3, 0.5*f, -f), upd("b", r, float64(r)+0.5, 1, f*f, 2-f))
	}
	return cfg, evs
}

// A job restored from a snapshot taken mid-job, with the optimizer's
// moments in it, publishes exactly the models of the uninterrupted job,
// wherever it was cut.
func TestSnapshotServerOptMidJobEqualsUninterrupted(t *testing.T) {
	for _, rule := range ServerOptRules() {
		cfg, evs := serverOptJob(rule)
		var want [][]Action
		m := newTestMachine(t, cfg)
		for _, ev := range evs {
			want = append(want, m.Step(ev))
		}
		for cut := 1; cut < len(evs); cut++ {
			m := newTestMachine(t, cfg)
			for _, ev := range evs[:cut] {
				m.Step(ev)
			}
			b, err := m.Snapshot().Encode()
			if err != nil {
				t.Fatal(err)
			}
			dec, err := DecodeSnapshot(b)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Restore(dec)
			if err != nil {
				t.Fatalf("%s cut %d: %v", rule, cut, err)
			}
			for i := cut; i < len(evs); i++ {
				if got := r.Step(evs[i]); !reflect.DeepEqual(got, want[i]) {
					t.Fatalf("%s cut %d, event %d: restored machine answered\n%#v\nwant\n%#v", rule, cut, i, got, want[i])
				}
			}
		}
	}
}

func TestSnapshotServerOptRefusesBadState(t *testing.T) {
	good := func() Snapshot {
		cfg, evs := serverOptJob(ServerOptFedYogi)
		m := newTestMachine(t, cfg)
		for _, ev := range evs[:7] { // rounds 1 and 2 closed: one step taken
			m.Step(ev)
		}
		s := m.Snapshot()
		var st serverOptState
		if err := json.Unmarshal(s.Strategy, &st); err != nil || st.Step != 1 || len(st.M) != 2 || len(st.V) != 2 {
			panic("the good snapshot took no step: " + string(s.Strategy))
		}
		return s
	}
	state := func(s *Snapshot, f func(*serverOptState)) {
		var st serverOptState
		_ = json.Unmarshal(s.Strategy, &st)
		f(&st)
		s.Strategy, _ = json.Marshal(st)
	}
	checkRestoreRefusals(t, good, []restoreRefusal{
		{"moments of another length", func(s *Snapshot) {
			state(s, func(st *serverOptState) { st.M, st.V = append(st.M, 1), append(st.V, 1) })
		}, "moments of 3 values, the job has 2"},
		{"no second moment", func(s *Snapshot) { state(s, func(st *serverOptState) { st.V = nil }) }, "moments of 2 and 0"},
		{"moments before a step", func(s *Snapshot) { state(s, func(st *serverOptState) { st.Step = 0 }) }, "before the first step"},
		{"negative second moment", func(s *Snapshot) { state(s, func(st *serverOptState) { st.V[0] = -1 }) }, "negative"},
		{"not JSON of the state", func(s *Snapshot) { s.Strategy = json.RawMessage(`[1]`) }, "server optimizer state"},
		{"state without an optimizer", func(s *Snapshot) { s.Config.ServerOpt = ServerOpt{} }, "keeps no state"},
	})
}
