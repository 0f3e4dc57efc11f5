package privacy

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func modelEntry(seq uint64, ch Channel, sigma, clip float64) Entry {
	return Entry{Seq: seq, Job: "job-1", Client: "bank-3", Channel: ch, Round: seq, Count: 1, Dim: 10,
		Sigma: sigma, Clip: clip, Rho: Sensitivity(ch, clip, 1), Time: time.Unix(0, 0).UTC()}
}

func embEntry(seq uint64, sigma float64, ids ...int64) Entry {
	return Entry{Seq: seq, Job: "job-1", Client: "bank-3", Channel: ChannelEmb, Round: seq, NodeIDs: ids,
		Count: len(ids), Dim: 4, Sigma: sigma, Clip: 1, Time: time.Unix(0, 0).UTC()}
}

func TestNewAccountantRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		kind  AccountantKind
		delta float64
		b     Budget
	}{
		"kind":         {0, 1e-5, Budget{}},
		"delta 0":      {RDP, 0, Budget{}},
		"delta 1":      {RDP, 1, Budget{}},
		"delta nan":    {RDP, math.NaN(), Budget{}},
		"negative eps": {RDP, 1e-5, Budget{Epsilon: -1}},
		"inf eps":      {RDP, 1e-5, Budget{Epsilon: math.Inf(1)}},
		"node no rho":  {Exact, 1e-5, Budget{NodeEpsilon: 1}},
		"node rho > 2": {Exact, 1e-5, Budget{NodeEpsilon: 1, NodeRho: 3}},
		"node eps nan": {Exact, 1e-5, Budget{NodeEpsilon: math.NaN(), NodeRho: 1}},
	} {
		if _, err := NewAccountant(tc.kind, tc.delta, tc.b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
}

// The client budget caps the composition of model, grad and margin
// releases; a refused charge changes nothing.
func TestClientBudget(t *testing.T) {
	for _, kind := range []AccountantKind{RDP, Exact} {
		a, err := NewAccountant(kind, 1e-5, Budget{Epsilon: 8})
		if err != nil {
			t.Fatal(err)
		}
		seq := uint64(0)
		channels := []Channel{ChannelModel, ChannelGrad, ChannelMargin}
		var refused error
		for refused == nil {
			seq++
			refused = a.Charge(modelEntry(seq, channels[seq%3], 4, 1)) // ρ/σ = 0.5
		}
		if !errors.Is(refused, ErrBudgetExceeded) {
			t.Fatalf("%v: refusal %v", kind, refused)
		}
		if !strings.HasPrefix(refused.Error(), "privacy: release: budget exceeded for client bank-3 channel ") {
			t.Errorf("%v: message %q", kind, refused.Error())
		}
		client := a.Client(ClientKey{"job-1", "bank-3"})
		if client.Releases != seq-1 || math.Abs(client.Mu2-float64(seq-1)*0.25) > 1e-9 {
			t.Errorf("%v: client stat %+v after %d accepted releases", kind, client, seq-1)
		}
		if eps := a.Epsilon(client, 1); eps > 8 {
			t.Errorf("%v: spent %v over budget 8", kind, eps)
		}
		if eps := a.Epsilon(client.add(0.25), 1); eps <= 8 {
			t.Errorf("%v: the refused release would have cost only %v", kind, eps)
		}
		var sum uint64
		for _, c := range a.ChannelStats() {
			sum += c.Releases
		}
		if sum != seq-1 {
			t.Errorf("%v: channel releases sum to %d, want %d", kind, sum, seq-1)
		}
		// Replay ignores the budget.
		if err := a.Apply(modelEntry(seq, ChannelModel, 4, 1)); err != nil {
			t.Errorf("%v: apply: %v", kind, err)
		}
	}
}

// A node budget refuses a whole embedding release if any one node would
// exceed it.
func TestNodeBudget(t *testing.T) {
	// σ=1, ρ=0.5: each release adds 0.25 to μ²; budget ε=2 at δ=1e-5.
	a, err := NewAccountant(Exact, 1e-5, Budget{NodeEpsilon: 2, NodeRho: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	allowed := 0
	for ; ; allowed++ {
		if Exact.Epsilon(float64(allowed+1)*0.25, 1e-5) > 2 {
			break
		}
	}
	seq := uint64(0)
	for range allowed {
		seq++
		if err := a.Charge(embEntry(seq, 1, 1, 2)); err != nil {
			t.Fatal(err)
		}
	}
	seq++
	err = a.Charge(embEntry(seq, 1, 3, 2))
	if !errors.Is(err, ErrBudgetExceeded) || !strings.Contains(err.Error(), "channel emb node 2") {
		t.Fatalf("over-budget node: %v", err)
	}
	if s := a.Node(NodeKey{"job-1", "bank-3", 3}); s.Releases != 0 {
		t.Errorf("node 3 charged %+v by a refused release", s)
	}
	if err := a.Charge(embEntry(seq, 1, 3)); err != nil {
		t.Errorf("a fresh node is refused: %v", err)
	}
	k, s, ok := a.WorstNode()
	if !ok || k.ID != 1 || s.Releases != uint64(allowed) {
		t.Errorf("worst node %+v %+v", k, s)
	}
	if got := a.NodeMu2(); len(got) != 3 || got[0] != 1 {
		t.Errorf("node μ² %v", got)
	}
}

func TestEntryValidate(t *testing.T) {
	cal := Entry{Seq: 1, Job: "j", Client: "c", Channel: ChannelCalibration,
		Calibration: &Calibration{K: 50, N: 100, Q: []float64{50}, Rho: []float64{0.1}}}
	for name, mutate := range map[string]func(e *Entry){
		"seq 0":          func(e *Entry) { e.Seq = 0 },
		"job upper":      func(e *Entry) { e.Job = "Bank" },
		"client empty":   func(e *Entry) { e.Client = "" },
		"client long":    func(e *Entry) { e.Client = strings.Repeat("a", 65) },
		"channel":        func(e *Entry) { e.Channel = "weights" },
		"sigma 0":        func(e *Entry) { e.Sigma = 0 },
		"sigma inf":      func(e *Entry) { e.Sigma = math.Inf(1) },
		"clip nan":       func(e *Entry) { e.Clip = math.NaN() },
		"count":          func(e *Entry) { e.Count = 0 },
		"dim":            func(e *Entry) { e.Dim = 0 },
		"ids mismatch":   func(e *Entry) { e.NodeIDs = []int64{1, 2} },
		"rho too small":  func(e *Entry) { e.Rho = 1.9 },
		"rho inf":        func(e *Entry) { e.Rho = math.Inf(1) },
		"calibration on": func(e *Entry) { e.Calibration = cal.Calibration },
	} {
		e := modelEntry(1, ChannelModel, 1, 1)
		mutate(&e)
		if err := e.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("model %s: %v", name, err)
		}
	}
	for name, mutate := range map[string]func(e *Entry){
		"no ids":    func(e *Entry) { e.NodeIDs = nil },
		"dup ids":   func(e *Entry) { e.NodeIDs = []int64{4, 4}; e.Count = 2 },
		"rho set":   func(e *Entry) { e.Rho = 1 },
		"clip 5":    func(e *Entry) { e.Clip = 5 },
		"count off": func(e *Entry) { e.Count = 3 },
	} {
		e := embEntry(1, 1, 4, 5)
		mutate(&e)
		if err := e.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("emb %s: %v", name, err)
		}
	}
	for name, mutate := range map[string]func(c *Calibration){
		"k":      func(c *Calibration) { c.K = 0 },
		"len":    func(c *Calibration) { c.Rho = nil },
		"q 0":    func(c *Calibration) { c.Q[0] = 0 },
		"q 101":  func(c *Calibration) { c.Q[0] = 101 },
		"rho 3":  func(c *Calibration) { c.Rho[0] = 3 },
		"sample": func(c *Calibration) { c.Sampled = -1 },
	} {
		e := cal.clone()
		mutate(e.Calibration)
		if err := e.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("calibration %s: %v", name, err)
		}
	}
	missing := cal.clone()
	missing.Calibration = nil
	for _, e := range []Entry{modelEntry(1, ChannelGrad, 1, 1), embEntry(1, 1, 9), cal} {
		if err := e.Validate(); err != nil {
			t.Errorf("valid %s entry: %v", e.Channel, err)
		}
	}
	if err := missing.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("calibration entry without record: %v", err)
	}
}

// Calibration entries cost nothing.
func TestCalibrationEntriesAreFree(t *testing.T) {
	a, _ := NewAccountant(RDP, 1e-5, Budget{Epsilon: 1, NodeEpsilon: 1, NodeRho: 0.1})
	e := Entry{Seq: 1, Job: "j", Client: "c", Channel: ChannelCalibration,
		Calibration: &Calibration{K: 50, N: 100, Q: []float64{50}, Rho: []float64{0.1}}}
	if err := a.Charge(e); err != nil {
		t.Fatal(err)
	}
	if len(a.ChannelStats())+len(a.ClientStats())+len(a.NodeMu2()) != 0 {
		t.Error("a calibration entry was charged")
	}
}
