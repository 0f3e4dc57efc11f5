package deploy

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
)

// Junk that a bank stores on its own ledger subject before the job starts
// is no earlier run: the re-run check counts only entries that verify (on
// an open server, the job's single stream), and in the accounts layout it
// reads the aggregator's own stream only. A bank cannot burn the job id.
func TestPriorRunIgnoresJunk(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(map[bool]string{false: "open", true: "accounts"}[secure], func(t *testing.T) { testPriorRunIgnoresJunk(t, secure) })
	}
}

func testPriorRunIgnoresJunk(t *testing.T, secure bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	banks := testBanks(2)
	l, err := StartLocal(ctx, LocalOptions{Job: testJob, Banks: banks, Secure: secure})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tr, err := Conn(l.Conn("bank-0"))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for i := range 20 {
		// A JetStream publish on its own ledger subject: stored, acked.
		if _, err := tr.Conn().Request(bus.LedgerSubject(testJob, "bank-0"), []byte("junk"), 5*time.Second); err != nil {
			t.Fatalf("junk %d: %v", i, err)
		}
	}
	ao := AggregatorOptions{Job: testJob, Task: TaskNode, Conn: l.Conn(bus.AggregatorID), Keyring: l.KeyringPath(),
		Round:    aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: 1, MinClients: len(banks), RoundTimeout: 5 * time.Second},
		InitSeed: 1, Log: zerolog.Nop()}
	a, err := NewAggregator(ctx, ao)
	if err != nil {
		t.Fatalf("the aggregator refused the job after a bank's junk: %v", err)
	}
	defer a.Close()
	if p := a.Prior(); p.Any() {
		t.Fatalf("junk counted as an earlier run: %+v", p)
	}
}
