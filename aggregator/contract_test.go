package aggregator

import (
	"math"
	"strings"
	"testing"

	"graphfed/bus"
)

var testContract = Contract{SchemaHash: "h", NumParams: 2, MaxTrainSize: 5000, Clip: 10, Sigma: 0.01, GradSigma: 0.01}

// rejected is the contract reject among acts, if any.
func rejected(acts []Action) string {
	if r, ok := find[Rejected](acts); ok {
		return r.Reason
	}
	return ""
}

func TestContractJoin(t *testing.T) {
	tests := []struct {
		name     string
		contract Contract
		first    Join // sent before the honest hellos
		refused  string
		schema   string // the job's schema afterwards
	}{
		{"fixed: a hijacking hello is refused and counted", testContract,
			Join{Client: "a", SchemaHash: "evil", NumParams: 1, Weight: 10, Now: at(0)}, bus.ReasonSchema, "h"},
		{"fixed: the right hash with another count", testContract,
			Join{Client: "a", SchemaHash: "h", NumParams: 1, Weight: 10, Now: at(0)}, bus.ReasonSchema, "h"},
		{"fixed: a training size above the job's", testContract,
			Join{Client: "a", SchemaHash: "h", NumParams: 2, Weight: 5001, Now: at(0)}, bus.ReasonSchema, "h"},
		{"fixed: a negative training size", testContract,
			Join{Client: "a", SchemaHash: "h", NumParams: 2, Weight: -10, Now: at(0)}, bus.ReasonSchema, "h"},
		{"unfixed: a training size above MaxWeight", Contract{},
			Join{Client: "a", SchemaHash: "h", NumParams: 2, Weight: 2e15, Now: at(0)}, bus.ReasonSchema, ""},
		{"unfixed: the first hello sets the schema", Contract{},
			Join{Client: "a", SchemaHash: "evil", NumParams: 1, Weight: 10, Now: at(0)}, "", "evil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, Config{Contract: tc.contract})
			acts := m.Step(tc.first)
			if got := rejected(acts); got != tc.refused {
				t.Fatalf("first hello: reject %q, want %q (%v)", got, tc.refused, acts)
			}
			if r, _ := find[ReplyJoin](acts); r.Accepted == (tc.refused != "") {
				t.Fatalf("first hello answered %+v", r)
			}
			if m.schemaHash != tc.schema || m.Snapshot().SchemaHash != tc.schema {
				t.Fatalf("schema %q (checkpoint %q), want %q", m.schemaHash, m.Snapshot().SchemaHash, tc.schema)
			}
			if tc.schema != "h" {
				return
			}
			// The honest parties join afterwards and the job starts.
			m.Step(join("a", 1))
			if _, ok := find[OpenRound](m.Step(join("b", 1))); !ok {
				t.Fatal("the honest parties did not start the job")
			}
		})
	}
}

func TestContractUpdate(t *testing.T) {
	huge := float32(1e30)
	withGrad := func(algo string, k string) func(*Config) {
		return func(c *Config) { c.Algo, c.Contract.Grad = algo, k }
	}
	grad := func(g ...float32) UpdateIn {
		u := upd("a", 1, 1, 0, 1, 2)
		u.Grad = g
		return u
	}
	tests := []struct {
		name   string
		upd    UpdateIn
		reason string
		cfg    func(*Config)
	}{
		{"within the contract", upd("a", 1, 1, 0, 1, 2), "", nil},
		{"the declared weight", upd("a", 1, 1, 1000, 1, 2), "", nil},
		{"a weight above the declared", upd("a", 1, 1, 1001, 1, 2), bus.ReasonWeight, nil},
		{"weight 1e15", upd("a", 1, 1, 1e15, 0, 0), bus.ReasonWeight, nil},
		{"every parameter 1e30", upd("a", 1, 1, 0, huge, huge), bus.ReasonNorm, nil},
		{"just above the clip and noise", upd("a", 1, 1, 0, 10.2, 0), bus.ReasonNorm, nil},
		{"at the clip plus noise", upd("a", 1, 1, 0, 10.1, 0), "", nil},
		{"a huge gradient estimator", grad(huge, 0), bus.ReasonNorm, withGrad(AlgoCEFedGNN, "")},
		{"a gradient estimator under cefedgnn", grad(0.5, 0), "", withGrad(AlgoCEFedGNN, GradShared)},
		{"a gradient estimator under fedavg", grad(0.5, 0), bus.ReasonGrad, nil},
		{"a gradient estimator the contract refuses", grad(0.5, 0), bus.ReasonGrad, withGrad(AlgoCEFedGNN, GradNone)},
		{"no gradient estimator where they are shared", upd("a", 1, 1, 0, 1, 2), "", withGrad(AlgoCEFedGNN, GradShared)},
		{"a huge late update", upd("a", 0, 1, 0, huge, 0), bus.ReasonNorm, nil},
		{"a huge future update", upd("a", 3, 1, 0, huge, 0), bus.ReasonNorm, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Contract: testContract, Quorum: 2}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			m := newTestMachine(t, cfg)
			m.Step(join("a", 0))
			m.Step(join("b", 0))
			acts := m.Step(tc.upd)
			if got := rejected(acts); got != tc.reason {
				t.Fatalf("reject %q, want %q (%v)", got, tc.reason, acts)
			}
			if tc.reason == "" {
				return
			}
			if len(m.pending) != 0 || len(m.stale) != 0 {
				t.Fatalf("a rejected update counts: %v", m.pending)
			}
			// The honest update of the same sender still counts, and the
			// round's model is the honest one.
			m.Step(upd("a", 1, 2, 0, 1, 2))
			acts = m.Step(upd("b", 1, 2, 0, 3, 4))
			p, ok := find[PublishModel](acts)
			if !ok || p.Params[0] != 2 || p.Params[1] != 3 {
				t.Fatalf("round 1 gave %v", acts)
			}
		})
	}
}

func TestContractRestore(t *testing.T) {
	m := newTestMachine(t, Config{})
	m.Step(Join{Client: "a", SchemaHash: "evil", NumParams: 1, Weight: 10, Now: at(0)})
	snap := m.Snapshot()
	snap.Config.Contract = testContract
	if _, err := Restore(snap); err == nil || !strings.Contains(err.Error(), "contract") {
		t.Fatalf("a checkpoint of another schema than the contract's restored: %v", err)
	}
}

func TestContractValidate(t *testing.T) {
	tests := []struct {
		name string
		c    Contract
		ok   bool
	}{
		{"none", Contract{}, true},
		{"full", testContract, true},
		{"a hash without a count", Contract{SchemaHash: "h"}, false},
		{"a count without a hash", Contract{NumParams: 3}, false},
		{"a negative clip", Contract{Clip: -1}, false},
		{"a NaN sigma", Contract{Sigma: math.NaN()}, false},
		{"a train size above MaxWeight", Contract{MaxTrainSize: 2e15}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.validate(); (err == nil) != tc.ok {
				t.Fatalf("validate: %v", err)
			}
		})
	}
}

func TestContractMaxNorm(t *testing.T) {
	if n := (Contract{}).MaxNorm(1, 100); !math.IsInf(n, 1) {
		t.Fatalf("no clip bounds %v", n)
	}
	// C + σ(2·sqrt(d) + 10): 10 + 0.01·(2·10 + 10).
	if n := testContract.MaxNorm(0.01, 100); math.Abs(n-10.3) > 1e-4 {
		t.Fatalf("bound %v, want 10.3", n)
	}
}

func TestParseSchema(t *testing.T) {
	tests := []struct {
		in   string
		hash string
		n    int
		ok   bool
	}{
		{"abc:12", "abc", 12, true},
		{"logistic-4:5", "logistic-4", 5, true},
		{"abc", "", 0, false},
		{":12", "", 0, false},
		{"abc:0", "", 0, false},
		{"abc:x", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			h, n, err := ParseSchema(tc.in)
			if (err == nil) != tc.ok || h != tc.hash || n != tc.n {
				t.Fatalf("%q: %q %d %v", tc.in, h, n, err)
			}
		})
	}
}
