package scenarios

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/bus"
)

// pushConsumerScenario: after a secure job, bank client-0 tries to add a
// push consumer on the ledger stream whose deliver subject is
// gf.<job>.round, by every subject nats-server creates consumers on
// (issue 14: `nats consumer add GF_LEDGER_AML_1 --target gf.aml-1.round`
// made the server pour the whole ledger onto every agent). Each request
// must be refused by the server (a permissions violation), the stream must
// have no consumer, client-1 listening on the round subject must receive
// nothing, and client-0 must still read the ledger, by message gets.
func pushConsumerScenario() Scenario {
	const name = "push-consumer"
	return Scenario{
		Name: name,
		Doc:  "a bank adds a push consumer on the ledger stream targeting gf.<job>.round; the server refuses it and nothing is delivered",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			lj, err := runLedgerJob(ctx, "ledger-push", o)
			if err != nil {
				return fail(name, InvNoProgress, "job: %v", err), nil
			}
			defer lj.job.Close()
			return pushConsumer(ctx, name, lj)
		},
	}
}

func pushConsumer(ctx context.Context, name string, lj *ledgerJob) (Outcome, error) {
	local := lj.job.Local()
	job, attacker, listener := local.Job(), ClientID(0), ClientID(1)
	stream, round := bus.LedgerStreamName(job), bus.Subject(job, bus.KindRound)
	nc, v, err := lj.bankConn(attacker)
	if err != nil {
		return Outcome{}, err
	}
	defer nc.Close()
	lc, _, err := lj.bankConn(listener)
	if err != nil {
		return Outcome{}, err
	}
	defer lc.Close()
	sub, err := lc.SubscribeSync(round)
	if err != nil {
		return Outcome{}, err
	}
	if err := lc.Flush(); err != nil {
		return Outcome{}, err
	}
	filter := bus.LedgerSubject(job, attacker)
	body := func(durable, filter string) []byte {
		cfg := map[string]any{"deliver_subject": round, "deliver_policy": "all", "ack_policy": "none"}
		if durable != "" {
			cfg["durable_name"] = durable
		}
		if filter != "" {
			cfg["filter_subject"] = filter
		}
		b, _ := json.Marshal(map[string]any{"stream_name": stream, "config": cfg})
		return b
	}
	const api = "$JS.API."
	attempts := []struct {
		subject string
		body    []byte
	}{
		{api + "CONSUMER.CREATE." + stream, body("", "")},                        // what natscli sends for an ephemeral
		{api + "CONSUMER.CREATE." + stream + ".spy", body("", "")},               // named
		{api + "CONSUMER.CREATE." + stream + ".spy." + filter, body("", filter)}, // named and filtered
		{api + "CONSUMER.DURABLE.CREATE." + stream + ".spy", body("spy", "")},    // legacy durable
		{api + "CONSUMER.CREATE." + stream + ".spy2", body("spy2", "")},          // durable, new style
	}
	for _, a := range attempts {
		if m, err := nc.Request(a.subject, a.body, 500*time.Millisecond); err == nil {
			return fail(name, InvNotRejected, "%s answered %s: %s", a.subject, attacker, m.Data), nil
		}
	}
	// The library's way too.
	js, err := jetstream.New(nc)
	if err != nil {
		return Outcome{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = js.CreateOrUpdateConsumer(cctx, stream, jetstream.ConsumerConfig{Durable: "spy3"})
	cancel()
	if err == nil {
		return fail(name, InvNotRejected, "%s created a consumer through the client library", attacker), nil
	}
	// Every attempt is a permissions violation, reported by the server.
	deadline := time.Now().Add(5 * time.Second)
	for refusedAll(v.list(), attempts) != "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if miss := refusedAll(v.list(), attempts); miss != "" {
		return fail(name, InvNotRejected, "no permissions violation for %s (errors: %v)", miss, v.list()), nil
	}
	// The stream has no consumer, as the aggregator sees it.
	agg, err := bus.Connect(local.URL(), bus.ConnectOptions{Name: "check", Creds: local.Creds(bus.AggregatorID)})
	if err != nil {
		return Outcome{}, err
	}
	defer agg.Close()
	ajs, err := jetstream.New(agg)
	if err != nil {
		return Outcome{}, err
	}
	st, err := ajs.Stream(ctx, stream)
	if err != nil {
		return Outcome{}, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return Outcome{}, err
	}
	if info.State.Consumers != 0 {
		return fail(name, InvNotRejected, "the ledger stream has %d consumers", info.State.Consumers), nil
	}
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		return fail(name, InvNotRejected, "%s received ledger data on %s: %.80q", listener, round, m.Data), nil
	}
	// The attacker still reads the ledger, by gets.
	l, err := bus.OpenJetStreamLedger(ctx, nc, job, bus.JSLedgerOptions{ReadOnly: true})
	if err != nil {
		return fail(name, InvLedgerBlocked, "%s binding to the ledger: %v", attacker, err), nil
	}
	es, err := l.Entries(ctx)
	if err != nil || len(es) == 0 {
		return fail(name, InvLedgerBlocked, "%s reading the ledger: %d entries, %v", attacker, len(es), err), nil
	}
	return Outcome{Name: name, Metrics: map[string]float64{"attempts": float64(len(attempts) + 1), "refused": float64(len(attempts) + 1),
		"entries_readable": float64(len(es))}}, nil
}

// refusedAll names the first attempt without a permissions violation in
// errs ("" when all have one).
func refusedAll(errs []string, attempts []struct {
	subject string
	body    []byte
}) string {
	for _, a := range attempts {
		found := false
		for _, e := range errs {
			if strings.Contains(e, "Permissions Violation for Publish to \""+a.subject+"\"") {
				found = true
			}
		}
		if !found {
			return a.subject
		}
	}
	return ""
}
