package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
)

// The ledger-flood scenario (issue 29, item 3): the outside test sent
// 30,000 messages of 10 bytes on a bank's own ledger subject, and every
// honest agent's first ledger append timed out behind them in the job's
// one stream. In the accounts layout each party appends to its own
// stream, and that stream has limits (bus.LedgerPartyLimits) with
// discard-new: the flood lands in the flooder's stream until its limit,
// the rest is refused by the server, and the honest banks' appends, in
// streams of their own, neither wait for it nor fail. The flood is sent
// while the honest banks train and append the next round, not between
// rounds, so that the two compete for the server.
const ledgerFloodMessages = 30000

func ledgerFloodScenario() Scenario {
	const name = "ledger-flood"
	return Scenario{
		Name: name,
		Doc:  "a bank sends 30,000 small messages on its own ledger subject while the others append; they land in its own stream up to its limit, the honest appends never fail, the audit charges the junk to the flooder, the honest job is bit-identical",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			clean, err := runLedgerFloodJob(ctx, "lflood-clean", o, false)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: clean run: %w", name, err)
			}
			flooded, err := runLedgerFloodJob(ctx, "lflood", o, true)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: flooded run: %w", name, err)
			}
			return judgeLedgerFlood(name, clean, flooded), nil
		},
	}
}

// ledgerFloodRun is what one run left.
type ledgerFloodRun struct {
	agg      aggregator.Result
	audit    privacy.Reading
	flood    ledgerFlood
	floodFor time.Duration
	limit    bus.LedgerLimits
}

func runLedgerFloodJob(ctx context.Context, job string, o ScenarioOptions, attack bool) (ledgerFloodRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	honest, flooder := floodBankIDs()
	learners, err := logisticLearners(floodBanks, 4, 64, o.Seed)
	if err != nil {
		return ledgerFloodRun{}, err
	}
	local, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: job, Banks: append(slices.Clone(honest), flooder),
		Secure: true, Size: bus.JobSize{Params: learners[0].NumParams()}})
	if err != nil {
		return ledgerFloodRun{}, err
	}
	defer local.Close()
	run := ledgerFloodRun{limit: bus.LedgerPartyLimits(flooder, floodBanks+1)}
	flood := make(chan error, 1)
	onRound := func(rc aggregator.RoundClosed) {
		if attack && rc.Round == floodAfter {
			go func() {
				start := time.Now()
				var err error
				run.flood, err = floodLedger(ctx, local, job, flooder)
				run.floodFor = time.Since(start)
				flood <- err
			}()
		}
	}
	agg, agents, closeAll, err := startFedAvg(ctx, local, job, o, fedavgParties{ids: honest, learners: learners,
		rounds: floodRounds, localEpochs: 2, slowdown: 20 * time.Millisecond, onRound: onRound})
	if err != nil {
		return ledgerFloodRun{}, err
	}
	defer closeAll()
	var errs []error
	run.agg, errs, err = runAgentsBeside(ctx, cancel, agg, agents, honest)
	for _, e := range append([]error{err}, errs...) {
		if e != nil {
			return run, e
		}
	}
	if attack {
		if err := <-flood; err != nil {
			return run, err
		}
	}
	if run.audit, err = local.LedgerReading(ctx); err != nil {
		return run, err
	}
	return run, nil
}

// floodLedger is the attack, in two parts. First ledgerFloodMessages
// messages of 10 bytes on the flooder's own ledger subject with its own
// key, without waiting for acknowledgements (`nats --nkey bank.nk pub
// gf.J.ledger.bank` in a loop): the outside test's flood. The server may
// drop some of these before the stream sees them (its ingest queue is
// bounded), so then the flooder fills its stream for certain, with
// acknowledged publishes, until the stream refuses one, and reports that
// refusal.
func floodLedger(ctx context.Context, local *deploy.Local, job, flooder string) (ledgerFlood, error) {
	var f ledgerFlood
	c := local.Conn(flooder)
	nc, err := bus.Connect(c.URL, bus.ConnectOptions{Name: "flooder", Creds: c.Creds})
	if err != nil {
		return f, err
	}
	defer nc.Close()
	subject := bus.LedgerSubject(job, flooder)
	junk := []byte("0123456789")
	for range ledgerFloodMessages {
		if err := nc.Publish(subject, junk); err != nil {
			return f, fmt.Errorf("ledger flood: %w", err)
		}
		f.sent++
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return f, fmt.Errorf("ledger flood: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return f, fmt.Errorf("ledger fill: %w", err)
	}
	// A stream that took more than its limit did not hold it.
	fill, err := fillUntilRefused(ctx, js, subject, junk, int(bus.LedgerPartyLimits(flooder, 1).Msgs)+1)
	f.acked, f.timeouts, f.refused = fill.stored, fill.timeouts, fill.refused
	if err != nil {
		return f, fmt.Errorf("ledger fill: %w", err)
	}
	return f, nil
}

// ledgerFlood is what the flooder saw.
type ledgerFlood struct {
	sent     int   // unacknowledged flood messages published
	acked    int   // then acknowledged ones stored
	timeouts int   // acknowledged publishes that timed out and were repeated
	refused  error // the stream's refusal of the next one
}

// rejectedOf counts the audit's rejected records by the party whose stream
// or subject they were found on.
func rejectedOf(rd privacy.Reading) map[string]int {
	n := map[string]int{}
	for _, r := range rd.Rejected {
		n[r.Client]++
	}
	return n
}

func judgeLedgerFlood(name string, clean, flooded ledgerFloodRun) Outcome {
	honest, flooder := floodBankIDs()
	if out, ok := checkHonestCloses(name, honest, namedResult{"clean", clean.agg}, namedResult{"flooded", flooded.agg}); !ok {
		return out
	}
	if !bitEqual(clean.agg.Model, flooded.agg.Model) {
		return fail(name, InvResultChanged, "the flooded run's final model differs from the clean run's")
	}
	fl := flooded.flood
	switch {
	case fl.sent != ledgerFloodMessages:
		return fail(name, InvNotExercised, "the flooder sent %d of %d messages", fl.sent, ledgerFloodMessages)
	case fl.refused == nil:
		return fail(name, InvFloodUncounted, "the flooder's stream took %d acknowledged records after the flood and refused none", fl.acked)
	}
	if len(clean.audit.Rejected) != 0 {
		return fail(name, InvTamperUnseen, "the clean run's audit rejected %d records", len(clean.audit.Rejected))
	}
	// Every honest bank's verified entries are those of the clean run, with
	// the same noise: nothing was lost, delayed past its round or repeated.
	byClient := func(rd privacy.Reading) map[string]int {
		n := map[string]int{}
		for _, e := range rd.Entries {
			n[e.Client]++
		}
		return n
	}
	ce, fe := byClient(clean.audit), byClient(flooded.audit)
	for _, id := range honest {
		if ce[id] == 0 || ce[id] != fe[id] {
			return fail(name, InvUpdateLost, "%s has %d verified ledger entries in the flooded run, %d in the clean one", id, fe[id], ce[id])
		}
	}
	rej := rejectedOf(flooded.audit)
	stored := rej[flooder]
	switch {
	case int64(stored) != flooded.limit.Msgs:
		return fail(name, InvFloodUncounted, "%d flood records in %s's stream, want its limit %d (then refused: %v)", stored, flooder, flooded.limit.Msgs, fl.refused)
	case stored != len(flooded.audit.Rejected):
		return fail(name, InvFloodUncounted, "%d rejected records, %d of them charged to %s: %v", len(flooded.audit.Rejected), stored, flooder, rej)
	}
	return Outcome{Metrics: map[string]float64{
		"flood_messages":    float64(fl.sent),
		"flood_acked":       float64(fl.acked),
		"flood_stored":      float64(stored),
		"stream_limit_msgs": float64(flooded.limit.Msgs),
		"flood_seconds":     flooded.floodFor.Seconds(),
		"honest_entries":    float64(len(flooded.audit.Entries)),
		"rounds":            float64(len(flooded.agg.Closes)),
		"audit_records":     float64(flooded.audit.Records),
	}}
}
