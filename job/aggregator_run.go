package job

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/runreport"
)

// RunAggregator runs the aggregator of spec against its NATS server until
// the job's last round closes and the clients' final scores are in (or
// FinalWait passes), and returns the job's report as `graphfed aggregator`
// writes it (its Seconds are the caller's). Stopped by ctx (a signal), it
// returns the report so far with the *aggregator.StoppedError.
func RunAggregator(ctx context.Context, spec AggregatorSpec, log zerolog.Logger) (runreport.Summary, error) {
	s := spec.resolve()
	if s.Conn.Creds != "" && s.Keyring == "" {
		log.Warn().Msg("no --keyring: the envelopes received are not checked for their senders' signatures")
	}
	round, err := s.roundConfig(log)
	if err != nil {
		return runreport.Summary{}, err
	}
	o := deploy.AggregatorOptions{
		Job: s.Job, Task: s.Task, Conn: s.Conn, Keyring: s.Keyring, Durable: s.Durable, Recovery: s.Recovery, Round: round,
		InitSeed: s.Seed, Enrol: s.Clients, CreateLedger: s.CreateLedger, Resume: s.Resume, FinalWait: s.FinalWait, Log: log,
		Blobs: s.Blobs,
	}
	if s.StartMetrics != nil {
		if o.Metrics, err = s.StartMetrics(); err != nil {
			return runreport.Summary{}, err
		}
	}
	bar := progressOr(s.Progress).Stage("aggregator "+s.Job, s.Rounds)
	o.OnRound = func(rc aggregator.RoundClosed) {
		bar.Update(int(rc.Round), fmt.Sprintf("%s in=%d late=%d%s", rc.Reason, len(rc.In), len(rc.Late), RoundBudgetNote(rc)))
	}
	agg, err := deploy.NewAggregator(ctx, o)
	if err != nil {
		return runreport.Summary{}, err
	}
	defer agg.Close()
	res, err := agg.Run(ctx)
	bar.Finish()
	// Stopped by a signal: the report so far, with the reason.
	var stopped *aggregator.StoppedError
	if err != nil && !errors.As(err, &stopped) {
		return runreport.Summary{}, err
	}
	metrics, err := aggregatorMetrics(s.Task, round.Robust, res)
	if err != nil {
		return runreport.Summary{}, err
	}
	putServerOpt(metrics, round.ServerOpt)
	if c := agg.Carried(); len(c) > 0 {
		metrics["carried_budgets"] = c
	}
	msgs, bytes := agg.Transport().Stats()
	rep := runreport.Summary{Command: "aggregator", Algo: s.Algo, Clients: len(res.Final), Rounds: int(res.Rounds), Seed: int64(s.Seed),
		Metrics: metrics, Comm: &runreport.Comm{Bytes: bytes, Messages: msgs}}
	if stopped != nil {
		return rep, stopped
	}
	return rep, nil
}
