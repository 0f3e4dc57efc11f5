package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"graphfed/bus"
	"graphfed/deploy"
)

// The ledger-junk scenario (issue 29, item 3): the outside test stored
// 20,000 tiny and 25 records of 16 MB of junk in the ledger, and the audit
// then took 13 s and 640 MB, a victim agent's start 694 MB, for good (the
// ledger cannot be purged). Now the junk a bank can store is its own
// stream's limits (bus.LedgerPartyLimits, discard-new), a reader streams
// the records and keeps the verified entries and one line per junk record
// (privacy.RecordWalker), and a bank reads its own stream only. After a
// secure job, bank client-0 stores 16 MiB records until its stream refuses
// one, then tiny ones until it refuses again. The audit must succeed with
// every entry and ε of the clean audit and charge every junk record to
// client-0; the other banks restart without reading any of it.
const ledgerJunkBig = 16 << 20

func ledgerJunkScenario() Scenario {
	const name = "ledger-junk"
	return Scenario{
		Name: name,
		Doc:  "a bank stores 16 MiB and tiny junk records on its own ledger subject until its stream refuses each; the audit keeps every entry and ε and charges the junk to it, the other banks' restarts never read it",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			lj, err := runLedgerJob(ctx, "ledger-junk", o)
			if err != nil {
				return fail(name, InvNoProgress, "job: %v", err), nil
			}
			defer lj.job.Close()
			return junkLedger(ctx, name, lj)
		},
	}
}

// junkFill is one kind of junk stored until the stream refused it.
type junkFill struct {
	stored   int
	bytes    int64
	timeouts int   // publishes that timed out and were repeated
	refused  error // the stream's refusal of the next one
}

// fillUntilRefused publishes data on subject, acknowledged, until the
// stream refuses one (a JetStream API error) or most were stored. The
// stream may still be storing an earlier flood (a loaded CI machine took
// more than 10 s to answer): a publish that times out is repeated, as a
// patient attacker would, until the stream answers or ctx ends.
func fillUntilRefused(ctx context.Context, js jetstream.JetStream, subject string, data []byte, most int) (junkFill, error) {
	var f junkFill
	for f.refused == nil && f.stored < most {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := js.Publish(actx, subject, data)
		cancel()
		var jerr jetstream.JetStreamError
		switch {
		case err == nil:
			f.stored++
			f.bytes += int64(len(data))
		case errors.As(err, &jerr) && jerr.APIError() != nil:
			f.refused = err
		case ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)):
			f.timeouts++
		default:
			return f, fmt.Errorf("records of %d bytes: after %d stored and %d timeouts: %w", len(data), f.stored, f.timeouts, err)
		}
	}
	return f, nil
}

// junkOf is size bytes of junk.
func junkOf(size int) []byte {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	return data
}

func junkLedger(ctx context.Context, name string, lj *ledgerJob) (Outcome, error) {
	job, attacker := lj.job.Local().Job(), deploy.ClientID(0)
	clean, err := lj.audit(ctx)
	if err != nil {
		return fail(name, InvLedgerBlocked, "clean audit: %v", err), nil
	}
	limit := bus.LedgerPartyLimits(attacker, ledgerBanks)

	nc, _, err := lj.bankConn(attacker)
	if err != nil {
		return Outcome{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return Outcome{}, err
	}
	subject := bus.LedgerSubject(job, attacker)
	big, err := fillUntilRefused(ctx, js, subject, junkOf(ledgerJunkBig), int(limit.Bytes/ledgerJunkBig)+1)
	if err != nil {
		return fail(name, InvNoProgress, "%v", err), nil
	}
	tiny, err := fillUntilRefused(ctx, js, subject, junkOf(10), int(limit.Msgs)+1)
	if err != nil {
		return fail(name, InvNoProgress, "%v", err), nil
	}
	switch {
	case big.refused == nil || big.stored == 0:
		return fail(name, InvFloodUncounted, "%d records of 16 MiB stored, and no refusal", big.stored), nil
	case tiny.refused == nil:
		return fail(name, InvFloodUncounted, "%d tiny records stored, and no refusal", tiny.stored), nil
	case big.bytes > limit.Bytes:
		return fail(name, InvFloodUncounted, "%d bytes of junk stored, above the stream's %d", big.bytes, limit.Bytes), nil
	}
	junk := big.stored + tiny.stored

	start := time.Now()
	rep, err := lj.audit(ctx)
	took := time.Since(start)
	if err != nil {
		return fail(name, InvLedgerBlocked, "audit: %v", err), nil
	}
	rej := rep.Integrity.Rejected
	charged := 0
	for _, r := range rej {
		if r.Client == attacker {
			charged++
		}
	}
	switch {
	case len(rej) != junk || charged != junk:
		return fail(name, InvTamperUnseen, "%d junk records stored, the audit rejected %d, %d charged to %s", junk, len(rej), charged, attacker), nil
	case rep.Entries != clean.Entries || len(rep.Integrity.Breaks) > 0:
		return fail(name, InvTamperUnseen, "after the junk: %d entries (had %d), breaks %v", rep.Entries, clean.Entries, rep.Integrity.Breaks), nil
	}
	for i, c := range rep.Clients {
		if j := slices.Index(bankIDs(), c.Client); j < 0 || !sameEps(c.Epsilon, lj.spent[j]) {
			return fail(name, InvBudgetLost, "audit: client %d %s ε %v, its gate spent %v", i, c.Client, c.Epsilon, lj.spent), nil
		}
	}
	// The other banks restart from their own streams: none of the junk
	// reaches them. (The attacker's own stream is full: its next release
	// would be refused, which is the flooder's loss alone.)
	for i := 1; i < ledgerBanks; i++ {
		a, err := lj.restartAgent(ctx, i)
		if err != nil {
			return fail(name, InvLedgerBlocked, "restarting %s: %v", deploy.ClientID(i), err), nil
		}
		spent, reading := a.Gate().Spent(1).Client, a.Gate().Reading()
		a.Close()
		switch {
		case !sameEps(spent, lj.spent[i]):
			return fail(name, InvBudgetLost, "%s restarted with ε %v, had spent %v", deploy.ClientID(i), spent, lj.spent[i]), nil
		case len(reading.Rejected) > 0:
			return fail(name, InvTamperUnseen, "%s restart read %d records, %d of them junk", deploy.ClientID(i), reading.Records, len(reading.Rejected)), nil
		}
	}
	return Outcome{Name: name, Metrics: map[string]float64{
		"junk_big_records":   float64(big.stored),
		"junk_tiny_records":  float64(tiny.stored),
		"junk_bytes":         float64(big.bytes + tiny.bytes),
		"stream_limit_msgs":  float64(limit.Msgs),
		"stream_limit_bytes": float64(limit.Bytes),
		"audit_seconds":      took.Seconds(),
		"audit_records":      float64(rep.Integrity.Records),
		"entries":            float64(rep.Entries),
	}}, nil
}
