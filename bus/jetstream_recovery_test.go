package bus

import (
	"bytes"
	"context"
	"errors"
	neturl "net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/privacy"
)

const recTestJob = "rec-1"

// The state record survives a new store value (a restarted aggregator);
// a write by a store that did not see the latest record is fenced off;
// models are kept by round.
func TestCheckpointStoreRoundTripAndFencing(t *testing.T) {
	srv := startTestServer(t)
	ctx := context.Background()
	open := func() *JetStreamCheckpointStore {
		s, err := OpenCheckpointStore(ctx, jsConn(t, srv.ClientURL()), recTestJob, CheckpointStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := open()
	if got, err := a.LoadState(ctx); err != nil || got != nil {
		t.Fatalf("fresh store: %q, %v", got, err)
	}
	for _, rec := range []string{"one", "two"} {
		if err := a.SaveState(ctx, []byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.SaveModel(ctx, 7, []byte("model seven")); err != nil {
		t.Fatal(err)
	}

	b := open()
	if got, err := b.LoadState(ctx); err != nil || string(got) != "two" {
		t.Fatalf("reopened store: %q, %v", got, err)
	}
	if got, err := b.LoadModel(ctx, 7); err != nil || string(got) != "model seven" {
		t.Fatalf("model of round 7: %q, %v", got, err)
	}
	if _, err := b.LoadModel(ctx, 8); err == nil {
		t.Fatal("loaded a model never stored")
	}
	// b takes over; a, the old aggregator still running, is fenced off.
	if err := b.SaveState(ctx, []byte("three")); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveState(ctx, []byte("zombie")); !errors.Is(err, ErrFenced) {
		t.Fatalf("stale writer: %v, want ErrFenced", err)
	}
	// So is one that never read the record.
	if err := open().SaveState(ctx, []byte("blind")); !errors.Is(err, ErrFenced) {
		t.Fatalf("blind writer: %v, want ErrFenced", err)
	}
	if got, _ := open().LoadState(ctx); string(got) != "three" {
		t.Fatalf("record %q after the fenced writes, want three", got)
	}
}

// An update published twice under one envelope (a retry after a lost
// acknowledgement) is stored once; updates not acknowledged by one
// consumer session come back to the next, those acknowledged do not, and
// every update stays readable by its position.
func TestUpdateLogAtLeastOnce(t *testing.T) {
	srv := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := UpdateLogOptions{AckWait: 300 * time.Millisecond}
	log1, err := OpenUpdateLog(ctx, jsConn(t, srv.ClientURL()), recTestJob, opts)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewDurableTransport(natsTransport(t, srv.ClientURL(), "bank"), recTestJob)
	if err != nil {
		t.Fatal(err)
	}
	var sent [][]byte
	for i := range 3 {
		data, err := Seal(Envelope{Job: recTestJob, Kind: KindUpdate, From: "bank-a", Round: uint64(i + 1), Seq: uint64(i + 1)},
			&Update{Round: uint64(i + 1), Weight: 1})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, data)
		for range 2 {
			if err := pub.Publish(ctx, Subject(recTestJob, KindUpdate, "bank-a"), data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := pub.Publish(ctx, Subject(recTestJob, KindMetrics, "bank-a"), sent[0]); err != nil {
		t.Fatalf("a non-update subject goes out as core NATS: %v", err)
	}
	info, err := log1.stream.Info(ctx)
	if err != nil || info.State.Msgs != 3 {
		t.Fatalf("stream holds %v messages (%v), want 3: duplicates are stored once", info.State.Msgs, err)
	}

	got := make(chan LoggedMsg, 16)
	stop, err := log1.Consume(func(m LoggedMsg) { got <- m }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m := next(t, got)
		if m.Seq != uint64(i+1) || m.Delivered != 1 || !bytes.Equal(m.Data, sent[i]) {
			t.Fatalf("delivery %d: seq %d delivered %d", i, m.Seq, m.Delivered)
		}
		if i != 1 {
			if err := m.Ack(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop()

	log2, err := OpenUpdateLog(ctx, jsConn(t, srv.ClientURL()), recTestJob, opts)
	if err != nil {
		t.Fatal(err)
	}
	stop, err = log2.Consume(func(m LoggedMsg) { got <- m }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if m := next(t, got); m.Seq != 2 || m.Delivered < 2 {
		t.Fatalf("after a restart: seq %d delivered %d, want the unacknowledged seq 2 again", m.Seq, m.Delivered)
	}
	select {
	case m := <-got:
		if m.Seq != 2 {
			t.Fatalf("acknowledged seq %d delivered again", m.Seq)
		}
	case <-time.After(time.Second):
	}
	if m, err := log2.Get(ctx, 3); err != nil || !bytes.Equal(m.Data, sent[2]) || m.Subject != Subject(recTestJob, KindUpdate, "bank-a") {
		t.Fatalf("get seq 3: %v", err)
	}
	if _, err := log2.Get(ctx, 9); err == nil {
		t.Fatal("read a position past the end")
	}
}

// urlPort is the port of a nats:// URL, to restart a server on it.
func urlPort(t *testing.T, u string) int {
	t.Helper()
	pu, err := neturl.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(pu.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func next(t *testing.T, ch <-chan LoggedMsg) LoggedMsg {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no update delivered")
		return LoggedMsg{}
	}
}

// A stream whose subjects go beyond the job's own is refused: as a ledger
// (it would capture what is not an entry) and as an update log.
func TestStreamsRefuseExtraSubjects(t *testing.T) {
	srv := startTestServer(t)
	nc := jsConn(t, srv.ClientURL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := ledgerStreamConfig(recTestJob, JSLedgerOptions{Replicas: 1, Duplicates: time.Minute})
	cfg.Subjects = append(cfg.Subjects, Subject(recTestJob, KindUpdate, "*"))
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		_, err := OpenJetStreamLedger(ctx, nc, recTestJob, JSLedgerOptions{ReadOnly: ro})
		if !errors.Is(err, privacy.ErrLedger) || !strings.Contains(err.Error(), "capture more than") {
			t.Errorf("read-only %v: %v, want a refusal of the extra subject", ro, err)
		}
	}

	job := "rec-2"
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: UpdateStreamName(job), Storage: jetstream.FileStorage,
		Subjects: []string{Subject(job, KindUpdate, "*"), Subject(job, KindEmb, ">")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenUpdateLog(ctx, nc, job, UpdateLogOptions{}); err == nil || !strings.Contains(err.Error(), "want exactly") {
		t.Fatalf("update log on a stream that also captures embeddings: %v", err)
	}
}

// Durable publishes ride out a restart of the server: the publisher
// retries until the restarted server stores the update.
func TestDurablePublishAcrossServerRestart(t *testing.T) {
	dir := t.TempDir()
	srv, err := StartServer(ServerOptions{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	url := srv.ClientURL()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := OpenUpdateLog(ctx, jsConn(t, url), recTestJob, UpdateLogOptions{}); err != nil {
		srv.Shutdown()
		t.Fatal(err)
	}
	pub, err := NewDurableTransport(natsTransport(t, url, "bank"), recTestJob)
	if err != nil {
		srv.Shutdown()
		t.Fatal(err)
	}
	srv.Shutdown()
	done := make(chan error, 1)
	go func() {
		data, _ := Seal(Envelope{Job: recTestJob, Kind: KindUpdate, From: "bank-a", Round: 1, Seq: 1}, &Update{Round: 1})
		done <- pub.Publish(ctx, Subject(recTestJob, KindUpdate, "bank-a"), data)
	}()
	time.Sleep(300 * time.Millisecond)
	srv2, err := StartServer(ServerOptions{StoreDir: dir, Port: urlPort(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv2.Shutdown)
	if err := <-done; err != nil {
		t.Fatalf("publish across the restart: %v", err)
	}
	l, err := OpenUpdateLog(ctx, jsConn(t, srv2.ClientURL()), recTestJob, UpdateLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := l.Get(ctx, 1); err != nil || m.Subject != Subject(recTestJob, KindUpdate, "bank-a") {
		t.Fatalf("the update was not stored: %v", err)
	}
}
