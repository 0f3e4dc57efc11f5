package scenarios

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
)

// poisonedLedgerScenario: after a secure job, bank client-0 publishes, with
// its own key, on its own ledger subject: garbage, another bank's entry, an
// entry signed with a key that is not its own, and an unsigned one. (Issue
// 14: one garbage publish used to fail every agent start and every audit
// with "corrupt ledger".) The audit must succeed, list the four records
// with their stream sequences and reasons, and keep every bank's ε; every
// agent must restart with its budget as spent, client-0 reporting its
// junk and the others, which read their own streams only, never seeing
// it; and client-0's restarted gate must append past the junk.
func poisonedLedgerScenario() Scenario {
	const name = "poisoned-ledger"
	return Scenario{
		Name: name,
		Doc:  "a bank stores garbage, a misfiled, a forged and an unsigned entry on its ledger subject; audit and restarts succeed and report them",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			lj, err := runLedgerJob(ctx, "ledger-poison", o)
			if err != nil {
				return fail(name, InvNoProgress, "job: %v", err), nil
			}
			defer lj.job.Close()
			return poisonLedger(ctx, name, lj)
		},
	}
}

func poisonLedger(ctx context.Context, name string, lj *ledgerJob) (Outcome, error) {
	job, attacker, victim := lj.job.Local().Job(), deploy.ClientID(0), deploy.ClientID(1)
	rd, err := lj.job.Local().LedgerReading(ctx)
	if err != nil {
		return fail(name, InvLedgerBlocked, "clean read: %v", err), nil
	}
	var head, other privacy.Entry
	for _, e := range rd.Entries {
		switch e.Client {
		case attacker:
			head = e
		case victim:
			other = e
		}
	}
	if head.Seq == 0 || other.Seq == 0 {
		return fail(name, InvNoProgress, "the job left no entries of %s and %s", attacker, victim), nil
	}
	d, err := head.Digest()
	if err != nil {
		return Outcome{}, err
	}
	next := head
	next.Seq, next.Round, next.Sigma = head.Seq+1, head.Round+1, head.Sigma*100
	stranger, err := nkeys.CreateUser()
	if err != nil {
		return Outcome{}, err
	}
	forger, err := bus.NewSigner(attacker, stranger)
	if err != nil {
		return Outcome{}, err
	}
	forged, err := signedEntry(next, hex.EncodeToString(d[:]), forger)
	if err != nil {
		return Outcome{}, err
	}
	unsigned, err := signedEntry(next, hex.EncodeToString(d[:]), nil)
	if err != nil {
		return Outcome{}, err
	}
	misfiled, err := privacy.EncodeEntry(other)
	if err != nil {
		return Outcome{}, err
	}
	attacks := []struct {
		data   []byte
		reason privacy.RejectReason
	}{
		{[]byte("not a ledger entry"), privacy.RejectMalformed},
		{misfiled, privacy.RejectMisfiled},
		{forged, privacy.RejectForged},
		{unsigned, privacy.RejectUnsigned},
	}

	nc, _, err := lj.bankConn(attacker)
	if err != nil {
		return Outcome{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return Outcome{}, err
	}
	want := map[uint64]privacy.RejectReason{}
	for _, a := range attacks {
		ack, err := js.Publish(ctx, bus.LedgerSubject(job, attacker), a.data)
		if err != nil {
			return fail(name, InvNoProgress, "%s could not publish on its own ledger subject: %v", attacker, err), nil
		}
		want[ack.Sequence] = a.reason
	}

	// The audit, as the auditor with the keyring.
	rep, err := lj.audit(ctx)
	if err != nil {
		return fail(name, InvLedgerBlocked, "audit: %v", err), nil
	}
	if bad := checkRejected(rep.Integrity.Rejected, want); bad != "" {
		return fail(name, InvTamperUnseen, "audit: %s", bad), nil
	}
	if len(rep.Integrity.Breaks) > 0 || len(rep.Integrity.Unverified) > 0 {
		return fail(name, InvTamperUnseen, "junk broke a chain: breaks %v, unverified %v", rep.Integrity.Breaks, rep.Integrity.Unverified), nil
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "4 skipped") {
		return fail(name, InvTamperUnseen, "the audit text does not report the skipped records: %v\n%s", err, text.String()), nil
	}
	for i, c := range rep.Clients {
		if j := slices.Index(bankIDs(), c.Client); j < 0 || !sameEps(c.Epsilon, lj.spent[j]) {
			return fail(name, InvBudgetLost, "audit: client %d %s ε %v, its gate spent %v", i, c.Client, c.Epsilon, lj.spent), nil
		}
	}

	// Every agent restarts with its budget; client-0 appends past the junk.
	for i := range ledgerBanks {
		a, err := lj.restartAgent(ctx, i)
		if err != nil {
			return fail(name, InvLedgerBlocked, "restarting %s: %v", deploy.ClientID(i), err), nil
		}
		g := a.Gate()
		spent, reading := g.Spent(1).Client, g.Reading()
		var err2 error
		if i == 0 {
			_, err2 = g.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: ledgerRounds + 1,
				Flat: []float32{1, 2, 3, 4, 5}, Dim: 5, Sigma: 0.01, Clip: 10})
		}
		a.Close()
		switch {
		case !sameEps(spent, lj.spent[i]):
			return fail(name, InvBudgetLost, "%s restarted with ε %v, had spent %v", deploy.ClientID(i), spent, lj.spent[i]), nil
		case i == 0 && checkRejected(reading.Rejected, want) != "":
			return fail(name, InvTamperUnseen, "%s restart: %s", deploy.ClientID(i), checkRejected(reading.Rejected, want)), nil
		case i != 0 && len(reading.Rejected) > 0:
			// Need-to-know: a bank reads its own ledger stream only, so
			// another bank's junk never reaches it.
			return fail(name, InvTamperUnseen, "%s restart read %d records of %s's stream: %v", deploy.ClientID(i), len(reading.Rejected), attacker, reading.Rejected), nil
		case err2 != nil:
			return fail(name, InvLedgerBlocked, "%s could not release after the junk: %v", attacker, err2), nil
		}
	}
	after, err := lj.audit(ctx)
	if err != nil {
		return fail(name, InvLedgerBlocked, "audit after the restarts: %v", err), nil
	}
	if after.Entries != rep.Entries+1 || len(after.Integrity.Breaks) > 0 || len(after.Integrity.Rejected) != len(want) {
		return fail(name, InvTamperUnseen, "after %s's new release: %d entries (had %d), breaks %v, %d rejected",
			attacker, after.Entries, rep.Entries, after.Integrity.Breaks, len(after.Integrity.Rejected)), nil
	}
	return Outcome{Name: name, Metrics: map[string]float64{"records": float64(rep.Integrity.Records),
		"rejected": float64(len(rep.Integrity.Rejected)), "entries": float64(rep.Entries), "restarts": ledgerBanks}}, nil
}

// checkRejected says what differs between the rejections and the wanted
// reasons by stream sequence ("" when they match exactly).
func checkRejected(got []privacy.Rejection, want map[uint64]privacy.RejectReason) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d records rejected, want %d: %v", len(got), len(want), got)
	}
	for _, r := range got {
		if w, ok := want[r.Pos]; !ok || w != r.Reason {
			return fmt.Sprintf("stream seq %d rejected as %s, want %q (all: %v)", r.Pos, r.Reason, w, got)
		}
	}
	return ""
}

func bankIDs() []string {
	ids := make([]string, ledgerBanks)
	for i := range ids {
		ids[i] = deploy.ClientID(i)
	}
	return ids
}

func sameEps(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
