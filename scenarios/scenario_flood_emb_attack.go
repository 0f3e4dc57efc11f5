package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"graphfed/bus"
	"graphfed/deploy"
)

// The embedding flood's attacker: with the attacker bank's seed (its NATS
// credentials and signing key, both in one NKey seed) it connects on its
// own and publishes correctly signed embedding messages on the bank's own
// subject to the victim, gf.<job>.emb.<from>.<to>, which the server's
// permissions allow it.

// forgedEmbeddings is bus.Embeddings with plain float data (the bus type
// carries only what a privacy gate released).
type forgedEmbeddings struct {
	Round   uint64     `msgpack:"round"`
	Layer   int        `msgpack:"layer"`
	Dim     int        `msgpack:"dim"`
	NodeIDs []int64    `msgpack:"nodes"`
	Data    bus.Vector `msgpack:"data"`
}

// embFlood is what the flood did.
type embFlood struct {
	sent  int           // messages published
	bytes int           // each message's wire size
	took  time.Duration // from the first publication until the victim had them all
	err   error
}

// embFlooder floods the victim in round: it waits for the attacker bank's
// own embeddings of that round to reach the victim's inbox, then sends
// the flood; settle holds the aggregator's close of the round until the
// victim's inbox is empty again.
type embFlooder struct {
	job, from, to string
	round         uint64
	dim           int
	done          chan struct{} // closed when run returns

	mu  sync.Mutex
	out embFlood
}

func (f *embFlooder) result() embFlood {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out
}

// run floods once; it closes f.done.
func (f *embFlooder) run(ctx context.Context, local *deploy.Local, victim *deploy.Agent, log zerolog.Logger) {
	defer close(f.done)
	err := f.flood(ctx, local, victim)
	if err != nil {
		log.Error().Err(err).Msg("embedding flood")
	}
	f.mu.Lock()
	f.out.err = err
	f.mu.Unlock()
}

func (f *embFlooder) flood(ctx context.Context, local *deploy.Local, victim *deploy.Agent) error {
	const op = "embedding flood"
	received := func() uint64 { return victim.Inbox().Senders[f.from].Received }
	// The bank sends the victim one embedding message a round: the
	// round's is the round-th.
	if err := waitUntil(ctx, 2*time.Minute, func() bool { return received() >= f.round }); err != nil {
		return fmt.Errorf("%s: %s's round %d embeddings never reached %s: %w", op, f.from, f.round, f.to, err)
	}
	before := received()
	signer, err := bus.CredsSigner(f.from, local.Creds(f.from))
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	nc, err := bus.Connect(local.URL(), bus.ConnectOptions{Name: "attacker-" + f.from, Creds: local.Creds(f.from)})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer nc.Close()
	// Rows of accounts nobody holds (global ids far past the world's), so
	// that the victim's learner ignores what its inbox lets through.
	rows := embFloodBytes / (4*f.dim + 9)
	body := forgedEmbeddings{Round: f.round, Layer: 1, Dim: f.dim, NodeIDs: make([]int64, rows), Data: make(bus.Vector, rows*f.dim)}
	for i := range body.NodeIDs {
		body.NodeIDs[i] = 1<<40 + int64(i)
	}
	raw, err := msgpack.Marshal(&body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	subject := bus.Subject(f.job, bus.KindEmb, f.from, f.to)
	start := time.Now()
	for i := range embFloodMessages {
		// Every message its own envelope and signature, far above the
		// bank's own sequence numbers.
		data, err := signer.Seal(bus.Envelope{Job: f.job, Kind: bus.KindEmb, From: f.from, Round: f.round,
			Seq: 1<<40 + uint64(i), Time: time.Now().UnixNano()}, msgpack.RawMessage(raw))
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if int64(len(data)) > nc.MaxPayload() {
			return fmt.Errorf("%s: a message of %d bytes, over the server's %d", op, len(data), nc.MaxPayload())
		}
		if err := nc.Publish(subject, data); err != nil {
			return fmt.Errorf("%s: message %d: %w", op, i, err)
		}
		f.mu.Lock()
		f.out.sent, f.out.bytes = i+1, len(data)
		f.mu.Unlock()
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	want := before + embFloodMessages
	if err := waitUntil(ctx, time.Minute, func() bool { return received() >= want }); err != nil {
		return fmt.Errorf("%s: the victim's inbox received %d of %d messages from %s: %w", op, received(), want, f.from, err)
	}
	f.mu.Lock()
	f.out.took = time.Since(start)
	f.mu.Unlock()
	return nil
}

// settle runs in the aggregator's close of the flood's round: it waits
// for the flood, then until the victim has taken every message waiting in
// its inbox, so that the next round's embeddings meet empty queues as in
// the clean run. Its errors are the flood's (run reports them).
func (f *embFlooder) settle(ctx context.Context, victim *deploy.Agent) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return
	}
	if err := waitUntil(ctx, time.Minute, func() bool { return victim.Inbox().QueuedMsgs == 0 }); err != nil {
		f.mu.Lock()
		f.out.err = fmt.Errorf("embedding flood: the victim's inbox did not drain: %w", err)
		f.mu.Unlock()
	}
}

// waitUntil polls cond until it holds, ctx ends or d passes.
func waitUntil(ctx context.Context, d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", d)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}
