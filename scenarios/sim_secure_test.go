package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/job"
	"graphfed/learner"
	"graphfed/privacy"
	"graphfed/seeds"
)

// TestSecureSimRejectsForgery builds a secure simulation's parties exactly
// as job.RunSim does (job.SimJobOptions, deploy.StartJob) and attacks it: a
// stranger without credentials is refused by the server, and a bank's
// connection publishing an update signed with a key that is not the
// bank's is rejected by the aggregator as "signature" and never counted.
func TestSecureSimRejectsForgery(t *testing.T) {
	const jobID, banks, rounds = "forged", 3, 3
	learners := make([]learner.Learner, banks)
	for i := range learners {
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: 1, DataSeed: seeds.Party(1, i, seeds.Sampler)})
		if err != nil {
			t.Fatal(err)
		}
		learners[i] = l
	}
	cfg := job.SimConfig{Job: jobID, Algo: aggregator.AlgoFedAvg, Learners: learners, Rounds: rounds, LocalEpochs: 1,
		RoundTimeout: 20 * time.Second, Seed: 1, Secure: true, Log: zerolog.Nop()}
	o, err := job.SimJobOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	forged := make(chan error, 1)
	var j *deploy.Job
	o.Aggregator.OnRound = func(rc aggregator.RoundClosed) {
		if rc.Round == 1 {
			forged <- forgeUpdate(ctx, j.Local(), jobID, deploy.ClientID(1), learners[1].NumParams())
		}
	}
	if j, err = deploy.StartJob(ctx, o); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if !j.Local().Secure() {
		t.Fatal("the job is not secure")
	}
	// The connection retries in the background rather than failing: the
	// stranger is refused when nothing it sends ever reaches the server.
	if tr, err := deploy.Conn(deploy.ConnOptions{URL: j.Local().URL(), Name: "stranger"}); err == nil {
		err := tr.Conn().FlushTimeout(time.Second)
		tr.Close()
		if err == nil {
			t.Fatal("the secure server let a stranger without credentials connect")
		}
	}
	res, err := j.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-forged; err != nil {
		t.Fatal(err)
	}
	if n := res.Aggregator.Rejects[bus.ReasonSignature]; n != 1 {
		t.Fatalf("aggregator rejects %v, want one %q", res.Aggregator.Rejects, bus.ReasonSignature)
	}
	if len(res.Aggregator.Closes) != rounds {
		t.Fatalf("%d of %d rounds closed", len(res.Aggregator.Closes), rounds)
	}
	for _, rc := range res.Aggregator.Closes {
		if rc.Reason != "quorum" || len(rc.In) != banks || len(rc.Stale) > 0 {
			t.Fatalf("round %d closed by %s with %v (stale %v)", rc.Round, rc.Reason, rc.In, rc.Stale)
		}
	}
	all, err := j.Ledger(ctx)
	// Beside the banks' releases, the aggregator's records: the start, one
	// per round, done (and each bank's record of each secure round).
	var entries []privacy.Entry
	for _, e := range all {
		if e.Channel != privacy.ChannelSecAgg {
			entries = append(entries, e)
		}
	}
	if err != nil || len(entries) != banks*rounds+rounds+2 {
		t.Fatalf("ledger: %d entries, want %d releases and %d records of the aggregator (%v)", len(entries), banks*rounds, rounds+2, err)
	}
}

// forgeUpdate connects with bank's own credentials (the server lets it
// publish its updates) but signs an update for round 2 with a fresh key.
func forgeUpdate(ctx context.Context, l *deploy.Local, job, bank string, nparams int) error {
	tr, err := deploy.Conn(l.Conn(bank))
	if err != nil {
		return err
	}
	defer tr.Close()
	kp, err := nkeys.CreateUser()
	if err != nil {
		return err
	}
	s, err := bus.NewSigner(bank, kp)
	if err != nil {
		return err
	}
	data, err := s.Seal(bus.Envelope{Job: job, Kind: bus.KindUpdate, From: bank, Round: 2, Seq: 1 << 40},
		&forgedUpdate{Round: 2, Weight: 1e9, Params: make(bus.Vector, nparams)})
	if err != nil {
		return err
	}
	if err := tr.Publish(ctx, bus.Subject(job, bus.KindUpdate, bank), data); err != nil {
		return err
	}
	return tr.Flush(ctx)
}
