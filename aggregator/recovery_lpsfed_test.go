package aggregator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"graphfed/aggregator"
	"graphfed/bus"
)

const (
	lpJob    = "lprec"
	lpRounds = 4
	lpPhi    = 3
)

// lpWireUpdate is bus.Update as it travels (Sensitive values are blobs like
// Vector): the scripted clients below release their numbers without a
// privacy gate, which only the server's side of the test needs.
type lpWireUpdate struct {
	Round      uint64     `msgpack:"round"`
	BaseRound  uint64     `msgpack:"base"`
	Weight     float64    `msgpack:"weight"`
	Params     bus.Vector `msgpack:"params"`
	Loss       float64    `msgpack:"loss"`
	Rho        bus.Vector `msgpack:"rho,omitempty"`
	RhoVersion uint64     `msgpack:"rhov,omitempty"`
	Margin     bus.Vector `msgpack:"margin,omitempty"`
}

// lpClient is a scripted LPSFed client: deterministic "training" from the
// personalized model it holds, ρ_c released once per reference kernel, a
// margin every round. It trains a round only from the model the round
// names, so that its updates, and with them the final models, do not
// depend on timing or on the aggregator's crashes.
type lpClient struct {
	id  string
	idx int
	ep  *bus.Endpoint

	model               []float32
	modelRound, trained uint64
	rhoSent             uint64
	open                *bus.RoundOpen // a round waiting for its model
}

func (c *lpClient) run(ctx context.Context, tr bus.Transport) error {
	msgs := make(chan bus.Msg, 256)
	sub, err := tr.Subscribe(func(m bus.Msg) { msgs <- m }, bus.Subject(lpJob, bus.KindRound), bus.Subject(lpJob, bus.KindModel, "all"),
		bus.Subject(lpJob, bus.KindModel, c.id), bus.Subject(lpJob, bus.KindDone))
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	for { // tr is a serverLives client: a hello fails only when its server dies
		reply, err := c.ep.Request(ctx, bus.Subject(lpJob, bus.KindHello, c.id), bus.KindHello,
			&bus.Hello{SchemaHash: "lp", NumParams: 2, TrainSize: 10 * (c.idx + 1), Users: 5 + c.idx, Items: 7, Edges: 20 + 3*c.idx})
		if err == nil {
			var hr bus.HelloReply
			if _, err := c.ep.OpenFrom(reply, bus.KindHello, bus.AggregatorID, &hr); err != nil || !hr.Accepted {
				return fmt.Errorf("%s: hello reply %+v: %v", c.id, hr, err)
			}
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	c.model = []float32{float32(c.idx), 1}
	for {
		var m bus.Msg
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m = <-msgs:
		}
		_, body, err := c.ep.Open(m)
		if err != nil {
			return fmt.Errorf("%s: %v", c.id, err)
		}
		switch b := body.(type) {
		case *bus.Model:
			if b.Round > c.modelRound {
				c.model, c.modelRound = append([]float32(nil), b.Params...), b.Round
			}
		case *bus.RoundOpen:
			if b.Round > c.trained && (c.open == nil || b.Round > c.open.Round) {
				c.open = b
			}
		case *bus.Done:
			return c.ep.Publish(ctx, bus.Subject(lpJob, bus.KindMetrics, c.id), bus.KindMetrics, c.trained,
				&bus.Metrics{Round: c.trained, Final: true, Scores: map[string]float64{"x": 1}})
		}
		if c.open != nil && c.open.ModelRound <= c.modelRound {
			if err := c.train(ctx, c.open); err != nil {
				return err
			}
			c.open = nil
		}
	}
}

func (c *lpClient) train(ctx context.Context, r *bus.RoundOpen) error {
	u := &lpWireUpdate{Round: r.Round, BaseRound: c.modelRound, Weight: float64(10 * (c.idx + 1)), Params: make(bus.Vector, 2)}
	for i, x := range c.model {
		u.Params[i] = 0.5*x + float32(c.idx+i)*0.25 + float32(r.Round)*0.125
	}
	var lr bus.LPSFedRound
	if err := msgpack.Unmarshal(r.Payload, &lr); err != nil || len(lr.Kernel) != lpPhi {
		return fmt.Errorf("%s: round %d payload: %v (kernel %v)", c.id, r.Round, err, lr.Kernel)
	}
	if lr.Version != c.rhoSent {
		u.Rho, u.RhoVersion, c.rhoSent = bus.Vector{lr.Kernel[0] * float32(c.idx+1)}, lr.Version, lr.Version
	}
	u.Margin = bus.Vector{0.1 * float32(c.idx+1) * float32(r.Round)}
	c.trained = r.Round
	return c.ep.Publish(ctx, bus.Subject(lpJob, bus.KindUpdate, c.id), bus.KindUpdate, r.Round, u)
}

// lpReference is a cheap deterministic K^R.
func lpReference(s aggregator.ReferenceStats, phi int, seed uint64) ([]float64, error) {
	k := make([]float64, phi)
	for i := range k {
		k[i] = float64(s.Users+s.Edges) / float64(uint64(i+1)*(seed+1))
	}
	return k, nil
}

func lpServer(t *testing.T, e *recEnv, store aggregator.Store, lives *serverLives, life context.Context) (*aggregator.Server, *bus.InmemTransport) {
	t.Helper()
	tr := e.net.Transport()
	srv, err := aggregator.NewServer(aggregator.ServerConfig{
		Job: lpJob, FinalWait: time.Second, Log: zerolog.Nop(), Store: store, Updates: e.log, Lease: e.lease(t, lpJob),
		Round: aggregator.Config{Algo: aggregator.AlgoLPSFed, Rounds: lpRounds, MinClients: recClients, RoundTimeout: time.Minute,
			FreezeRounds: 1, LPSFed: aggregator.LPSFedConfig{Phi: lpPhi, RefEvery: 2, Seed: 3, Reference: lpReference}},
	}, lives.server(tr, life))
	if err != nil {
		t.Fatal(err)
	}
	return srv, tr
}

// runLPSFedDurable is runDurable for an LPSFed job of scripted clients.
func runLPSFedDurable(t *testing.T, at int, save bool) (aggregator.Result, *recEnv) {
	t.Helper()
	net := bus.NewInmemNetwork()
	log, err := aggregator.NewMemUpdateLog(net.Transport(), lpJob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	e := &recEnv{net: net, store: aggregator.NewMemStore(), log: log}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lives := newServerLives(ctx)
	errs := make([]error, recClients)
	var wg sync.WaitGroup
	for i := range recClients {
		id := fmt.Sprintf("c%d", i)
		tr := lives.client(net.Transport())
		ep, err := bus.NewEndpoint(bus.EndpointConfig{Job: lpJob, ID: id, Schema: bus.Schema{NumParams: 2}}, tr)
		if err != nil {
			t.Fatal(err)
		}
		c := &lpClient{id: id, idx: i, ep: ep}
		wg.Go(func() { errs[i] = c.run(ctx, tr) })
	}
	sctx, kill := context.WithCancel(ctx)
	defer kill()
	var store aggregator.Store = e.store
	if at > 0 {
		store = &crashingStore{MemStore: e.store, at: at, save: save, crash: kill}
	}
	srv, tr := lpServer(t, e, store, lives, sctx)
	res, err := srv.Run(sctx)
	tr.Close()
	if at > 0 {
		if !errors.Is(err, errCrashed) {
			t.Fatalf("crash at checkpoint %d: the first server ended with %v", at, err)
		}
		srv, _ = lpServer(t, e, e.store, lives, ctx)
		if res, err = srv.Run(ctx); err != nil {
			t.Fatalf("resumed server: %v", err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	return res, e
}

// lpDigest fingerprints every client's final personalized model, margin
// included, and the last mixing decision.
func lpDigest(t *testing.T, res aggregator.Result) string {
	t.Helper()
	if len(res.Closes) != lpRounds || len(res.Models) != recClients || res.Model != nil {
		t.Fatalf("%d closes, %d models (global %v)", len(res.Closes), len(res.Models), res.Model)
	}
	for i, rc := range res.Closes {
		if rc.Round != uint64(i+1) || rc.Reason != "quorum" || len(rc.In) != recClients || rc.Frozen != (i == 0) || rc.Mix == nil {
			t.Fatalf("round %d closed as %+v", i+1, rc)
		}
	}
	d := ""
	for _, p := range res.Models {
		if p.Round != lpRounds || !p.Final || !p.HasMargin {
			t.Fatalf("final model %+v", p)
		}
		d += fmt.Sprintf("%s:%s:%x;", p.To, aggregator.ModelDigest(p.Params)[:16], p.Margin)
	}
	return d + fmt.Sprint(res.Mixes[len(res.Mixes)-1].RhoBar)
}

// An LPSFed server killed at any of its checkpoints, just before or just
// after storing it, resumes (kernel, ρ_c and personalized models from its
// checkpoint) and sends every client the personalized model of an
// uninterrupted run, bit for bit.
func TestDurableLPSFedResumesAtEveryCheckpoint(t *testing.T) {
	ref, e := runLPSFedDurable(t, 0, false)
	want := lpDigest(t, ref)
	if last := ref.Mixes[len(ref.Mixes)-1]; len(last.Rho) != recClients || last.RhoBar["c0"] == last.RhoBar["c2"] {
		t.Fatalf("the job does not personalize: %+v", last)
	}
	n := e.store.Saves()
	for at := 1; at <= n; at++ {
		for _, save := range []bool{false, true} {
			t.Run(fmt.Sprintf("checkpoint-%d-saved-%v", at, save), func(t *testing.T) {
				res, _ := runLPSFedDurable(t, at, save)
				if got := lpDigest(t, res); got != want {
					t.Fatalf("final models %s, want %s", got, want)
				}
				if stored := at > 1 || save; res.Resumed != stored {
					t.Fatalf("resumed %v, want %v", res.Resumed, stored)
				}
			})
		}
	}
}
