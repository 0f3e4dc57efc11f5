package agent_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// meanLearner fits θ to the mean of its local targets by gradient descent on
// ½‖θ − t‖²: a real, tiny model whose FedAvg fixed point is the
// sample-weighted mean of the clients' targets, so the protocol's result can
// be checked in closed form.
type meanLearner struct {
	target []float32
	n      int
	theta  []float32
}

func (l *meanLearner) SchemaHash() string { return fmt.Sprintf("mean-%d", len(l.target)) }
func (l *meanLearner) NumParams() int     { return len(l.target) }
func (l *meanLearner) TrainSize() int     { return l.n }
func (l *meanLearner) Init(seed uint64) {
	l.theta = make([]float32, len(l.target))
	for i := range l.theta {
		l.theta[i] = float32(seed % 7)
	}
}
func (l *meanLearner) Params() []float32 { return append([]float32(nil), l.theta...) }
func (l *meanLearner) SetParams(p []float32) error {
	if len(p) != len(l.theta) {
		return fmt.Errorf("length %d", len(p))
	}
	copy(l.theta, p)
	return nil
}
func (l *meanLearner) Train(epochs int) float64 {
	var loss float64
	for e := 0; e < epochs; e++ {
		loss = 0
		for i := range l.theta {
			d := l.theta[i] - l.target[i]
			loss += 0.5 * float64(d*d)
			l.theta[i] -= 0.5 * d
		}
	}
	return loss
}
func (l *meanLearner) Evaluate() map[string]float64 {
	var d float64
	for i := range l.theta {
		d += math.Abs(float64(l.theta[i]))
	}
	return map[string]float64{"l1": d}
}

type run struct {
	agg     aggregator.Result
	agents  []agent.Result
	errs    []error
	elapsed time.Duration
}

type jobOpts struct {
	sigma  float64
	budget privacy.Budget
	ledger privacy.Ledger
	// records: the aggregator keeps its round records in ledger
	// (aggregator.ServerConfig.Ledger).
	records bool
}

func runJob(t *testing.T, algo string, rounds int, clients []*meanLearner, slow map[int]time.Duration, timeout time.Duration) run {
	return runJobWith(t, algo, rounds, clients, slow, timeout, jobOpts{})
}

func runJobWith(t *testing.T, algo string, rounds int, clients []*meanLearner, slow map[int]time.Duration, timeout time.Duration, o jobOpts) run {
	t.Helper()
	net := bus.NewInmemNetwork()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var recorder *privacy.Gate
	if o.records {
		var err error
		if recorder, err = privacy.NewGate(ctx, privacy.Config{Job: "job", Client: privacy.AggregatorClient, Delta: 1e-4}, o.ledger, nil); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := aggregator.NewServer(aggregator.ServerConfig{
		Job: "job", InitSeed: 3, FinalWait: 2 * time.Second, Log: zerolog.Nop(), Ledger: recorder,
		Round: aggregator.Config{Algo: algo, Rounds: rounds, MinClients: len(clients), RoundTimeout: timeout},
	}, net.Transport())
	if err != nil {
		t.Fatal(err)
	}
	var out run
	out.agents = make([]agent.Result, len(clients))
	out.errs = make([]error, len(clients))
	var wg sync.WaitGroup
	start := time.Now()
	for i, l := range clients {
		ledger := o.ledger
		if ledger == nil {
			ledger = privacy.NewMemLedger()
		}
		seed := uint64(i)
		gate, err := privacy.NewGate(ctx, privacy.Config{Job: "job", Client: fmt.Sprintf("c%d", i), Delta: 1e-4, Budget: o.budget, Seed: &seed}, ledger, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Config{Job: "job", Client: fmt.Sprintf("c%d", i), LocalEpochs: 1, Slowdown: slow[i], HelloRetry: 200 * time.Millisecond,
			ModelSigma: o.sigma, ModelClip: 15, Log: zerolog.Nop()}, net.Transport(), l, gate)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out.agents[i], out.errs[i] = a.Run(ctx)
		}(i)
	}
	out.agg, err = srv.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	return out
}

func TestFedAvgConvergesToWeightedMean(t *testing.T) {
	clients := []*meanLearner{
		{target: []float32{1, 0}, n: 1},
		{target: []float32{4, 3}, n: 2},
		{target: []float32{0, 9}, n: 3},
	}
	r := runJob(t, "fedavg", 30, clients, nil, 5*time.Second)
	want := []float32{(1*1 + 2*4 + 0) / 6.0, (0 + 2*3 + 3*9) / 6.0}
	// The gate adds N(0, 1e-3²) to every released update; the average of
	// three carries about 6e-4 of it, so 1e-2 is over 15 standard deviations.
	for i := range want {
		if math.Abs(float64(r.agg.Model[i]-want[i])) > 1e-2 {
			t.Fatalf("global model %v, want %v", r.agg.Model, want)
		}
	}
	if len(r.agg.Closes) != 30 || len(r.agg.Final) != 3 {
		t.Fatalf("%d rounds closed, %d final reports", len(r.agg.Closes), len(r.agg.Final))
	}
	for i, e := range r.errs {
		if e != nil {
			t.Fatalf("agent %d: %v", i, e)
		}
	}
}

func TestLocalSharesNoParameters(t *testing.T) {
	clients := []*meanLearner{{target: []float32{1}, n: 1}, {target: []float32{5}, n: 1}}
	r := runJob(t, "local", 5, clients, nil, 5*time.Second)
	if r.agg.Model != nil {
		t.Fatalf("local produced a global model %v", r.agg.Model)
	}
	if got := r.agents[1].Final["l1"]; math.Abs(got-5) > 0.2 {
		t.Fatalf("local client 1 ended at %v, want ≈5", got)
	}
}

// A slow client does not stall the job: rounds close at the deadline without
// it, never wait for it, and after MissedToDead misses it leaves the quorum so
// rounds close as soon as the others answer.
func TestSlowClientDoesNotStall(t *testing.T) {
	clients := []*meanLearner{{target: []float32{1}, n: 1}, {target: []float32{2}, n: 1}, {target: []float32{3}, n: 1}}
	r := runJob(t, "fedavg", 4, clients, map[int]time.Duration{2: 400 * time.Millisecond}, 300*time.Millisecond)
	if len(r.agg.Closes) != 4 {
		t.Fatalf("%d rounds closed, want 4", len(r.agg.Closes))
	}
	for _, c := range r.agg.Closes {
		for _, id := range c.In {
			if id == "c2" {
				t.Fatalf("slow client counted in round %d", c.Round)
			}
		}
		if c.Reason == "deadline" && (len(c.Late) == 0 || c.Late[len(c.Late)-1] != "c2") {
			t.Fatalf("round %d closed at the deadline without c2 listed late: %+v", c.Round, c)
		}
	}
	if c := r.agg.Closes[0]; c.Reason != "deadline" {
		t.Fatalf("round 1 closed by %s, want deadline", c.Reason)
	}
	if r.agg.Dropped["late"] == 0 {
		t.Fatal("no late update was dropped")
	}
}

// Once a client's budget is spent its updates are withheld: rounds still
// close at quorum, the ledger holds exactly the releases made, and the final
// model is the other client's alone from then on.
func TestBudgetExhaustionWithholdsUpdates(t *testing.T) {
	clients := []*meanLearner{{target: []float32{1}, n: 1}, {target: []float32{9}, n: 1}}
	ledger := privacy.NewMemLedger()
	// Sensitivity 2·15 = 30 at σ = 60: μ = 0.5 per release; a budget of
	// ε = 3 at δ = 1e-4 admits a few releases, not ten.
	r := runJobWith(t, "fedavg", 10, clients, nil, 5*time.Second, jobOpts{sigma: 60, budget: privacy.Budget{Epsilon: 3}, ledger: ledger})
	for i, e := range r.errs {
		if e != nil {
			t.Fatalf("agent %d: %v", i, e)
		}
	}
	entries, err := ledger.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	perClient := map[string]int{}
	for _, e := range entries {
		perClient[e.Client]++
	}
	for _, id := range []string{"c0", "c1"} {
		n := perClient[id]
		if n < 1 || n >= 10 {
			t.Fatalf("client %s made %d releases; want the budget to stop it within 10 rounds", id, n)
		}
		if eps := r.agents[0].Final["privacy_epsilon_client"]; eps > 3 {
			t.Fatalf("client spent ε=%v over the budget 3", eps)
		}
	}
	if len(r.agg.Closes) != 10 {
		t.Fatalf("%d rounds closed", len(r.agg.Closes))
	}
	for _, c := range r.agg.Closes {
		if c.Reason != "quorum" {
			t.Fatalf("round %d closed by %s: withheld updates must still count for the quorum", c.Round, c.Reason)
		}
	}
	if r.agents[0].Final["privacy_withheld"] != 1 {
		t.Fatalf("agent did not report withholding: %v", r.agents[0].Final)
	}
}
