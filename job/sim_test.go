package job

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/graph"
	"graphfed/learner/node"
	"graphfed/privacy"
)

func smallClients(t *testing.T, n int) []*graph.ClientGraph {
	t.Helper()
	cfg := graph.DefaultCSBM()
	cfg.Nodes = 400
	d, err := graph.GenerateCSBM(cfg, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	owner, err := graph.PartitionRandom(d.N(), n, rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	cgs, err := graph.SplitByOwner(d, owner, n)
	if err != nil {
		t.Fatal(err)
	}
	return cgs
}

// tap records every message on gf.<job>.> in arrival order.
type tap struct {
	mu   sync.Mutex
	msgs []bus.Msg
}

func startTap(t *testing.T, url, job string) *tap {
	t.Helper()
	nc, err := bus.Connect(url, bus.ConnectOptions{Name: "tap"})
	if err != nil {
		t.Fatal(err)
	}
	tr := bus.NewNATSTransport(nc, true)
	t.Cleanup(func() { tr.Close() })
	tp := &tap{}
	if _, err := tr.Subscribe(func(m bus.Msg) {
		tp.mu.Lock()
		tp.msgs = append(tp.msgs, m)
		tp.mu.Unlock()
	}, "gf."+job+".>"); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tp
}

func (tp *tap) snapshot() []bus.Msg {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]bus.Msg(nil), tp.msgs...)
}

type tapSummary struct {
	updatesWithParams map[string]int // per client
	ledger            map[string]int // model-channel ledger entries per client
}

// checkLedgerBeforeRelease walks the tap in order: every update carrying
// parameters must follow the ledger entry for its client and round.
func checkLedgerBeforeRelease(t *testing.T, job string, msgs []bus.Msg) tapSummary {
	t.Helper()
	s := tapSummary{updatesWithParams: map[string]int{}, ledger: map[string]int{}}
	logged := map[string]bool{}
	for i, m := range msgs {
		ps, err := bus.ParseSubject(m.Subject)
		if err != nil {
			t.Fatalf("message %d on unreadable subject %q", i, m.Subject)
		}
		switch ps.Kind {
		case "ledger":
			var e privacy.Entry
			if err := json.Unmarshal(m.Data, &e); err != nil {
				t.Fatalf("ledger message %d: %v", i, err)
			}
			if e.Channel == privacy.ChannelModel {
				logged[fmt.Sprintf("%s/%d", e.Client, e.Round)] = true
				s.ledger[e.Client]++
			}
		case bus.KindUpdate:
			env, err := bus.Open(m.Data)
			if err != nil {
				t.Fatalf("update %d: %v", i, err)
			}
			var u bus.Update
			if err := env.UnmarshalBody(&u); err != nil {
				t.Fatal(err)
			}
			if u.Params.Len() == 0 {
				continue
			}
			s.updatesWithParams[env.From]++
			if !logged[fmt.Sprintf("%s/%d", env.From, u.Round)] {
				t.Fatalf("update of %s for round %d (message %d) was on the wire before its ledger entry", env.From, u.Round, i)
			}
		default:
			if _, err := bus.Open(m.Data); err != nil {
				t.Fatalf("message %d on %s is not an envelope: %v", i, m.Subject, err)
			}
		}
	}
	return s
}

func runTapped(t *testing.T, job string, p SimPrivacy, rounds int) (SimResult, tapSummary) {
	return runTappedMode(t, job, p, rounds, SecAggOff)
}

func runTappedMode(t *testing.T, job string, p SimPrivacy, rounds int, secure string) (SimResult, tapSummary) {
	t.Helper()
	srv, err := bus.StartServer(bus.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	tp := startTap(t, srv.ClientURL(), job)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := RunSim(ctx, SimConfig{Job: job, Algo: "fedavg", Clients: smallClients(t, 3), Node: node.DefaultConfig(), SecAgg: secure,
		Rounds: rounds, LocalEpochs: 2, RoundTimeout: 20 * time.Second, Seed: 1, NATSURL: srv.ClientURL(), Privacy: p, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the tap drain
	return res, checkLedgerBeforeRelease(t, job, tp.snapshot())
}

func TestTapEveryReleaseLoggedFirst(t *testing.T) {
	res, s := runTapped(t, "tap", SimPrivacy{}, 4)
	for i := range 3 {
		id := deploy.ClientID(i)
		if s.updatesWithParams[id] != 4 || s.ledger[id] != 4 {
			t.Fatalf("%s: %d updates with parameters and %d ledger entries, want 4 and 4", id, s.updatesWithParams[id], s.ledger[id])
		}
	}
	// 12 releases, and the aggregator's start, 4 round and done records.
	if len(res.Ledger) != 12+6 {
		t.Fatalf("ledger read back %d entries, want 12 releases and 6 records", len(res.Ledger))
	}
}

// TestTapSecureNothingInTheClear taps a job under secure aggregation (on
// by default): no update crosses the wire with its parameters, every
// bank records each round's secure aggregation in its ledger, and every
// round closes with the sum of all three.
func TestTapSecureNothingInTheClear(t *testing.T) {
	res, s := runTappedMode(t, "tap-secure", SimPrivacy{}, 4, SecAggAuto)
	records := map[string]int{}
	for _, e := range res.Ledger {
		if e.Channel == privacy.ChannelSecAgg {
			records[e.Client]++
		}
	}
	for i := range 3 {
		id := deploy.ClientID(i)
		if s.updatesWithParams[id] != 0 || records[id] != 4 {
			t.Fatalf("%s: %d updates with parameters in the clear and %d secure-aggregation records, want 0 and 4", id, s.updatesWithParams[id], records[id])
		}
	}
	for _, rc := range res.Agg.Closes {
		if rc.SecAgg == nil || len(rc.SecAgg.Survivors) != 3 || !rc.Aggregate {
			t.Fatalf("round %d: secure close %+v, aggregate %v; want the sum of 3", rc.Round, rc.SecAgg, rc.Aggregate)
		}
	}
}

func TestTapOverBudgetPublishesNothing(t *testing.T) {
	// Sensitivity 2·15 at σ1 = 60 is μ = 0.5 a release: a budget of ε = 3
	// admits a few of the 8 rounds' releases.
	res, s := runTapped(t, "budget", SimPrivacy{ModelSigma: 60, ModelClip: 15, Budget: privacy.Budget{Epsilon: 3}}, 8)
	for i := range 3 {
		id := deploy.ClientID(i)
		n := s.updatesWithParams[id]
		if n == 0 || n >= 8 {
			t.Fatalf("%s published %d parameter updates in 8 rounds under a budget", id, n)
		}
		if s.ledger[id] != n {
			t.Fatalf("%s: %d ledger entries for %d releases: a refused release was logged or published", id, s.ledger[id], n)
		}
	}
	if len(res.Agg.Closes) != 8 {
		t.Fatalf("job stalled: %d rounds", len(res.Agg.Closes))
	}
}
