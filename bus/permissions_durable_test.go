package bus

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// The aggregator's durable mode works under its locked-down credentials:
// it creates and consumes the job's update stream, keeps its checkpoint in
// the job's key-value bucket and its models in the job's object store, and
// a bank's durable publish is stored and delivered, all without a single
// permissions violation. A bank reaches none of the aggregator's state.
func TestPermissionsDurableAggregator(t *testing.T) {
	e := startSecureServer(t)
	agg, bank, other := e.connect(t, AggregatorID), e.connect(t, "bank-a"), e.connect(t, "bank-b")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ulog, err := OpenUpdateLog(ctx, agg.nc, secJob, UpdateLogOptions{})
	if err != nil {
		t.Fatalf("aggregator opens the update log: %v", err)
	}
	store, err := OpenCheckpointStore(ctx, agg.nc, secJob, CheckpointStoreOptions{})
	if err != nil {
		t.Fatalf("aggregator opens its checkpoint store: %v; violations %v", err, agg.violations(t))
	}
	if err := store.SaveState(ctx, []byte("state-1")); err != nil {
		t.Fatalf("save state: %v; violations %v", err, agg.violations(t))
	}
	if err := store.SaveModel(ctx, 1, bytes.Repeat([]byte("m"), 300<<10)); err != nil { // several chunks
		t.Fatalf("save model: %v; violations %v", err, agg.violations(t))
	}
	if err := store.SaveModel(ctx, 1, []byte("model one, again")); err != nil { // replaces the object
		t.Fatalf("save model again: %v", err)
	}
	if got, err := store.LoadState(ctx); err != nil || string(got) != "state-1" {
		t.Fatalf("load state: %q, %v", got, err)
	}
	if got, err := store.LoadModel(ctx, 1); err != nil || string(got) != "model one, again" {
		t.Fatalf("load model: %q, %v; violations %v", got, err, agg.violations(t))
	}

	pub, err := NewDurableTransport(NewNATSTransport(bank.nc, false), secJob)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Seal(Envelope{Job: secJob, Kind: KindUpdate, From: "bank-a", Round: 1, Seq: 1}, &Update{Round: 1, Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, Subject(secJob, KindUpdate, "bank-a"), data); err != nil {
		t.Fatalf("bank's durable publish: %v", err)
	}
	got := make(chan LoggedMsg, 4)
	stop, err := ulog.Consume(func(m LoggedMsg) { got <- m }, nil)
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	defer stop()
	m := next(t, got)
	if !bytes.Equal(m.Data, data) {
		t.Fatal("consumed update differs from the published one")
	}
	if err := m.Ack(ctx); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if _, err := ulog.Get(ctx, m.Seq); err != nil {
		t.Fatalf("get by position: %v", err)
	}
	for _, p := range []*party{agg, bank} {
		if v := p.violations(t); len(v) > 0 {
			t.Errorf("%s: permissions violations in durable mode: %v", p.id, v)
		}
	}

	// Another bank can neither consume the update stream nor read or
	// overwrite the aggregator's state.
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	defer cancelShort()
	if _, err := OpenUpdateLog(short, other.nc, secJob, UpdateLogOptions{}); err == nil {
		t.Error("bank-b opened the update log")
	}
	if _, err := OpenCheckpointStore(short, other.nc, secJob, CheckpointStoreOptions{}); err == nil {
		t.Error("bank-b opened the aggregator's checkpoint store")
	}
	for _, subj := range []string{"$KV.GF_AGG_J1.state", "$O.GF_MODELS_J1.M.bW9kZWwtMQ=="} {
		if err := other.nc.Publish(subj, []byte("forged")); err != nil {
			t.Fatal(err)
		}
	}
	v := other.violations(t)
	for _, subj := range []string{"$KV.GF_AGG_J1.state", "$O.GF_MODELS_J1.M.bW9kZWwtMQ=="} {
		if !refused(v, "Publish", subj) {
			t.Errorf("bank-b's publish on %s was not refused; violations %v", subj, v)
		}
	}
	if got, err := store.LoadState(ctx); err != nil || string(got) != "state-1" {
		t.Fatalf("state after bank-b's attempts: %q, %v", got, err)
	}
}
