package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// The per-party limit scenarios (issue 29, items 5 and 7): on the
// configuration `graphfed keys` writes, the fourth bank of a small FedAvg
// job, with its own key, floods what its account is allowed (connections,
// subscriptions, its own blob bucket) while the round loop is held after
// round floodAfter. Its account's limits stop it at its own allowance: the
// server refuses the excess and counts it as a limit event, and the honest
// banks' job is bit-identical to the clean run.

// InvLimitUnseen: a party went past its account's limit, or the server
// did not count the refusal.
const InvLimitUnseen = "limit-unseen"

// limitAttack floods from flooder's key on local and says what it did and
// whether the limit held.
type limitAttack func(ctx context.Context, local *deploy.Local, job, flooder string) (limitOutcome, error)

type limitOutcome struct {
	tried, got int    // what the flooder asked for and what it obtained
	allowed    int    // its account's limit
	event      string // the limit event's reason the server must count
}

func limitScenarios() []Scenario {
	mk := func(name, doc string, attack limitAttack) Scenario {
		return Scenario{Name: name, Doc: doc, Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			clean, _, _, err := runLimitJob(ctx, name+"-clean", o, nil)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: clean run: %w", name, err)
			}
			run, lo, counted, err := runLimitJob(ctx, name, o, attack)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: attacked run: %w", name, err)
			}
			return judgeLimit(name, clean, run, lo, counted), nil
		}}
	}
	return []Scenario{
		mk("connection-flood", "a bank opens 1,000 connections with its key: its account's 8 hold, the rest are refused and counted, the honest job bit-identical",
			connectionFlood),
		mk("subscription-flood", "a bank makes 100,000 subscriptions on model.all: its account's limit holds, the excess is refused and counted, the honest job bit-identical",
			subscriptionFlood),
		mk("bucket-fill", "a bank writes 244 MiB into its own blob bucket: the bucket's max_bytes holds, the excess is refused, the honest job bit-identical",
			bucketFill),
	}
}

func runLimitJob(ctx context.Context, job string, o ScenarioOptions, attack limitAttack) (aggregator.Result, limitOutcome, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	honest, flooder := floodBankIDs()
	learners, err := logisticLearners(floodBanks, 4, 64, o.Seed)
	if err != nil {
		return aggregator.Result{}, limitOutcome{}, 0, err
	}
	local, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: job, Banks: append(slices.Clone(honest), flooder),
		Secure: true, Size: bus.JobSize{Params: learners[0].NumParams()}})
	if err != nil {
		return aggregator.Result{}, limitOutcome{}, 0, err
	}
	defer local.Close()
	var lo limitOutcome
	var counted int64
	var attackErr error
	onRound := func(rc aggregator.RoundClosed) {
		if attack != nil && rc.Round == floodAfter {
			if lo, attackErr = attack(ctx, local, job, flooder); attackErr == nil {
				counted = awaitLimitEvent(ctx, local.Server(), lo.event)
			}
		}
	}
	agg, agents, closeAll, err := startFedAvg(ctx, local, job, o, fedavgParties{ids: honest, learners: learners,
		rounds: floodRounds, localEpochs: 2, slowdown: 20 * time.Millisecond, onRound: onRound})
	if err != nil {
		return aggregator.Result{}, limitOutcome{}, 0, err
	}
	defer closeAll()
	res, errs, err := runAgentsBeside(ctx, cancel, agg, agents, honest)
	if err := errors.Join(append([]error{err, attackErr}, errs...)...); err != nil {
		return res, lo, counted, err
	}
	return res, lo, counted, nil
}

// awaitLimitEvent waits (a few seconds at most: the server logs some
// limits asynchronously) until the server has counted a limit event of
// reason, and returns the count.
func awaitLimitEvent(ctx context.Context, srv *bus.Server, reason string) int64 {
	key := bus.ServerEventKey{Kind: bus.ServerEventLimit, Reason: reason}
	deadline := time.Now().Add(5 * time.Second)
	for srv.Events()[key] == 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	return srv.Events()[key]
}

func connectionFlood(ctx context.Context, local *deploy.Local, job, flooder string) (limitOutcome, error) {
	const tries = 1000
	c := local.Conn(flooder)
	lo := limitOutcome{tried: tries, allowed: 8, event: "max_account_connections"}
	nkey, err := nats.NkeyOptionFromSeed(c.Creds)
	if err != nil {
		return limitOutcome{}, err
	}
	var conns []*nats.Conn
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for i := range tries {
		nc, err := nats.Connect(c.URL, nats.Name("flood-"+strconv.Itoa(i)), nats.NoReconnect(), nkey)
		if err == nil {
			conns = append(conns, nc)
		}
	}
	for _, nc := range conns {
		if nc.FlushTimeout(2*time.Second) == nil {
			lo.got++
		}
	}
	return lo, nil
}

func subscriptionFlood(ctx context.Context, local *deploy.Local, job, flooder string) (limitOutcome, error) {
	const tries = 100000
	c := local.Conn(flooder)
	nc, err := bus.Connect(c.URL, bus.ConnectOptions{Name: "sub-flood", Creds: c.Creds})
	if err != nil {
		return limitOutcome{}, err
	}
	defer nc.Close()
	acct := bus.BankAccount(flooder)
	before := accountSubscriptions(local, acct)
	subject := bus.Subject(job, bus.KindModel, "all")
	for range tries {
		if _, err := nc.Subscribe(subject, func(*nats.Msg) {}); err != nil {
			return limitOutcome{}, err
		}
	}
	nc.FlushTimeout(5 * time.Second) // the server may cut a client past its limit: not an error here
	return limitOutcome{tried: tries, got: accountSubscriptions(local, acct) - before, allowed: 1024, event: "max_subscriptions"}, nil
}

// accountSubscriptions is the number of subscriptions the server holds in
// account acct.
func accountSubscriptions(local *deploy.Local, acct string) int {
	a, err := local.Server().NATS().LookupAccount(acct)
	if err != nil {
		return -1
	}
	return int(a.TotalSubs())
}

func bucketFill(ctx context.Context, local *deploy.Local, job, flooder string) (limitOutcome, error) {
	const total, chunk = 244 << 20, 4 << 20
	c := local.Conn(flooder)
	nc, err := bus.Connect(c.URL, bus.ConnectOptions{Name: "bucket-fill", Creds: c.Creds})
	if err != nil {
		return limitOutcome{}, err
	}
	defer nc.Close()
	store, err := bus.NewJetStreamBlobs(nc, job, flooder, bus.BlobStoreOptions{Create: true, Accounts: true, KeepRounds: 1 << 20})
	if err != nil {
		return limitOutcome{}, err
	}
	body := make([]byte, chunk)
	lo := limitOutcome{tried: total, allowed: int(bus.BlobBucketBytes(int(nc.MaxPayload()))), event: ""}
	for i := range total / chunk {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := store.Put(pctx, 1, "fill-"+strconv.Itoa(i), body)
		cancel()
		if err != nil {
			break
		}
		lo.got += chunk
	}
	return lo, nil
}

func judgeLimit(name string, clean, run aggregator.Result, lo limitOutcome, counted int64) Outcome {
	honest, _ := floodBankIDs()
	if out, ok := checkHonestCloses(name, honest, namedResult{"clean", clean}, namedResult{"attacked", run}); !ok {
		return out
	}
	if !bitEqual(clean.Model, run.Model) {
		return fail(name, InvResultChanged, "the attacked run's final model differs from the clean run's")
	}
	switch {
	case lo.tried == 0:
		return fail(name, InvNotExercised, "the attack did not run")
	case lo.got > lo.allowed:
		return fail(name, InvLimitUnseen, "the flooder obtained %d of %d, past its account's %d", lo.got, lo.tried, lo.allowed)
	case lo.got >= lo.tried:
		return fail(name, InvNotExercised, "the flooder obtained all %d it asked for: the limit was not reached", lo.tried)
	case lo.event != "" && counted == 0:
		return fail(name, InvLimitUnseen, "the server counted no %s limit event", lo.event)
	}
	return Outcome{Metrics: map[string]float64{"tried": float64(lo.tried), "obtained": float64(lo.got),
		"allowed": float64(lo.allowed), "limit_events": float64(counted), "rounds": float64(len(run.Closes))}}
}
