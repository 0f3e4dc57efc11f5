package aggregator

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"testing"
	"time"
)

// fzKnownBug fails with "known bug" so that the regression seeds kept under
// testdata/fuzz keep failing until the bug is fixed; with
// GRAPHFED_FUZZ_SKIP_KNOWN_BUGS=1 it skips the input instead, so that the
// target can go on fuzzing its other properties.
func fzKnownBug(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("GRAPHFED_FUZZ_SKIP_KNOWN_BUGS") != "" {
		t.Skip("known bug: " + msg)
	}
	t.Fatal("known bug: " + msg)
}

// fzSnapshotSeeds are encoded snapshots of real machines in every phase.
func fzSnapshotSeeds(f *testing.F) [][]byte {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	join := func(id string, s int) Join {
		return Join{Client: id, SchemaHash: "h", NumParams: 2, Weight: 1, Now: at(s)}
	}
	upd := func(id string, r uint64, s int, p ...float32) UpdateIn {
		return UpdateIn{Client: id, Round: r, Weight: 2, Params: p, Now: at(s)}
	}
	cases := []struct {
		cfg   Config
		steps []Event
	}{
		{Config{}, nil},
		{Config{}, []Event{join("a", 0)}},
		{Config{}, []Event{join("a", 0), join("b", 0), upd("a", 1, 1, 1, 2)}},
		{Config{Quorum: 1, Staleness: Staleness{Policy: StaleConstant, Factor: 0.5}},
			[]Event{join("a", 0), join("b", 0), upd("b", 1, 1, 1, 1), upd("a", 1, 2, 8, 8)}},
		{Config{Rounds: 6, MissedToDead: 1, Buffer: 2, Staleness: Staleness{Policy: StalePolynomial, A: 0.5}},
			[]Event{join("a", 0), join("b", 0), upd("a", 1, 1, 1, 1), Tick{at(10)}, Leave{Client: "b", Now: at(11)}}},
		{Config{Algo: AlgoCEFedGNN}, []Event{join("a", 0), join("b", 0),
			UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1, 1}, Grad: []float32{0.1, -3e-7}, Now: at(1)}}},
		{Config{Algo: AlgoLocal, Rounds: 1}, []Event{join("a", 0), join("b", 0), upd("a", 1, 1), upd("b", 1, 1)}},
		{Config{Rounds: 1}, []Event{join("a", 0), join("b", 0), upd("a", 1, 1, 1, 1), upd("b", 1, 1, 1, 1)}},
		{Config{Algo: AlgoLPSFed, FreezeRounds: 1, LPSFed: LPSFedConfig{Phi: 3, RefEvery: 2}}, []Event{
			Join{Client: "a", SchemaHash: "h", NumParams: 2, Weight: 1, Users: 3, Items: 4, Edges: 9, Now: at(0)}, join("b", 0),
			UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1, 2}, HasRho: true, Rho: 0.5, RhoVersion: 1, HasMargin: true, Margin: 0.25, Now: at(1)},
			upd("b", 1, 1, 3, 4), upd("a", 2, 2, 5, 6),
			UpdateIn{Client: "b", Round: 2, Weight: 1, Params: []float32{7, 8}, HasRho: true, Rho: 2, RhoVersion: 1, Now: at(2)},
			UpdateIn{Client: "b", Round: 3, Weight: 1, Params: []float32{7, 8}, HasMargin: true, Margin: -1, Now: at(2)}}},
		{Config{Rounds: 4, ServerOpt: DefaultServerOpt(ServerOptFedYogi)}, []Event{join("a", 0), join("b", 0),
			upd("a", 1, 1, 1, 2), upd("b", 1, 1, 3, 4), upd("a", 2, 2, -1, 0.5), upd("b", 2, 2, 7, 1), upd("a", 3, 3, 2, 2)}},
		{Config{Rounds: 4, ServerOpt: DefaultServerOpt(ServerOptFedAvgM)}, []Event{join("a", 0), join("b", 0),
			upd("a", 1, 1, 1, 2), upd("b", 1, 1, 3, 4), upd("a", 2, 2, -1, 0.5), upd("b", 2, 2, 7, 1)}},
		{Config{Algo: AlgoLPSFedBPR, LPSFed: LPSFedConfig{Phi: 2, Strict: true, StrictStats: ReferenceStats{Users: 2, Items: 2, Edges: 3}}},
			[]Event{join("a", 0), join("b", 0), upd("a", 1, 1, 1, 1)}},
	}
	var out [][]byte
	for _, c := range cases {
		cfg := c.cfg
		if cfg.Algo == "" {
			cfg.Algo = AlgoFedAvg
		}
		if cfg.Rounds == 0 {
			cfg.Rounds = 3
		}
		cfg.MinClients, cfg.RoundTimeout = 2, 10*time.Second
		cfg.LPSFed.Reference = fzReference
		m, err := NewMachine(cfg)
		if err != nil {
			f.Fatal(err)
		}
		for _, ev := range c.steps {
			m.Step(ev)
		}
		b, err := m.Snapshot().Encode()
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// fzReference is a cheap deterministic reference kernel: a fuzzed
// snapshot may ask for any counts, and the real GNMK builder would
// eigendecompose a graph of that size.
func fzReference(_ ReferenceStats, phi int, seed uint64) ([]float64, error) {
	k := make([]float64, phi)
	for i := range k {
		k[i] = 1 / float64(uint64(i+1)+seed%7)
	}
	return k, nil
}

// FuzzDecodeSnapshot: DecodeSnapshot never panics, and whatever Restore
// accepts is a machine as good as one that ran: its snapshot encodes,
// decodes and restores to the same snapshot, and it can go on stepping
// (deadlines, joins, current and late updates, a leave) without panicking,
// always publishing models of the job's length with finite values and
// keeping a snapshot that can be written. Run it with
//
//	go test ./aggregator -run XXX -fuzz '^FuzzDecodeSnapshot$' -fuzztime 10m -parallel 1
func FuzzDecodeSnapshot(f *testing.F) {
	for _, b := range fzSnapshotSeeds(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"version":2,"config":{"Algo":"fedavg","Rounds":2,"MinClients":1,"RoundTimeout":1000000000},` +
		`"clients":[{"id":"a","weight":1,"live":true}],"num_params":2,"round":1,"open":true,` +
		`"opened_at":"2026-01-01T00:00:00+01:00","deadline":"2026-01-01T00:00:10Z",` +
		`"pending":[{"client":"a","weight":1,"params":[1,2]}],"stale":[{"client":"a","weight":2,"params":[3,4]}],"stale_by":["a/0","a/0"]}`))
	f.Add([]byte(`{"version":2,"config":{"Algo":"lpsfed","Rounds":3,"MinClients":1,"RoundTimeout":1000000000,"LPSFed":{"Phi":2}},` +
		`"clients":[{"id":"a","weight":1,"live":true}],"num_params":1,"round":2,"closed":1,"open":true,"model_round":1,` +
		`"models":[{"to":"a","round":1,"params":[0.5],"margin":1,"has_margin":true}],` +
		`"strategy":{"kernel":[1,0.5],"kernel_version":1,"clients":[{"id":"a","users":2,"has_rho":true,"rho":0.1}]},` +
		`"pending":[{"client":"a","weight":1,"params":[1],"rho":3,"has_rho":true}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSnapshot(data)
		if err != nil {
			return
		}
		s.Config.LPSFed.Reference = fzReference
		m, err := Restore(s)
		if err != nil {
			return
		}
		snap := m.Snapshot()
		enc, err := snap.Encode()
		if err != nil {
			t.Fatalf("restored machine's snapshot does not encode: %v", err)
		}
		dec, err := DecodeSnapshot(enc)
		if err != nil {
			t.Fatalf("encoded snapshot does not decode: %v", err)
		}
		dec.Config.LPSFed.Reference = fzReference
		m2, err := Restore(dec)
		if err != nil {
			t.Fatalf("restored machine's snapshot does not restore: %v", err)
		}
		if enc2, err := m2.Snapshot().Encode(); err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("snapshot changed through encode/restore (%v):\n%s\n%s", err, enc, enc2)
		}
		// Keep going, as the aggregator does after a restart.
		n := snap.NumParams
		if n < 0 {
			fzKnownBug(t, "Restore accepted num_params %d; the next round close panics in weightedAverage (makeslice: len out of range)", n)
		}
		if n > 1<<16 {
			return // a legitimately huge model: too slow to step through here
		}
		vec := func(x float32) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = x
			}
			return v
		}
		now := snap.Deadline
		if now.IsZero() {
			now = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
		}
		events := []Event{Tick{now}, Join{Client: "fz-new", SchemaHash: snap.SchemaHash, NumParams: n, Weight: 3, Users: 2, Items: 2, Edges: 3, Now: now}}
		for _, c := range snap.Clients {
			events = append(events, UpdateIn{Client: c.ID, Round: m.Round(), Weight: 1, Params: vec(0.5),
				HasRho: true, Rho: float64(len(c.ID)), HasMargin: true, Margin: 0.5, Now: now},
				UpdateIn{Client: c.ID, Round: m.Round() - 1, Weight: 2, Params: vec(-1), Now: now})
		}
		events = append(events, UpdateIn{Client: "fz-new", Round: m.Round(), Weight: 1, Params: vec(1), Now: now})
		if len(snap.Clients) > 0 {
			events = append(events, Leave{Client: snap.Clients[0].ID, Now: now})
		}
		events = append(events, Tick{now.Add(time.Hour)}, Tick{now.Add(1000 * time.Hour)})
		for i, ev := range events {
			for _, a := range m.Step(ev) {
				p, ok := a.(PublishModel)
				if !ok {
					continue
				}
				if len(p.Params) != n || (len(p.Grad) != 0 && len(p.Grad) != n) || math.IsNaN(p.Margin) || math.IsInf(p.Margin, 0) {
					fzKnownBug(t, "event %d: published a model of %d params (grad %d) in a job of %d", i, len(p.Params), len(p.Grad), n)
				}
				for _, v := range append(append([]float32(nil), p.Params...), p.Grad...) {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						fzKnownBug(t, "event %d: published a model with value %v", i, v)
					}
				}
			}
			if _, err := m.Snapshot().Encode(); err != nil {
				fzKnownBug(t, "event %d: snapshot can no longer be written: %v", i, err)
			}
		}
	})
}
