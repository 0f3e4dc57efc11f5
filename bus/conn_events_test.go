package bus

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestBoundedSubscriptionSlowConsumer: a subscriber whose handler falls
// behind loses messages to its pending limits, never more than they
// hold, and the drops are counted on the subscription and logged and
// counted as a slow-consumer event on the connection.
func TestBoundedSubscriptionSlowConsumer(t *testing.T) {
	srv, err := StartServer(ServerOptions{NoJetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	var logs syncBuffer
	ev := NewConnEvents("aggregator", zerolog.New(&logs))
	nc, err := Connect(srv.ClientURL(), ConnectOptions{Name: "slow", Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	tr := NewNATSTransport(nc, true)
	defer tr.Close()
	if got := tr.MaxPayload(); got != DefaultMaxPayload {
		t.Fatalf("announced payload limit %d, want %d", got, DefaultMaxPayload)
	}
	release := make(chan struct{})
	got := 0
	sub, err := tr.SubscribeBounded(func(Msg) {
		<-release
		got++
	}, PendingLimits{Msgs: 5, Bytes: 1 << 20}, "gf.j.update.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	pub := natsTransport(t, srv.ClientURL(), "flooder")
	const sent = 50
	for range sent {
		if err := pub.Publish(t.Context(), "gf.j.update.bank-0", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for sub.Dropped() < sent-6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for ev.Counts().SlowConsumer == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if d := sub.Dropped(); d < sent-6 {
		t.Fatalf("dropped %d of %d with 5 pending (and one in the handler)", d, sent)
	}
	if c := ev.Counts(); c.SlowConsumer == 0 || c.Errors != 0 {
		t.Fatalf("connection counts %+v: want the slow consumer counted and no other error", c)
	}
	if !strings.Contains(logs.String(), "slow consumer") || !strings.Contains(logs.String(), `"subject":"gf.j.update.*"`) {
		t.Fatalf("slow consumer not logged with its subject: %s", logs.String())
	}
}

// TestConnEventsDisconnectReconnect: a server restart is logged and
// counted as a disconnect and a reconnect.
func TestConnEventsDisconnectReconnect(t *testing.T) {
	srv, err := StartServer(ServerOptions{NoJetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	url := srv.ClientURL()
	var logs syncBuffer
	ev := NewConnEvents("bank-0", zerolog.New(&logs))
	nc, err := Connect(url, ConnectOptions{Name: "bank", Events: ev, ReconnectWait: 20 * time.Millisecond})
	if err != nil {
		srv.Shutdown()
		t.Fatal(err)
	}
	defer nc.Close()
	srv.Shutdown()
	srv2, err := StartServer(ServerOptions{NoJetStream: true, Port: urlPort(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Shutdown()
	deadline := time.Now().Add(10 * time.Second)
	for ev.Counts().Reconnects == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c := ev.Counts(); c.Disconnects != 1 || c.Reconnects != 1 {
		t.Fatalf("counts %+v, want one disconnect and one reconnect", c)
	}
	out := logs.String()
	if !strings.Contains(out, "nats: disconnected") || !strings.Contains(out, "nats: reconnected") || !strings.Contains(out, `"party":"bank-0"`) {
		t.Fatalf("log lacks the events: %s", out)
	}
}

// syncBuffer is a log sink written from the client library's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A first dial that fails is retried in the background (Connect sets
// RetryOnFailedConnect): the failures are counted and said at once, not
// discovered as a request timing out later.
func TestConnEventsDialFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "nats://" + l.Addr().String()
	l.Close() // nothing listens there now
	var logs syncBuffer
	ev := NewConnEvents("bank-0", zerolog.New(&logs))
	nc, err := Connect(url, ConnectOptions{Name: "bank", Events: ev, ReconnectWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("connect returned %v; want a connection retrying in the background", err)
	}
	defer nc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for ev.Counts().DialFailures < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := ev.Counts().DialFailures; n < 4 {
		t.Fatalf("%d dial failures counted, want at least 4", n)
	}
	if nc.IsConnected() {
		t.Fatal("connected to a closed port")
	}
	lines := strings.Count(logs.String(), "cannot reach the server")
	if lines < 1 || int64(lines) > ev.Counts().DialFailures/2+1 {
		t.Fatalf("%d log lines for %d failures: want the first and then powers of two\n%s", lines, ev.Counts().DialFailures, logs.String())
	}
}
