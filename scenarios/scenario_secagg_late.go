package scenarios

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
)

// secagg-late: in round 2 client-4's masked input is held at its
// connection until the aggregator's list of the round has reached it, so
// it arrives after the inputs closed: the aggregator refuses it as late
// (SecAggRefused "masked:late"), the list names client-4 a dropout, and
// the round closes with the other four. Under the constant staleness
// policy (factor 0.5) client-4 folds the missed input into its input to
// round 3: round 3's sum weighs the five banks' declared sizes plus half
// of client-4's, and client-4's ledger record of round 3 names round 2 as
// folded in (SecAggRecord.Stale).

const (
	lateRounds = 3
	lateRound  = 2
	lateBank   = 4
)

// InvSecAggLate: a late masked input was counted in its round, or not
// folded into the next.
const InvSecAggLate = "secagg-late"

func secAggLateScenario() Scenario {
	const name = "secagg-late"
	return Scenario{
		Name: name,
		Doc:  "a bank's masked input arrives after its round's list: refused as late, the bank a dropout of that round, and its input folded (staleness 0.5) into the next round's secure sum, as its ledger record says",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			run, err := runSecAggLate(ctx, o)
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			return judgeSecAggLate(name, run), nil
		},
	}
}

// lateRun is what the judge needs of the job.
type lateRun struct {
	closes      []aggregator.RoundClosed
	held        bool // the masked input was held until the list came
	refusedLate int
	weights     []float64 // each bank's declared size
	factor      float64
	records     map[uint64]*privacy.SecAggRecord // client-4's, by round
}

func runSecAggLate(ctx context.Context, o ScenarioOptions) (lateRun, error) {
	const factor = 0.5
	j, err := startSecAggJob(ctx, o, saJobOptions{job: "secagg-late", rounds: lateRounds,
		round: aggregator.Config{Staleness: aggregator.Staleness{Policy: "constant", Factor: factor}}})
	if err != nil {
		return lateRun{}, err
	}
	defer j.close()
	job, late := j.local.Job(), j.banks[lateBank]
	listed := make(chan struct{})
	var once sync.Once
	var held atomic.Bool
	late.fault.onReceive = func(m bus.Msg) {
		if subjectKind(m.Subject) == bus.KindSAList && envRound(m.Data) == lateRound {
			once.Do(func() { close(listed) })
		}
	}
	late.fault.onPublish = func(ctx context.Context, subject string, data []byte, publish func() error) error {
		if subjectKind(subject) != bus.KindSAMasked || envRound(data) != lateRound {
			return publish()
		}
		held.Store(true)
		select {
		case <-listed:
		case <-ctx.Done():
			return ctx.Err()
		}
		return publish()
	}
	res, err := j.run(ctx)
	if err != nil {
		return lateRun{}, fmt.Errorf("job %s: %w", job, err)
	}
	run := lateRun{closes: res.Closes, held: held.Load(), refusedLate: res.SecAggRefused[late.id]["masked:late"], factor: factor,
		records: map[uint64]*privacy.SecAggRecord{}}
	for _, b := range j.banks {
		run.weights = append(run.weights, b.weight)
	}
	entries, err := j.local.LedgerEntries(ctx)
	if err != nil {
		return lateRun{}, err
	}
	for _, e := range entries {
		if e.Client == late.id && e.Channel == privacy.ChannelSecAgg && e.SecAgg != nil {
			run.records[e.Round] = e.SecAgg
		}
	}
	return run, nil
}

func judgeSecAggLate(name string, r lateRun) Outcome {
	late := deploy.ClientID(lateBank)
	if !r.held {
		return fail(name, InvNotExercised, "%s's masked input of round %d was never held", late, lateRound)
	}
	if len(r.closes) != lateRounds || len(r.weights) != secBanks {
		return fail(name, InvNoProgress, "%d of %d rounds closed", len(r.closes), lateRounds)
	}
	for _, rc := range r.closes {
		if rc.SecAgg == nil || rc.SecAgg.Failure != "" {
			return fail(name, InvNoProgress, "round %d closed without a secure sum: %+v", rc.Round, rc.SecAgg)
		}
	}
	if r.refusedLate < 1 {
		return fail(name, InvSecAggLate, "%s's late masked input was not refused as late", late)
	}
	struck, next := r.closes[lateRound-1], r.closes[lateRound]
	if slices.Contains(struck.SecAgg.Survivors, late) || !slices.Equal(struck.SecAgg.Dropouts, []string{late}) {
		return fail(name, InvSecAggLate, "round %d: survivors %v, dropouts %v; want %s a dropout", lateRound, struck.SecAgg.Survivors, struck.SecAgg.Dropouts, late)
	}
	var full float64
	for _, w := range r.weights {
		full += w
	}
	if want := full - r.weights[lateBank]; struck.Weight != want {
		return fail(name, InvSecAggLate, "round %d aggregated weight %v, want the four others' %v", lateRound, struck.Weight, want)
	}
	if len(next.SecAgg.Survivors) != secBanks {
		return fail(name, InvSecAggLate, "round %d: survivors %v, want all %d", next.Round, next.SecAgg.Survivors, secBanks)
	}
	// The folded input: client-4's round-3 input weighs its size plus the
	// stale factor times its missed round's.
	if want := full + r.factor*r.weights[lateBank]; next.Weight != want {
		return fail(name, InvSecAggLate, "round %d aggregated weight %v, want %v with %s's round %d folded in at %v",
			next.Round, next.Weight, want, late, lateRound, r.factor)
	}
	rec := r.records[next.Round]
	if rec == nil || !slices.Equal(rec.Stale, []uint64{lateRound}) {
		return fail(name, InvSecAggLate, "%s's ledger record of round %d: %+v, want round %d folded in (stale)", late, next.Round, rec, lateRound)
	}
	if prev := r.records[lateRound]; prev == nil || len(prev.Stale) != 0 {
		return fail(name, InvSecAggLate, "%s's ledger record of round %d: %+v, want one with nothing folded", late, lateRound, prev)
	}
	return Outcome{Name: name, Metrics: map[string]float64{
		"refused_masked_late": float64(r.refusedLate), "late_round_weight": struck.Weight, "next_round_weight": next.Weight,
		"stale_factor": r.factor, "next_round_survivors": float64(len(next.SecAgg.Survivors)), "rounds": float64(len(r.closes)),
	}}
}
