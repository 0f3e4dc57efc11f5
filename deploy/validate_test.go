package deploy

import (
	"math"
	"strings"
	"testing"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
)

func TestPrivacyOptionsValidate(t *testing.T) {
	with := func(f func(*PrivacyOptions)) PrivacyOptions {
		p := DefaultPrivacy()
		f(&p)
		return p
	}
	for _, tc := range []struct {
		name string
		p    PrivacyOptions
		want string // substring of the error; empty: valid
	}{
		{"defaults", DefaultPrivacy(), ""},
		{"empty accountant is rdp", with(func(p *PrivacyOptions) { p.Accountant = "" }), ""},
		{"exact accountant", with(func(p *PrivacyOptions) { p.Accountant = "exact" }), ""},
		{"budget", with(func(p *PrivacyOptions) { p.BudgetEpsilon = 8 }), ""},
		{"zero model sigma", with(func(p *PrivacyOptions) { p.ModelSigma = 0 }), "model σ1 (--model-sigma) is 0; it must be positive"},
		{"negative model sigma", with(func(p *PrivacyOptions) { p.ModelSigma = -0.1 }), "model σ1 (--model-sigma) is -0.1"},
		{"NaN model sigma", with(func(p *PrivacyOptions) { p.ModelSigma = math.NaN() }), "model σ1 (--model-sigma) is NaN; it must be a finite positive number"},
		{"infinite grad sigma", with(func(p *PrivacyOptions) { p.GradSigma = math.Inf(1) }), "gradient σ2 (--grad-sigma) is +Inf"},
		{"zero clip", with(func(p *PrivacyOptions) { p.ModelClip = 0 }), "model clip (--model-clip) is 0; it must be positive"},
		{"negative clip", with(func(p *PrivacyOptions) { p.ModelClip = -15 }), "model clip (--model-clip) is -15"},
		{"emb sigma -1 is no longer 'no exchange'", with(func(p *PrivacyOptions) { p.EmbSigma = -1 }), "for a run without exchange choose --algo fedavg"},
		{"zero emb sigma", with(func(p *PrivacyOptions) { p.EmbSigma = 0 }), "embedding σ0 (--emb-sigma) is 0"},
		{"unknown accountant", with(func(p *PrivacyOptions) { p.Accountant = "moments" }), `accountant (--accountant) "moments" is unknown; want rdp or exact`},
		{"delta 0", with(func(p *PrivacyOptions) { p.Delta = 0 }), "δ (--delta) is 0; it must be in (0, 1)"},
		{"delta 1", with(func(p *PrivacyOptions) { p.Delta = 1 }), "δ (--delta) is 1"},
		{"negative budget", with(func(p *PrivacyOptions) { p.BudgetEpsilon = -1 }), "ε budget (--budget-eps) is -1"},
		{"two problems reported together", with(func(p *PrivacyOptions) { p.ModelSigma, p.ModelClip = 0, 0 }), "model σ1 (--model-sigma) is 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid options refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Every problem is reported, not just the first.
	err := with(func(p *PrivacyOptions) { p.ModelSigma, p.ModelClip = 0, 0 }).Validate()
	if !strings.Contains(err.Error(), "model clip") {
		t.Fatalf("only the first problem reported: %v", err)
	}
}

func TestCheckTaskAlgo(t *testing.T) {
	for _, tc := range []struct {
		task, algo, want string
	}{
		{TaskNode, "fedavg", ""},
		{TaskNode, "local", ""},
		{TaskNode, "cefedgnn", ""},
		{TaskNode, "fedgnn-st", ""},
		{TaskAML, "cefedgnn", ""},
		{TaskAML, "local", ""},
		{TaskRec, "fedavg", ""},
		{TaskRec, "lpsfed", ""},
		{TaskRec, "lpsfed-bpr", ""},
		{TaskRec, "cefedgnn", `task rec has no algorithm "cefedgnn" (want fedavg, lpsfed-bpr, lpsfed); cefedgnn is an algorithm of task node, aml`},
		{TaskRec, "local", `task rec has no algorithm "local"`},
		{TaskAML, "lpsfed", `task aml has no algorithm "lpsfed" (want local, fedavg, fedgnn-st, cefedgnn); lpsfed is an algorithm of task rec`},
		{TaskNode, "fedgnn_st", `task node has no algorithm "fedgnn_st"`},
		{TaskNode, "", `task node has no algorithm ""`},
		{"graph", "fedavg", `unknown task "graph" (want node, aml, rec)`},
	} {
		err := CheckTaskAlgo(tc.task, tc.algo)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s/%s refused: %v", tc.task, tc.algo, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s/%s: error %v, want one containing %q", tc.task, tc.algo, err, tc.want)
		}
	}
}

func TestAgentOptionsValidate(t *testing.T) {
	lr, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 2, Samples: 8})
	if err != nil {
		t.Fatal(err)
	}
	good := AgentOptions{Job: "job-1", ID: "bank-a", Task: TaskAML, Algo: "cefedgnn", Conn: ConnOptions{URL: "nats://127.0.0.1:4222"},
		Privacy: DefaultPrivacy(), Learner: lr}
	for _, tc := range []struct {
		name string
		f    func(*AgentOptions)
		want string
	}{
		{"good", func(*AgentOptions) {}, ""},
		{"external transport needs no URL", func(o *AgentOptions) { o.Conn.URL, o.Transport = "", &bus.NATSTransport{} }, ""},
		{"bad job", func(o *AgentOptions) { o.Job = "Job 1" }, `job "Job 1" is not`},
		{"reserved id", func(o *AgentOptions) { o.ID = bus.AggregatorID }, "is reserved"},
		{"pair", func(o *AgentOptions) { o.Task = TaskRec }, `task rec has no algorithm "cefedgnn"`},
		{"sigma", func(o *AgentOptions) { o.Privacy.ModelSigma = -1 }, "model σ1 (--model-sigma) is -1"},
		{"emb sigma -1 on cefedgnn", func(o *AgentOptions) { o.Privacy.EmbSigma = -1 }, "choose --algo fedavg"},
		{"no learner", func(o *AgentOptions) { o.Learner = nil }, "no learner"},
		{"no url", func(o *AgentOptions) { o.Conn.URL = "" }, "no NATS URL"},
		{"negative epochs", func(o *AgentOptions) { o.LocalEpochs = -1 }, "must not be negative"},
		{"NaN slow factor", func(o *AgentOptions) { o.SlowFactor = math.NaN() }, "slow factor NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.f(&o)
			err := o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid options refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAggregatorOptionsValidate(t *testing.T) {
	good := AggregatorOptions{Job: "job-1", Task: TaskNode, Conn: ConnOptions{URL: "nats://127.0.0.1:4222"},
		Round: aggregator.Config{Algo: "fedavg", Rounds: 3, MinClients: 2, RoundTimeout: time.Second}}
	for _, tc := range []struct {
		name string
		f    func(*AggregatorOptions)
		want string
	}{
		{"good", func(*AggregatorOptions) {}, ""},
		{"pair", func(o *AggregatorOptions) { o.Round.Algo = "lpsfed" }, `task node has no algorithm "lpsfed"`},
		{"round config", func(o *AggregatorOptions) { o.Round.Rounds = 0 }, "rounds 0 < 1"},
		{"enrol", func(o *AggregatorOptions) { o.Enrol = []string{"bank-a", "all"} }, `enrolled client "all"`},
		{"replicas", func(o *AggregatorOptions) { o.Recovery.Replicas = 7 }, "replicas must be 0 to 5"},
		{"no url", func(o *AggregatorOptions) { o.Conn.URL = "" }, "no NATS URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.f(&o)
			err := o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid options refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// The algorithm, not σ0, decides the embedding exchange: today's agent
// still reads a negative σ0 as "off", and only agentConfig writes one.
func TestAgentConfigExchangeFollowsAlgorithm(t *testing.T) {
	for _, tc := range []struct {
		algo    string
		wantEmb float64
	}{
		{aggregator.AlgoCEFedGNN, 0.3},
		{aggregator.AlgoFedGNNST, 0.3},
		{aggregator.AlgoFedAvg, -1},
		{aggregator.AlgoLocal, -1},
	} {
		o := AgentOptions{Job: "j", ID: "b", Algo: tc.algo, Privacy: DefaultPrivacy()}
		o.Privacy.EmbSigma = 0.3
		if got := agentConfig(o, nil, nil).EmbSigma; got != tc.wantEmb {
			t.Errorf("%s: agent σ0 %v, want %v", tc.algo, got, tc.wantEmb)
		}
	}
}
