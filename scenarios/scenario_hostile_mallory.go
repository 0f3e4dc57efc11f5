package scenarios

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"graphfed/bus"
	"graphfed/deploy"
)

// mallory is the hostile party of the hostile-agent scenario. It talks to
// the bus directly, below the agent, so that it can send what no agent
// would: it does not go through a privacy gate (its forged parameters are
// plain bus.Vector blobs, which decode as an Update's parameters just the
// same), and it lies about names, rounds and shapes.
type mallory struct {
	tr      *bus.NATSTransport
	job     string
	schema  string
	nparams int

	opened   chan struct{} // the first round opened
	done     chan struct{} // the job finished
	captured chan bus.Msg  // an honest bank's updates, to replay

	mu      sync.Mutex
	seq     uint64
	sent    map[string]int // by the reject reason each message must earn
	replays int
}

// forgedUpdate has the wire layout of bus.Update with parameters that
// never met a gate.
type forgedUpdate struct {
	Round  uint64     `msgpack:"round"`
	Weight float64    `msgpack:"weight"`
	Params bus.Vector `msgpack:"params"`
}

// lurk subscribes, before the job starts, to round openings, the end of the
// job and an honest bank's updates.
func (m *mallory) lurk() error {
	m.opened, m.done, m.captured = make(chan struct{}), make(chan struct{}), make(chan bus.Msg, 64)
	var opened, done sync.Once
	subs := []struct {
		subject string
		h       bus.Handler
	}{
		{bus.Subject(m.job, bus.KindRound), func(bus.Msg) { opened.Do(func() { close(m.opened) }) }},
		{bus.Subject(m.job, bus.KindDone), func(bus.Msg) { done.Do(func() { close(m.done) }) }},
		{bus.Subject(m.job, bus.KindUpdate, deploy.ClientID(0)), func(msg bus.Msg) {
			select {
			case m.captured <- msg:
			default:
			}
		}},
	}
	for _, s := range subs {
		if _, err := m.tr.Subscribe(s.h, s.subject); err != nil {
			return fmt.Errorf("mallory: %w", err)
		}
	}
	return m.tr.Flush(context.Background())
}

func (m *mallory) counts() (map[string]int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sent, m.replays
}

func (m *mallory) seal(kind bus.Kind, from string, round uint64, body any) ([]byte, error) {
	m.mu.Lock()
	m.seq++
	seq := m.seq
	m.mu.Unlock()
	// Stamped now, as a party's endpoint stamps: a hello from before the
	// aggregator's run began would be rejected as a replay.
	return bus.Seal(bus.Envelope{Job: m.job, Kind: kind, From: from, Round: round, Seq: seq, Time: time.Now().UnixNano()}, body)
}

// send publishes data, expecting the receivers to reject it for reason.
func (m *mallory) send(ctx context.Context, reason, subject string, data []byte, err error) error {
	if err != nil {
		return fmt.Errorf("mallory: %s: %w", reason, err)
	}
	if err := m.tr.Publish(ctx, subject, data); err != nil {
		return fmt.Errorf("mallory: %s: %w", reason, err)
	}
	if reason != "" {
		m.mu.Lock()
		m.sent[reason]++
		m.mu.Unlock()
	}
	return nil
}

// attack joins once the first round is open, sends one message of every
// hostile kind, then replays the honest bank's updates until the job ends.
func (m *mallory) attack(ctx context.Context) error {
	select {
	case <-m.opened:
	case <-ctx.Done():
		return ctx.Err()
	}
	hello, err := m.seal(bus.KindHello, malloryID, 0, &bus.Hello{SchemaHash: m.schema, NumParams: m.nparams, TrainSize: 10})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	reply, err := m.tr.Request(rctx, bus.Subject(m.job, bus.KindHello, malloryID), hello)
	cancel()
	if err != nil {
		return fmt.Errorf("mallory: join: %w", err)
	}
	var hr bus.HelloReply
	if env, err := bus.Open(reply); err != nil || env.UnmarshalBody(&hr) != nil || !hr.Accepted {
		return fmt.Errorf("mallory: join refused (%v): %s", err, hr.Reason)
	}
	mine := bus.Subject(m.job, bus.KindUpdate, malloryID)
	good := make(bus.Vector, m.nparams)
	nan := make(bus.Vector, m.nparams)
	nan[m.nparams/2] = float32(math.NaN())
	oldVersion, err := msgpack.Marshal(&bus.Envelope{Version: bus.SchemaVersion + 98, Job: m.job, Kind: bus.KindUpdate, From: malloryID, Body: []byte{0x80}})
	steps := []func() error{
		func() error { return m.send(ctx, bus.ReasonGarbage, mine, []byte{0xc1, 0x00, 0xff, 0x13}, nil) },
		func() error { return m.send(ctx, bus.ReasonVersion, mine, oldVersion, err) },
		func() error {
			d, err := m.seal(bus.KindUpdate, deploy.ClientID(1), 1, &forgedUpdate{Round: 1, Weight: 1e9, Params: good})
			return m.send(ctx, bus.ReasonSubject, mine, d, err) // another bank's name on mallory's subject
		},
		func() error {
			d, err := m.seal(bus.KindUpdate, "eve", 1, &forgedUpdate{Round: 1, Weight: 1e9, Params: good})
			return m.send(ctx, bus.ReasonSender, bus.Subject(m.job, bus.KindUpdate, "eve"), d, err)
		},
		func() error {
			d, err := m.seal(bus.KindUpdate, malloryID, 1<<40, &forgedUpdate{Round: 1 << 40, Weight: 1e9, Params: good})
			return m.send(ctx, bus.ReasonRound, mine, d, err)
		},
		func() error {
			d, err := m.seal(bus.KindUpdate, malloryID, 1, &forgedUpdate{Round: 1, Weight: 1e9, Params: make(bus.Vector, m.nparams+3)})
			return m.send(ctx, bus.ReasonShape, mine, d, err)
		},
		func() error {
			d, err := m.seal(bus.KindUpdate, malloryID, 1, &forgedUpdate{Round: 1, Weight: 1e9, Params: nan})
			return m.send(ctx, bus.ReasonNonFinite, mine, d, err)
		},
		func() error {
			// To the agents, whose validators count it; the aggregator does
			// not listen to round openings.
			d, err := m.seal(bus.KindRound, malloryID, 2, &bus.RoundOpen{Round: 2, ModelRound: 0})
			return m.send(ctx, "", bus.Subject(m.job, bus.KindRound), d, err)
		},
		func() error {
			return m.send(ctx, bus.ReasonOversized, mine, make([]byte, hostileMaxBytes+1), nil)
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	if err := m.tr.Flush(ctx); err != nil {
		return fmt.Errorf("mallory: %w", err)
	}
	// Mallory hears its own replays on the subject it replays to: each
	// honest message is replayed once, not echoed forever.
	seen := map[string]bool{}
	for {
		select {
		case msg := <-m.captured:
			env, err := bus.Open(msg.Data)
			if err != nil || seen[env.MsgID()] {
				continue
			}
			seen[env.MsgID()] = true
			if err := m.tr.Publish(ctx, msg.Subject, msg.Data); err != nil {
				return fmt.Errorf("mallory: replay: %w", err)
			}
			m.mu.Lock()
			m.replays++
			m.mu.Unlock()
		case <-m.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// hostileMaxBytes is the job's message limit in the hostile scenario: well
// under the 64 MiB default, so that the oversized probe is cheap to send
// and cannot crowd a loaded subscriber into NATS's slow-consumer drops.
const hostileMaxBytes = 1 << 20
