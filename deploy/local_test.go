package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
	"graphfed/seeds"
)

const testJob = "deploy-test"

func testBanks(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bank-%d", i)
	}
	return ids
}

// runFedAvg runs a FedAvg job of logistic-regression banks on l, every
// party built by NewAggregator and NewAgent.
func runFedAvg(t *testing.T, ctx context.Context, l *Local, banks []string, rounds int, durable bool) JobResult {
	t.Helper()
	agg, err := NewAggregator(ctx, l.AggregatorOptions(AggregatorOptions{Job: l.Job(), Task: TaskNode,
		Durable: durable, Recovery: DurableOptions{AckWait: time.Second},
		Round:    aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: rounds, MinClients: len(banks), RoundTimeout: 20 * time.Second},
		InitSeed: 1, Enrol: banks, FinalWait: 2 * time.Second, Log: zerolog.Nop()}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agg.Close() })
	agents := make([]*Agent, len(banks))
	for i, id := range banks {
		lr, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: 1, DataSeed: uint64(31 + i)})
		if err != nil {
			t.Fatal(err)
		}
		p := DefaultPrivacy()
		seed := seeds.Party(1, i, seeds.Noise)
		p.NoiseSeed = &seed
		agents[i], err = NewAgent(ctx, l.AgentOptions(AgentOptions{Job: l.Job(), ID: id, Task: TaskNode, Algo: aggregator.AlgoFedAvg,
			Durable: durable, Privacy: p, Learner: lr, LocalEpochs: 2, HelloRetry: 200 * time.Millisecond, Log: zerolog.Nop()}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agents[i].Close() })
	}
	run, err := RunParties(ctx, agg, agents)
	if err != nil {
		t.Fatal(err)
	}
	if run.Messages == 0 || run.Bytes == 0 {
		t.Fatalf("traffic not counted: %d messages, %d bytes", run.Messages, run.Bytes)
	}
	return run
}

// checkRun asserts that every round closed with every bank in and that no
// message was rejected (in secure mode: every envelope verified).
func checkRun(t *testing.T, run JobResult, banks []string, rounds int) {
	t.Helper()
	if run.Aggregator.Rounds != uint64(rounds) || len(run.Aggregator.Closes) != rounds {
		t.Fatalf("aggregator ran %d rounds (%d closes), want %d", run.Aggregator.Rounds, len(run.Aggregator.Closes), rounds)
	}
	for _, c := range run.Aggregator.Closes {
		if len(c.In) != len(banks) {
			t.Fatalf("round %d closed (%s) with %d of %d banks", c.Round, c.Reason, len(c.In), len(banks))
		}
	}
	if len(run.Aggregator.Rejects) != 0 {
		t.Fatalf("aggregator rejected messages: %v", run.Aggregator.Rejects)
	}
	for i, r := range run.Agents {
		if r.Rounds != rounds || len(r.Rejects) != 0 {
			t.Fatalf("agent %s: %d rounds, rejects %v", banks[i], r.Rounds, r.Rejects)
		}
	}
	if len(run.Aggregator.Final) != len(banks) {
		t.Fatalf("final scores from %d banks, want %d", len(run.Aggregator.Final), len(banks))
	}
}

// checkLedger asserts one model release per bank and round, seeded.
func checkLedger(t *testing.T, entries []privacy.Entry, banks []string, rounds int) {
	t.Helper()
	per := map[string]int{}
	for _, e := range entries {
		if e.Channel == privacy.ChannelModel {
			per[e.Client]++
		}
		if !e.Seeded && !e.Channel.IsRecord() { // the aggregator's records release nothing
			t.Fatalf("entry %+v not marked seeded though the noise was", e)
		}
	}
	for _, b := range banks {
		if per[b] != rounds {
			t.Fatalf("ledger: %s released its model %d times, want %d (%v)", b, per[b], rounds, per)
		}
	}
}

// A FedAvg job runs through the same builders signed under the
// permissions of a freshly keyed server, plain on an embedded one, and on
// an external server.
func TestLocalFedAvg(t *testing.T) {
	external, err := bus.StartServer(bus.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer external.Shutdown()
	for _, tc := range []struct {
		name string
		o    LocalOptions
	}{
		{"plain", LocalOptions{}},
		{"secure", LocalOptions{Secure: true}},
		{"external", LocalOptions{URL: external.ClientURL()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			banks := testBanks(3)
			tc.o.Job, tc.o.Banks = testJob, banks
			l, err := StartLocal(ctx, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			secure := tc.o.Secure
			if l.Secure() != secure || (l.Creds("bank-1") != "") != secure || (l.KeyringPath() != "") != secure {
				t.Fatalf("secure %v: keyring %q, creds %q", l.Secure(), l.KeyringPath(), l.Creds("bank-1"))
			}
			if (l.Server() == nil) != (tc.o.URL != "") {
				t.Fatalf("embedded server %v with external URL %q", l.Server() != nil, tc.o.URL)
			}
			const rounds = 3
			run := runFedAvg(t, ctx, l, banks, rounds, false)
			checkRun(t, run, banks, rounds)
			entries, err := l.LedgerEntries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			checkLedger(t, entries, banks, rounds)
		})
	}
}

func TestStartLocalRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    LocalOptions
		want string
	}{
		{"bad job", LocalOptions{Job: "Job!"}, `job "Job!" is not`},
		{"secure on an external server", LocalOptions{Job: "j", Banks: []string{"b"}, Secure: true, URL: "nats://127.0.0.1:1"}, "secure mode starts its own server"},
		{"secure without banks", LocalOptions{Job: "j", Secure: true}, "no banks"},
		{"secure with a reserved bank id", LocalOptions{Job: "j", Banks: []string{"all"}, Secure: true}, `bank id "all" is reserved`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := StartLocal(context.Background(), tc.o)
			if err == nil {
				l.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// Under Secure, a bank's key lets it publish only as itself: its update
// on its own subject reaches the aggregator, one on another bank's
// subject (or the round subject) reaches nobody, since only the bank's
// own subjects are imported anywhere, and an agent started with another
// bank's seed is refused before it sends anything.
func TestSecureRefusesImpersonation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	banks := testBanks(2)
	l, err := StartLocal(ctx, LocalOptions{Job: testJob, Banks: banks, Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	// The aggregator's account and bank-1's observe what reaches them.
	seen := make(chan *nats.Msg, 16)
	for _, who := range []string{bus.AggregatorID, "bank-1"} {
		obs, err := Conn(l.Conn(who))
		if err != nil {
			t.Fatal(err)
		}
		defer obs.Close()
		if _, err := obs.Conn().ChanSubscribe(">", seen); err != nil {
			t.Fatal(err)
		}
		if err := obs.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := Conn(l.Conn("bank-0"))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, tc := range []struct {
		subject   string
		delivered bool
	}{
		{bus.Subject(testJob, bus.KindUpdate, "bank-0"), true},
		{bus.Subject(testJob, bus.KindUpdate, "bank-1"), false},
		{bus.Subject(testJob, bus.KindRound), false}, // only the aggregator opens rounds
	} {
		if err := tr.Publish(ctx, tc.subject, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := tr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		got := false
		for wait := time.After(300 * time.Millisecond); ; {
			select {
			case m := <-seen:
				got = got || m.Subject == tc.subject
				continue
			case <-wait:
			}
			break
		}
		if got != tc.delivered {
			t.Fatalf("bank-0's publish on %s delivered=%v, want %v", tc.subject, got, tc.delivered)
		}
	}

	lr, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 2, Samples: 8})
	if err != nil {
		t.Fatal(err)
	}
	stolen := l.Conn("bank-0")
	_, err = NewAgent(ctx, AgentOptions{Job: testJob, ID: "bank-1", Task: TaskNode, Algo: aggregator.AlgoFedAvg,
		Conn: stolen, Keyring: l.KeyringPath(), Privacy: DefaultPrivacy(), Learner: lr, Log: zerolog.Nop()})
	if err == nil || !strings.Contains(err.Error(), "is not bank-1's") {
		t.Fatalf("agent bank-1 with bank-0's seed: %v, want a refusal naming the wrong seed", err)
	}
}

// A durable secure job keeps its checkpoint in the job's bucket and every
// update in the job's update stream, both reachable with the aggregator's
// key only.
func TestSecureDurableAggregator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	banks := testBanks(3)
	l, err := StartLocal(ctx, LocalOptions{Job: testJob, Banks: banks, Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const rounds = 3
	run := runFedAvg(t, ctx, l, banks, rounds, true)
	checkRun(t, run, banks, rounds)
	if run.Aggregator.Resumed {
		t.Fatal("a fresh durable job claims to have resumed")
	}

	tr, err := Conn(l.Conn(bus.AggregatorID))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	store, _, err := AggregatorStore(ctx, tr, testJob, DurableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	state, err := store.LoadState(ctx)
	if err != nil || len(state) == 0 {
		t.Fatalf("checkpoint after the job: %d bytes, %v", len(state), err)
	}
	js, err := jetstream.New(tr.Conn())
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, bus.UpdateStreamName(testJob))
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n < uint64(rounds*len(banks)) {
		t.Fatalf("update stream holds %d messages, want at least %d", n, rounds*len(banks))
	}

	// A restarted aggregator resumes from the checkpoint: the job is done,
	// and its model is the one the first life finished with.
	// Only when told to (--resume): a plain re-run of the job id is refused.
	ao := AggregatorOptions{Job: testJob, Task: TaskNode, Conn: l.Conn(bus.AggregatorID),
		Keyring: l.KeyringPath(), Durable: true,
		Round:    aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: rounds, MinClients: len(banks), RoundTimeout: 20 * time.Second},
		InitSeed: 1, FinalWait: 500 * time.Millisecond, Log: zerolog.Nop()}
	if refused, err := NewAggregator(ctx, ao); !errors.Is(err, ErrRerun) || !strings.Contains(err.Error(), "--resume") {
		if refused != nil {
			refused.Close()
		}
		t.Fatalf("re-running the job without Resume: %v, want ErrRerun naming --resume", err)
	}
	ao.Resume = true
	again, err := NewAggregator(ctx, ao)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	// Need-to-know: in the accounts layout the aggregator reads its own
	// ledger stream only, so it carries no bank's budget (each bank's gate
	// carries its own).
	if p := again.Prior(); !p.Checkpoint || len(again.Carried()) != 0 {
		t.Fatalf("resumed over %+v, carried %+v; want the checkpoint and no bank's budget read", p, again.Carried())
	}
	res, err := again.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.Rounds != rounds || aggregator.ModelDigest(res.Model) != aggregator.ModelDigest(run.Aggregator.Model) {
		t.Fatalf("restart: resumed %v in round %d, %d rounds, model %s, want the finished job's %s",
			res.Resumed, res.ResumedRound, res.Rounds, aggregator.ModelDigest(res.Model), aggregator.ModelDigest(run.Aggregator.Model))
	}
}
