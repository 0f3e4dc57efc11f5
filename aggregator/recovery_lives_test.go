package aggregator_test

import (
	"context"
	"strings"
	"sync"

	"graphfed/bus"
)

// serverLives makes the number of a durable test job's checkpoints
// independent of the machine's load. Every join is a step and a
// checkpoint, and the tests that crash the server at each checkpoint of a
// reference run need every run to take the same steps. A client whose
// hello waited out a wall-clock retry period while a slow server still
// held it said hello again — a second join, a checkpoint more — so the
// reference run could count checkpoints the next run never reached. Here
// a client's hello goes out once a server listens and waits for that
// server's answer until the server dies, however slow the machine; only
// a server's death sends it again, to the next server.
type serverLives struct {
	ctx     context.Context // the test's: ends every wait
	mu      sync.Mutex
	current context.Context // the listening server's life; nil before the first
	changed chan struct{}   // closed when another server listens
}

func newServerLives(ctx context.Context) *serverLives {
	return &serverLives{ctx: ctx, changed: make(chan struct{})}
}

// server is the transport of a server that lives as long as life: once it
// subscribes, clients' hellos go to it.
func (s *serverLives) server(tr bus.Transport, life context.Context) bus.Transport {
	return &listeningTransport{Transport: tr, lives: s, life: life}
}

// client is a client's transport: its hellos wait for a listening server
// and for that server's answer.
func (s *serverLives) client(tr bus.Transport) bus.Transport {
	return &helloTransport{Transport: tr, lives: s}
}

func (s *serverLives) listen(life context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = life
	close(s.changed)
	s.changed = make(chan struct{})
}

// await returns the life of the server that listens now, waiting for one.
func (s *serverLives) await() (context.Context, error) {
	for {
		s.mu.Lock()
		cur, changed := s.current, s.changed
		s.mu.Unlock()
		if cur != nil && cur.Err() == nil {
			return cur, nil
		}
		select {
		case <-changed:
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
}

type listeningTransport struct {
	bus.Transport
	lives *serverLives
	life  context.Context
}

// Subscribe implements bus.Transport: the server's one subscription makes
// it the server clients say hello to.
func (t *listeningTransport) Subscribe(h bus.Handler, subjects ...string) (bus.Subscription, error) {
	sub, err := t.Transport.Subscribe(h, subjects...)
	if err == nil {
		t.lives.listen(t.life)
	}
	return sub, err
}

type helloTransport struct {
	bus.Transport
	lives *serverLives
}

// Request implements bus.Transport. A hello ignores the caller's retry
// deadline: it is answered by the listening server or fails when that
// server dies. Other requests pass through.
func (t *helloTransport) Request(ctx context.Context, subject string, data []byte) ([]byte, error) {
	if !strings.Contains(subject, "."+string(bus.KindHello)+".") {
		return t.Transport.Request(ctx, subject, data)
	}
	life, err := t.lives.await()
	if err != nil {
		return nil, err
	}
	return t.Transport.Request(life, subject, data)
}
