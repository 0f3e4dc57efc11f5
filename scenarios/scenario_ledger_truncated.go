package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
)

// ledgerTruncatedScenario: after a secure job, the ledger administrator
// (the one key that may delete a ledger stream, as the outside test did
// with the server's own credentials) rebuilds the ledger from a subset,
// twice: first one bank's stream with its round-1 entries only, then every
// stream, the aggregator's included, cut at round 1 (a consistent prefix
// of every chain, without the done record). Every stored record still
// verifies: no chain break, nothing rejected. The audit must say the
// ledger is not intact each time, and name what it could not verify.
func ledgerTruncatedScenario() Scenario {
	const name = "ledger-truncated"
	return Scenario{
		Name: name,
		Doc:  "the ledger administrator deletes and rebuilds the ledger from a subset (one bank's tail; every chain's, done record included): the audit flags it",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			lj, err := runLedgerJob(ctx, "ledger-truncated", o)
			if err != nil {
				return fail(name, InvNoProgress, "job: %v", err), nil
			}
			defer lj.job.Close()
			return truncateLedger(ctx, name, lj)
		},
	}
}

// InvTruncationUnseen: the audit called a ledger rebuilt from a subset
// intact.
const InvTruncationUnseen = "truncation-unseen"

func truncateLedger(ctx context.Context, name string, lj *ledgerJob) (Outcome, error) {
	local := lj.job.Local()
	job := local.Job()
	clean, err := lj.audit(ctx)
	if err != nil {
		return fail(name, InvLedgerBlocked, "clean audit: %v", err), nil
	}
	if !clean.Integrity.Completeness.Intact {
		return fail(name, InvNotExercised, "the clean ledger is not intact: %+v", clean.Integrity.Completeness), nil
	}
	admin, err := bus.Connect(local.URL(), bus.ConnectOptions{Name: "ledger-admin", Creds: local.Creds(bus.LedgerAdminID)})
	if err != nil {
		return Outcome{}, err
	}
	defer admin.Close()
	js, err := jetstream.New(admin)
	if err != nil {
		return Outcome{}, err
	}
	victim := deploy.ClientID(1)
	parties := append([]string{bus.AggregatorID}, local.Keyring().Banks()...)
	out := Outcome{Metrics: map[string]float64{"entries_clean": float64(clean.Entries)}}
	for _, attack := range []struct {
		what    string
		parties []string
		want    string // a party the audit's findings must name
	}{
		{"one bank's tail", []string{victim}, victim},
		{"every chain's tail, the done record included", parties, ""},
	} {
		kept, dropped := 0, 0
		for _, p := range attack.parties {
			k, d, err := rebuildFromRound1(ctx, js, job, p)
			if err != nil {
				return Outcome{}, fmt.Errorf("rebuilding %s's stream: %w", p, err)
			}
			kept, dropped = kept+k, dropped+d
		}
		if dropped == 0 {
			return fail(name, InvNotExercised, "%s: nothing after round 1 to drop", attack.what), nil
		}
		rep, err := lj.audit(ctx)
		if err != nil {
			return fail(name, InvLedgerBlocked, "audit after %s: %v", attack.what, err), nil
		}
		// What the audit of issue 28's outside test looked at: every
		// record verifies, no chain breaks.
		if len(rep.Integrity.Breaks) > 0 || len(rep.Integrity.Rejected) > 0 {
			return fail(name, InvNotExercised, "%s: the rebuilt ledger does not verify (%d breaks, %d rejected): not the attack", attack.what,
				len(rep.Integrity.Breaks), len(rep.Integrity.Rejected)), nil
		}
		if rep.Integrity.Completeness.Intact {
			return fail(name, InvTruncationUnseen, "%s: %d entries kept, %d dropped, and the audit calls the ledger intact", attack.what, kept, dropped), nil
		}
		var text strings.Builder
		if err := rep.WriteText(&text); err != nil {
			return Outcome{}, err
		}
		if attack.want != "" && !strings.Contains(text.String(), attack.want) {
			return fail(name, InvTruncationUnseen, "%s: the audit text does not name %s:\n%s", attack.what, attack.want, text.String()), nil
		}
		key := strings.Fields(attack.what)[0]
		out.Metrics["dropped_"+key] = float64(dropped)
		out.Metrics["kept_"+key] = float64(kept)
	}
	return out, nil
}

// rebuildFromRound1 reads party's ledger stream as the administrator,
// deletes it, creates it again with the same configuration and stores back
// the records of round 1 and before (and, for the aggregator, none of its
// done records). It returns how many records it kept and dropped.
func rebuildFromRound1(ctx context.Context, js jetstream.JetStream, job, party string) (kept, dropped int, err error) {
	name := bus.LedgerPartyStreamName(job, party)
	st, err := js.Stream(ctx, name)
	if err != nil {
		return 0, 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, 0, err
	}
	var keep [][]byte
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		var e privacy.Entry
		if json.Unmarshal(m.Data, &e) == nil && e.Round <= 1 && e.Channel != privacy.ChannelDone {
			keep = append(keep, m.Data)
		} else {
			dropped++
		}
	}
	cfg := info.Config
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := js.DeleteStream(dctx, name); err != nil {
		return 0, 0, fmt.Errorf("delete: %w", err)
	}
	if _, err := js.CreateStream(dctx, cfg); err != nil {
		return 0, 0, fmt.Errorf("create again: %w", err)
	}
	for _, data := range keep {
		if _, err := js.Publish(dctx, bus.LedgerSubject(job, party), data); err != nil {
			return 0, 0, fmt.Errorf("store back: %w", err)
		}
	}
	return len(keep), dropped, nil
}
