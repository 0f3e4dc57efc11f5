package bus

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// No party can create a consumer on the ledger stream, push or pull, by
// any of the subjects nats-server takes consumer creation on: a push
// consumer's deliver subject (in the request body, which permissions do
// not see) could be gf.<job>.round, and the server would pour the ledger
// onto every agent. Proven against a server running the configuration
// `graphfed keys` writes; the ledger is read by message gets meanwhile.
func TestPermissionsNoLedgerConsumers(t *testing.T) {
	e := startSecureServer(t)
	agg, bankA, bankB, aud := e.connect(t, AggregatorID), e.connect(t, "bank-a"), e.connect(t, "bank-b"), e.connect(t, AuditorID)
	ctx := context.Background()
	stream := LedgerStreamName(secJob)
	ledger, err := OpenJetStreamLedger(ctx, agg.nc, secJob, JSLedgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bl, err := OpenJetStreamLedger(ctx, bankA.nc, secJob, JSLedgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bl.Append(ctx, modelEntry(secJob, "bank-a", 1)); err != nil {
		t.Fatal(err)
	}
	// bank-b listens where the attack would deliver.
	round := Subject(secJob, KindRound)
	sub, err := bankB.nc.SubscribeSync(round)
	if err != nil {
		t.Fatal(err)
	}
	push := func(name string, durable bool, filter string) []byte {
		cfg := map[string]any{"deliver_subject": round, "deliver_policy": "all", "ack_policy": "none"}
		if name != "" && durable {
			cfg["durable_name"] = name
		}
		if filter != "" {
			cfg["filter_subject"] = filter
		}
		b, _ := json.Marshal(map[string]any{"stream_name": stream, "config": cfg})
		return b
	}
	filter := LedgerSubject(secJob, "bank-a")
	api := "$JS.API."
	for _, p := range []*party{bankA, aud, agg} {
		for _, tc := range []struct{ subject string }{
			{api + "CONSUMER.CREATE." + stream},                    // legacy ephemeral, name in the body
			{api + "CONSUMER.CREATE." + stream + ".spy"},           // named
			{api + "CONSUMER.CREATE." + stream + ".spy." + filter}, // named, filtered
			{api + "CONSUMER.DURABLE.CREATE." + stream + ".spy"},   // legacy durable
		} {
			body := push("", false, "")
			switch {
			case tc.subject == api+"CONSUMER.DURABLE.CREATE."+stream+".spy":
				body = push("spy", true, "")
			case tc.subject == api+"CONSUMER.CREATE."+stream+".spy."+filter:
				body = push("", false, filter)
			}
			if _, err := p.nc.Request(tc.subject, body, 300*time.Millisecond); err == nil {
				t.Errorf("%s: %s answered", p.id, tc.subject)
			}
			if v := p.violations(t); !refused(v, "Publish", tc.subject) {
				t.Errorf("%s: %s not refused: violations %v", p.id, tc.subject, v)
			}
		}
		// A pull (ordered) consumer through the client library: refused too.
		js, err := jetstream.New(p.nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatalf("%s binding: %v", p.id, err)
		}
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = st.CreateOrUpdateConsumer(cctx, jetstream.ConsumerConfig{Name: "pull"})
		cancel()
		if err == nil {
			t.Errorf("%s created a pull consumer", p.id)
		}
		p.violations(t)
		// Reading by gets still works.
		r, err := OpenJetStreamLedger(ctx, p.nc, secJob, JSLedgerOptions{ReadOnly: true})
		if err != nil {
			t.Fatalf("%s binding read-only: %v", p.id, err)
		}
		if es, err := r.Entries(ctx); err != nil || len(es) != 1 {
			t.Fatalf("%s reading the ledger by gets: %d entries, %v (violations %v)", p.id, len(es), err, p.violations(t))
		}
		if v := p.violations(t); len(v) > 0 {
			t.Fatalf("%s reading the ledger: violations %v", p.id, v)
		}
	}
	info, err := ledger.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Consumers != 0 {
		t.Errorf("the ledger stream has %d consumers", info.State.Consumers)
	}
	if m, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Errorf("ledger delivered onto %s: %q", round, m.Data)
	}
}
