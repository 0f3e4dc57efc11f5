package scenarios

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/bus"
	"graphfed/deploy"
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
		Doc:  "a bank adds a push consumer on its ledger stream targeting gf.<job>.round, through the ledger prefix and its own account: refused, nothing delivered",
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
	job, attacker, listener := local.Job(), deploy.ClientID(0), deploy.ClientID(1)
	// The attacker's own ledger stream, the one it may read: in the
	// accounts layout it is in the ledger account, and the attacker holds
	// its info and message gets only.
	stream, round := bus.LedgerPartyStreamName(job, attacker), bus.Subject(job, bus.KindRound)
	nc, _, err := lj.bankConn(attacker)
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
	type attempt struct {
		subject string
		body    []byte
	}
	var attempts []attempt
	// Through the ledger's prefix (the verbs are not exported) and through
	// the attacker's own account's API (no such stream there).
	for _, api := range []string{bus.LedgerAPIPrefix + ".", "$JS.API."} {
		attempts = append(attempts,
			attempt{api + "CONSUMER.CREATE." + stream, body("", "")},                        // what natscli sends for an ephemeral
			attempt{api + "CONSUMER.CREATE." + stream + ".spy", body("", "")},               // named
			attempt{api + "CONSUMER.CREATE." + stream + ".spy." + filter, body("", filter)}, // named and filtered
			attempt{api + "CONSUMER.DURABLE.CREATE." + stream + ".spy", body("spy", "")},    // legacy durable
			attempt{api + "CONSUMER.CREATE." + stream + ".spy2", body("spy2", "")},          // durable, new style
		)
	}
	for _, a := range attempts {
		if jsRequestOK(ctx, nc, a.subject, string(a.body)) {
			return fail(name, InvNotRejected, "%s created a consumer by %s", attacker, a.subject), nil
		}
	}
	// The library's way too, through the ledger's prefix.
	js, err := jetstream.NewWithAPIPrefix(nc, bus.LedgerAPIPrefix)
	if err != nil {
		return Outcome{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = js.CreateOrUpdateConsumer(cctx, stream, jetstream.ConsumerConfig{Durable: "spy3"})
	cancel()
	if err == nil {
		return fail(name, InvNotRejected, "%s created a consumer through the client library", attacker), nil
	}
	// The stream has no consumer, as the ledger administrator sees it.
	admin, err := bus.Connect(local.URL(), bus.ConnectOptions{Name: "check", Creds: local.Creds(bus.LedgerAdminID)})
	if err != nil {
		return Outcome{}, err
	}
	defer admin.Close()
	ajs, err := jetstream.New(admin)
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
	// The attacker still reads its own ledger, by gets.
	l, err := bus.OpenJetStreamLedger(ctx, nc, job, bus.JSLedgerOptions{ReadOnly: true, Parties: []string{attacker}})
	if err != nil {
		return fail(name, InvLedgerBlocked, "%s binding to its ledger: %v", attacker, err), nil
	}
	es, err := l.Entries(ctx)
	if err != nil || len(es) == 0 {
		return fail(name, InvLedgerBlocked, "%s reading its ledger: %d entries, %v", attacker, len(es), err), nil
	}
	return Outcome{Name: name, Metrics: map[string]float64{"attempts": float64(len(attempts) + 1), "refused": float64(len(attempts) + 1),
		"entries_readable": float64(len(es))}}, nil
}
