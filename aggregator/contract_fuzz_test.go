package aggregator

import (
	"math"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"graphfed/bus"
)

// FuzzContractUpdates feeds a hello and a signed-looking update of
// arbitrary content (weights, norms, schema, rounds, or raw body bytes)
// through the bus validator and the machine's Step after two honest
// joins, then lets the honest parties finish the round. Whatever comes
// in: a hello outside the contract is refused and never adopted, an
// accepted update is within the contract, and every published model is
// finite and within the norm the contract's clip and noise allow.
//
//	go test ./aggregator -run '^$' -fuzz FuzzContractUpdates -fuzztime 2m
func FuzzContractUpdates(f *testing.F) {
	huge := float32(1e30)
	f.Add([]byte(nil), false, uint64(1), 0.0, float32(1), float32(2), float32(0), false, "h", 2, 10)
	f.Add([]byte(nil), false, uint64(1), 1e15, float32(0), float32(0), float32(0), false, "h", 2, 10)
	f.Add([]byte(nil), false, uint64(1), 0.0, huge, huge, float32(0), false, "evil", 1, 10)
	f.Add([]byte(nil), false, uint64(2), 3.0, float32(10.1), float32(0), huge, false, "h", 2, 6000)
	f.Add([]byte(nil), false, uint64(0), 0.0, float32(-7), float32(7), float32(1), true, "h", 3, -1)
	f.Add([]byte{0x81, 0xa5, 'r', 'o', 'u', 'n', 'd', 0x01}, true, uint64(1), 0.0, float32(0), float32(0), float32(0), false, "h", 2, 1)
	f.Fuzz(func(t *testing.T, raw []byte, useRaw bool, round uint64, weight float64, p0, p1, g0 float32, withheld bool,
		schema string, nparams, train int) {
		k := testContract
		m, err := NewMachine(Config{Algo: AlgoFedAvg, Rounds: 3, MinClients: 2, Quorum: 2, RoundTimeout: 10 * time.Second, Contract: k})
		if err != nil {
			t.Fatal(err)
		}
		m.Step(join("a", 0))
		m.Step(join("b", 0))
		// A hello of anything: accepted only within the contract.
		acts := m.Step(Join{Client: "c", SchemaHash: schema, NumParams: nparams, Weight: float64(train), Now: at(0.5)})
		r, _ := find[ReplyJoin](acts)
		within := schema == k.SchemaHash && nparams == k.NumParams && train >= 0 && float64(train) <= k.MaxTrainSize
		if r.Accepted != within {
			t.Fatalf("hello %q/%d of %d samples accepted=%v", schema, nparams, train, r.Accepted)
		}
		if !r.Accepted && rejected(acts) != bus.ReasonSchema {
			t.Fatalf("a refused hello is not counted: %v", acts)
		}
		if m.schemaHash != k.SchemaHash || m.numParams != k.NumParams || m.Snapshot().SchemaHash != k.SchemaHash {
			t.Fatalf("schema %s/%d after hello %q/%d", m.schemaHash, m.numParams, schema, nparams)
		}

		body := raw
		if !useRaw {
			u := map[string]any{"round": round, "base": round - 1, "weight": weight, "params": bus.Vector{p0, p1}, "withheld": withheld}
			if g0 != 0 {
				u["grad"] = bus.Vector{g0, p0}
			}
			if body, err = msgpack.Marshal(u); err != nil {
				t.Fatal(err)
			}
		}
		v := bus.NewValidator(bus.Schema{Job: "j", NumParams: k.NumParams, MaxRound: 3, Senders: map[string]bool{"a": true, "b": true, "c": true}})
		data, err := bus.Seal(bus.Envelope{Job: "j", Kind: bus.KindUpdate, From: "a", Round: round, Seq: 1}, msgpack.RawMessage(body))
		if err != nil {
			return
		}
		env, b, err := v.Open(bus.Subject("j", bus.KindUpdate, "a"), data)
		if err != nil {
			return
		}
		ev, err := EventOf(env, b, at(1))
		if err != nil || ev == nil {
			return
		}
		acts = m.Step(ev)
		checkContractState(t, m, acts)
		// The honest parties finish the round (a's is a duplicate if the
		// fuzzed one counted); c, if it joined, finishes too.
		for _, id := range []string{"a", "b", "c"} {
			acts = m.Step(upd(id, m.Round(), 2, 0, 1, 2))
			checkContractState(t, m, acts)
		}
	})
}

// checkContractState: nothing pending outside the contract, and every
// model published finite and within the contract's norm.
func checkContractState(t *testing.T, m *Machine, acts []Action) {
	t.Helper()
	k := m.cfg.Contract
	for _, c := range append(m.pendingList(), m.stale...) {
		if c.Weight > 1000 || l2(c.Params) > k.MaxNorm(k.Sigma, len(c.Params)) || l2(c.Grad) > k.MaxNorm(k.GradSigma, len(c.Grad)) {
			t.Fatalf("accepted outside the contract: %+v", c)
		}
	}
	for _, a := range acts {
		p, ok := a.(PublishModel)
		if !ok {
			continue
		}
		n := l2(p.Params)
		if math.IsNaN(n) || n > k.MaxNorm(k.Sigma, len(p.Params)) {
			t.Fatalf("model of norm %v published: %v", n, p.Params)
		}
	}
}

func (m *Machine) pendingList() []Contribution {
	out := make([]Contribution, 0, len(m.pending))
	for _, c := range m.pending {
		out = append(out, c)
	}
	return out
}
