package aggregator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
)

// BenchmarkIngest measures the aggregator's ingest of 1M-float updates
// (4 MiB each) from N agents over the embedded nats-server, against raw
// nats.go moving the same bytes in the same rounds, with signatures off
// and on.
//
// One op is one round: N agents each publish one update, and the next
// round starts when the receiver has all N.
//
//   - agg: the real aggregator.Server over bus.NATSTransport (FedAvg,
//     MinClients N), agents on their own connections. Updates are sealed
//     through each agent's bus.Endpoint (valid sequence numbers and,
//     signed, signatures) before anything is timed, one per round; agents
//     publish round r's on hearing round r open. A round's ingest runs
//     from the first agent's publish to the aggregator's close decision
//     (OnRound): NATS delivery, the inbox, decode, validation, signature
//     verification, the machine's steps and the weighted average.
//   - raw: N nats.go publishers on their own connections publish the same
//     bytes to one subscriber, which tells them to go on once it has all
//     N of a round (a small message on a subject they subscribe to). A
//     round's ingest runs from the first publish to the N-th receipt.
//
// MB/s and raw-MB/s are the round's bytes over the sum of the rounds'
// ingest spans, ratio their quotient (the bar); median-ratio is the
// median over the jobs of a raw job's quotient with the aggregator job
// that follows it, which the other processes of a shared machine sway
// less. Between rounds the
// aggregator publishes the model (agents do not subscribe to it, so its
// bytes end at the server) and the next round's opening, which the raw
// subscriber's go-on message stands for: round-MB/s, raw-round-MB/s and
// round-ratio count the whole job, first publish to last close, those
// gaps included. The benchmark timer (ns/op, B/op, allocs/op, which count
// every goroutine of the process: agents and NATS included) runs over the
// aggregator's jobs only. Jobs of up to roundsPerJob rounds alternate raw
// and agg, so that both see the same machine load; setup (aggregator,
// joins, sealing) is not timed.
func BenchmarkIngest(b *testing.B) {
	srv, err := bus.StartServer(bus.ServerOptions{NoJetStream: true})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	for _, n := range []int{4, 8} {
		for _, signed := range []bool{false, true} {
			b.Run(fmt.Sprintf("agents=%d/signed=%v", n, signed), func(b *testing.B) {
				benchIngest(b, srv.ClientURL(), n, signed)
			})
		}
	}
}

const (
	ingestParams = 1 << 20
	roundsPerJob = 2
	ingestJob    = "ingest"
)

// wireUpdate is bus.Update's wire form with a plain vector: the benchmark
// has no privacy gate to make a bus.Sensitive from, and the aggregator
// cannot tell the two apart.
type wireUpdate struct {
	Round     uint64     `msgpack:"round"`
	BaseRound uint64     `msgpack:"base"`
	Weight    float64    `msgpack:"weight"`
	Params    bus.Vector `msgpack:"params"`
	Grad      bus.Vector `msgpack:"grad"`
	Loss      float64    `msgpack:"loss"`
}

type ingestRig struct {
	url     string
	ids     []string
	ring    *bus.Keyring
	signers map[string]*bus.Signer
	params  [][]float32 // per agent
}

func benchIngest(b *testing.B, url string, n int, signed bool) {
	rig := &ingestRig{url: url}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range n {
		rig.ids = append(rig.ids, fmt.Sprintf("bank-%d", i))
		p := make([]float32, ingestParams)
		for j := range p {
			p[j] = float32(rng.NormFloat64())
		}
		rig.params = append(rig.params, p)
	}
	if signed {
		dep, err := bus.NewDeployment(ingestJob, rig.ids)
		if err != nil {
			b.Fatal(err)
		}
		if rig.ring, err = dep.Keyring(); err != nil {
			b.Fatal(err)
		}
		rig.signers = map[string]*bus.Signer{}
		for _, c := range dep.Creds {
			kp, err := nkeys.FromSeed(c.Seed)
			if err != nil {
				b.Fatal(err)
			}
			if rig.signers[c.ID], err = bus.NewSigner(c.ID, kp); err != nil {
				b.Fatal(err)
			}
		}
	}
	perRound := int64(n) * int64(4*ingestParams)
	b.ReportAllocs()
	b.StopTimer()
	var agg, raw roundClock
	var pairs []float64 // raw over agg ingest time, job by job
	for done := 0; done < b.N; {
		k := min(roundsPerJob, b.N-done)
		r0, a0 := raw.ingest, agg.ingest
		rig.raw(b, k, &raw)
		rig.agg(b, k, &agg)
		pairs = append(pairs, (raw.ingest-r0).Seconds()/(agg.ingest-a0).Seconds())
		done += k
	}
	sort.Float64s(pairs)
	mb := float64(perRound) * float64(b.N) / 1e6
	b.ReportMetric(mb/agg.ingest.Seconds(), "MB/s")
	b.ReportMetric(mb/raw.ingest.Seconds(), "raw-MB/s")
	b.ReportMetric(raw.ingest.Seconds()/agg.ingest.Seconds(), "ratio")
	b.ReportMetric(pairs[len(pairs)/2], "median-ratio")
	b.ReportMetric(mb/agg.wall.Seconds(), "round-MB/s")
	b.ReportMetric(mb/raw.wall.Seconds(), "raw-round-MB/s")
	b.ReportMetric(raw.wall.Seconds()/agg.wall.Seconds(), "round-ratio")
}

// roundClock adds up the timed spans of jobs.
type roundClock struct {
	ingest, wall time.Duration
}

// job times one job of k rounds.
type jobClock struct {
	mu         sync.Mutex
	start, end []time.Time // by round, 1 to k
}

func newJobClock(k int) *jobClock {
	return &jobClock{start: make([]time.Time, k+1), end: make([]time.Time, k+1)}
}

// published notes a publish of round r at t.
func (c *jobClock) published(r int, t time.Time) {
	c.mu.Lock()
	if c.start[r].IsZero() || t.Before(c.start[r]) {
		c.start[r] = t
	}
	c.mu.Unlock()
}

// closed notes round r's end at t.
func (c *jobClock) closed(r int, t time.Time) {
	c.mu.Lock()
	c.end[r] = t
	c.mu.Unlock()
}

// addTo adds the job's spans to rc.
func (c *jobClock) addTo(b *testing.B, rc *roundClock) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := len(c.start) - 1
	for r := 1; r <= k; r++ {
		if c.start[r].IsZero() || c.end[r].Before(c.start[r]) {
			b.Fatalf("round %d: no span (%v to %v)", r, c.start[r], c.end[r])
		}
		rc.ingest += c.end[r].Sub(c.start[r])
	}
	rc.wall += c.end[k].Sub(c.start[1])
}

func (r *ingestRig) connect(b *testing.B, name string) *nats.Conn {
	nc, err := bus.Connect(r.url, bus.ConnectOptions{Name: name})
	if err != nil {
		b.Fatal(err)
	}
	return nc
}

// agg runs one aggregator job of k rounds and adds its spans to rc.
func (r *ingestRig) agg(b *testing.B, k int, rc *roundClock) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n := len(r.ids)
	atr := bus.NewNATSTransport(r.connect(b, "aggregator"), true)
	defer atr.Close()
	last := make(chan struct{}, 1)
	clock := newJobClock(k)
	cfg := aggregator.ServerConfig{Job: ingestJob, Log: zerolog.Nop(), FinalWait: time.Millisecond,
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: k, MinClients: n, RoundTimeout: time.Minute},
		OnRound: func(c aggregator.RoundClosed) {
			if c.Round >= 1 && c.Round <= uint64(k) {
				clock.closed(int(c.Round), time.Now())
			}
			if c.Round == uint64(k) {
				last <- struct{}{}
			}
		}}
	if r.ring != nil {
		cfg.Keyring, cfg.Signer = r.ring, r.signers[bus.AggregatorID]
	}
	srv, err := aggregator.NewServer(cfg, atr)
	if err != nil {
		b.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() {
		res, err := srv.Run(ctx)
		if err == nil && (len(res.Closes) != k || len(res.Rejects) > 0 || res.Flow.InboxDropped() > 0 || res.Flow.PendingDropped > 0) {
			err = fmt.Errorf("closes %d of %d, rejects %v, flow %+v", len(res.Closes), k, res.Rejects, res.Flow)
		}
		for _, c := range res.Closes {
			if err == nil && (c.Reason != "quorum" || len(c.In) != n) {
				err = fmt.Errorf("round %d closed on %s with %d updates", c.Round, c.Reason, len(c.In))
			}
		}
		runErr <- err
	}()
	release := make(chan struct{})
	var ready, wg sync.WaitGroup
	for i, id := range r.ids {
		tr := bus.NewNATSTransport(r.connect(b, id), true)
		defer tr.Close()
		var signer *bus.Signer
		if r.signers != nil {
			signer = r.signers[id]
		}
		ep, err := bus.NewEndpoint(bus.EndpointConfig{Job: ingestJob, ID: id, Signer: signer,
			Schema: bus.Schema{Keyring: r.ring}}, tr)
		if err != nil {
			b.Fatal(err)
		}
		sealed := make([][]byte, k+1)
		for round := 1; round <= k; round++ {
			u := &wireUpdate{Round: uint64(round), BaseRound: uint64(round - 1), Weight: float64(100 + i), Params: r.params[i]}
			if sealed[round], err = ep.Seal(bus.KindUpdate, uint64(round), u); err != nil {
				b.Fatal(err)
			}
		}
		rounds := make(chan uint64, k+1)
		sub, err := tr.Subscribe(func(m bus.Msg) {
			var ro bus.RoundOpen
			if _, err := ep.OpenFrom(m.Data, bus.KindRound, bus.AggregatorID, &ro); err == nil {
				rounds <- ro.Round
			}
		}, bus.Subject(ingestJob, bus.KindRound))
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Unsubscribe()
		if err := tr.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			joined := false
			for !joined {
				if _, err := ep.Request(ctx, bus.Subject(ingestJob, bus.KindHello, id), bus.KindHello,
					&bus.Hello{SchemaHash: "bench", NumParams: ingestParams, TrainSize: 100, Algo: aggregator.AlgoFedAvg}); err == nil {
					joined = true
				} else if ctx.Err() != nil {
					b.Error(err)
					ready.Done()
					return
				}
			}
			subj := bus.Subject(ingestJob, bus.KindUpdate, id)
			first := true
			for {
				var round uint64
				select {
				case round = <-rounds:
				case <-ctx.Done():
					return
				}
				if first {
					ready.Done()
					<-release
					first = false
				}
				if round >= 1 && round <= uint64(k) {
					clock.published(int(round), time.Now())
					if err := tr.Publish(ctx, subj, sealed[round]); err != nil {
						b.Error(err)
						return
					}
				}
				if round >= uint64(k) {
					return
				}
			}
		}()
	}
	ready.Wait() // every agent joined and heard round 1 open
	b.StartTimer()
	close(release)
	select {
	case <-last:
	case err := <-runErr:
		b.Fatalf("aggregator stopped before its last round: %v", err)
	}
	b.StopTimer()
	wg.Wait()
	if err := <-runErr; err != nil {
		b.Fatal(err)
	}
	clock.addTo(b, rc)
}

// raw moves the same bytes in k rounds with plain nats.go and adds its
// spans to rc.
func (r *ingestRig) raw(b *testing.B, k int, rc *roundClock) {
	n := len(r.ids)
	payload := make([]byte, 0, 4*ingestParams+256)
	payload = bus.AppendFloat32s(payload, r.params[0])
	payload = append(payload, make([]byte, 200)...) // about an envelope's size
	sc := r.connect(b, "raw-sub")
	defer sc.Close()
	const data, next = "raw.data", "raw.next"
	got := 0
	clock := newJobClock(k)
	finished := make(chan struct{}, 1)
	sub, err := sc.Subscribe(data, func(m *nats.Msg) {
		if len(m.Data) != len(payload) {
			b.Errorf("raw: %d bytes, want %d", len(m.Data), len(payload))
		}
		got++
		if got%n == 0 {
			clock.closed(got/n, time.Now())
		}
		switch {
		case got == n*k:
			finished <- struct{}{}
		case got%n == 0:
			sc.Publish(next, nil)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	sub.SetPendingLimits(-1, -1)
	if err := sc.Flush(); err != nil {
		b.Fatal(err)
	}
	var wg, ready sync.WaitGroup
	release := make(chan struct{})
	for i := range n {
		pc := r.connect(b, fmt.Sprintf("raw-pub-%d", i))
		defer pc.Close()
		go2 := make(chan struct{}, k)
		ns, err := pc.Subscribe(next, func(*nats.Msg) { go2 <- struct{}{} })
		if err != nil {
			b.Fatal(err)
		}
		if err := pc.Flush(); err != nil {
			b.Fatal(err)
		}
		defer ns.Unsubscribe()
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			ready.Done()
			<-release
			for round := range k {
				if round > 0 {
					<-go2
				}
				clock.published(round+1, time.Now())
				if err := pc.Publish(data, payload); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	ready.Wait()
	close(release)
	<-finished
	wg.Wait()
	clock.addTo(b, rc)
}
