package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"graphfed/privacy"
)

// A job whose aggregator keeps its records in the banks' ledger: the
// start record, one record per round naming every bank's head, the done
// record with the final heads (after the banks' final calibrations), the
// banks' entries anchored to the records, and an audit that finds the
// ledger whole and reaches the heads the aggregator's result lists. A
// ledger that then loses one bank's last entries shows it.
func TestJobRecordsLedgerHeads(t *testing.T) {
	clients := []*meanLearner{{target: []float32{1, 0}, n: 1}, {target: []float32{4, 3}, n: 2}, {target: []float32{0, 9}, n: 3}}
	ledger := privacy.NewMemLedger()
	const rounds = 4
	r := runJobWith(t, "fedavg", rounds, clients, nil, 5*time.Second, jobOpts{ledger: ledger, records: true})
	for i, e := range r.errs {
		if e != nil {
			t.Fatalf("agent %d: %v", i, e)
		}
	}
	ctx := context.Background()
	rd, err := privacy.ReadLedger(ctx, ledger, privacy.VerifyOptions{Job: "job"})
	if err != nil {
		t.Fatal(err)
	}
	recs := privacy.AggregatorRecords(rd, "job")
	if len(recs) != rounds+2 || recs[0].Round != 0 || recs[len(recs)-1].Channel != privacy.ChannelDone {
		t.Fatalf("%d records of the aggregator, want start, %d rounds, done: %+v", len(recs), rounds, recs)
	}
	for _, e := range rd.Entries {
		if e.Client != privacy.AggregatorClient && e.Anchor == nil {
			t.Errorf("%s's entry %d (%s round %d) names no record of the aggregator", e.Client, e.Seq, e.Channel, e.Round)
		}
	}
	if len(r.agg.Heads) != len(clients)+1 {
		t.Fatalf("the result's final heads %+v, want %d banks and the aggregator", r.agg.Heads, len(clients))
	}
	rep, err := privacy.AuditReading(rd, privacy.AuditOptions{Delta: 1e-4, Job: "job", ExpectHeads: r.agg.Heads})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	if !rep.Integrity.Intact || !strings.Contains(b.String(), "c1: ") || strings.Contains(b.String(), "come after") {
		t.Fatalf("the job's own ledger is not found whole:\n%s", b.String())
	}
	for _, c := range []string{"c0", "c1", "c2"} {
		if !strings.Contains(b.String(), c+": ") || !strings.Contains(b.String(), "head matches the aggregator's done record") {
			t.Fatalf("%s's head is not matched to the done record:\n%s", c, b.String())
		}
	}

	// The administrator drops c1's last two entries.
	recsRaw, _ := ledger.Records(ctx)
	last := map[string]uint64{}
	for _, e := range rd.Entries {
		last[e.Client] = max(last[e.Client], e.Seq)
	}
	cut := privacy.NewMemLedger()
	for _, x := range recsRaw {
		e, err := privacy.DecodeEntry(x.Data)
		if err != nil {
			t.Fatal(err)
		}
		if e.Client != "c1" || e.Seq+2 <= last["c1"] {
			cut.AppendRaw(x.Data)
		}
	}
	rd, err = privacy.ReadLedger(ctx, cut, privacy.VerifyOptions{Job: "job"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = privacy.AuditReading(rd, privacy.AuditOptions{Delta: 1e-4, Job: "job"})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	rep.WriteText(&b)
	if rep.Integrity.Intact || len(rep.Integrity.Unverified) != 1 || rep.Integrity.Unverified[0] != "job/c1" ||
		!strings.Contains(b.String(), "EVIDENCE c1: the aggregator's done record names entry") {
		t.Fatalf("a bank's lost tail is not flagged:\n%s", b.String())
	}
}
