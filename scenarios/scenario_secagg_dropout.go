package scenarios

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// secagg-dropout: five banks, secure aggregation on, four rounds. In round
// 2 one bank (client-1) dies just after its masked input went out, and
// another (client-2) just before its masked input would have gone out,
// after advertising and sharing. The round must still close with a model
// unmasked from the survivors' inputs: the list names client-2 a dropout,
// the survivors' reveals (client-1 sends none) reconstruct client-2's
// pairwise masks and the survivors' self masks. The global model of the
// round must be the weighted mean of what the four survivors released,
// within the fixed point's error bound; the job must finish its rounds
// with the three banks left.

const (
	dropRounds = 4
	dropRound  = 2
	dropAfter  = 1 // dies after its masked input
	dropBefore = 2 // dies before it
	// dropSigma makes the gates' noise negligible beside the fixed
	// point's error, so that the round's model can be checked against
	// the survivors' trained parameters.
	dropSigma = 1e-9
)

// InvSecAggSum: a secure round's model is not the survivors' weighted mean.
const InvSecAggSum = "secagg-sum"

// InvSecAggDropout: a secure round did not survive its dropouts.
const InvSecAggDropout = "secagg-dropout"

func secAggDropoutScenario() Scenario {
	const name = "secagg-dropout"
	return Scenario{
		Name: name,
		Doc:  "secure aggregation on a keys-configured server: one bank dies after its masked input, one before; the round closes with the survivors' exact weighted mean (within the fixed-point bound) and the job finishes",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			run, err := runSecAggDropout(ctx, o)
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			return judgeSecAggDropout(name, run), nil
		},
	}
}

// dropoutRun is what the judge needs of a dropout job.
type dropoutRun struct {
	closes         []aggregator.RoundClosed
	struckAfter    bool // client-1's masked input went out and it died
	struckBefore   bool // client-2's masked input was dropped and it died
	want           []float64
	got            []float32
	bound          float64 // of one coordinate of the round's mean
	weight         float64 // the survivors' declared weights
	finalAccuracy  float64
	finalAccurate  bool
	survivorsRound []string
	// withDropout is the largest distance of the round's model from the
	// mean had client-2's trained parameters been counted: how far the
	// check is from passing a sum that kept a dropout.
	withDropout float64
}

func runSecAggDropout(ctx context.Context, o ScenarioOptions) (dropoutRun, error) {
	// Quorum 0 (every live bank) with missed-to-dead 1: round 2 waits for
	// all five advertisements; client-2, a dropout, is dead after it;
	// client-1, a survivor, after round 3, whose keys close at its
	// deadline without it.
	j, err := startSecAggJob(ctx, o, saJobOptions{job: "secagg-dropout", rounds: dropRounds, sigma: dropSigma,
		round: aggregator.Config{MissedToDead: 1, RoundTimeout: 4 * time.Second}})
	if err != nil {
		return dropoutRun{}, err
	}
	defer j.close()
	var after, before atomic.Bool
	job := j.local.Job()
	ba, bb := j.banks[dropAfter], j.banks[dropBefore]
	ba.fault.onPublish = func(ctx context.Context, subject string, data []byte, publish func() error) error {
		if subjectKind(subject) != bus.KindSAMasked || envRound(data) != dropRound {
			return publish()
		}
		err := publish()
		after.Store(err == nil)
		ba.kill()
		return err
	}
	bb.fault.onPublish = func(ctx context.Context, subject string, data []byte, publish func() error) error {
		if subjectKind(subject) != bus.KindSAMasked || envRound(data) != dropRound {
			return publish()
		}
		before.Store(true)
		bb.kill()
		return nil
	}
	res, err := j.run(ctx)
	if err != nil {
		return dropoutRun{}, fmt.Errorf("job %s: %w", job, err)
	}
	run := dropoutRun{closes: res.Closes, struckAfter: after.Load(), struckBefore: before.Load()}
	rc, ok := j.roundClosed(dropRound)
	if !ok || rc.SecAgg == nil {
		return run, nil
	}
	run.survivorsRound = rc.SecAgg.Survivors
	// What each survivor trained in the round (its second training), and
	// the model the round published (what client-0's next training
	// started from).
	var xs [][]float32
	var ws []float64
	var maxW float64
	for _, b := range j.banks {
		maxW = max(maxW, b.weight)
		if !slices.Contains(rc.SecAgg.Survivors, b.id) {
			continue
		}
		_, trained := b.learner.history()
		if len(trained) < dropRound {
			return run, fmt.Errorf("%s trained %d rounds", b.id, len(trained))
		}
		xs, ws = append(xs, trained[dropRound-1]), append(ws, b.weight)
		run.weight += b.weight
	}
	started, _ := j.banks[0].learner.history()
	if len(xs) > 0 && len(started) > dropRound {
		run.want, run.got = weightedMean(xs, ws), started[dropRound]
		// The fixed point's bound, float32's rounding of the model, and
		// the gates' noise (σ per coordinate, six deviations).
		run.bound = saEncoding(rc.SecAgg, maxW).ErrorBound(len(xs))/run.weight + 6*dropSigma
		if _, t := bb.learner.history(); len(t) >= dropRound {
			wrong := weightedMean(append(xs, t[dropRound-1]), append(ws, bb.weight))
			for k, w := range wrong {
				run.withDropout = max(run.withDropout, math.Abs(float64(run.got[k])-w))
			}
		}
	}
	if acc, ok := j.banks[0].res.Final["test_acc"]; ok {
		run.finalAccuracy, run.finalAccurate = acc, true
	}
	return run, nil
}

func judgeSecAggDropout(name string, r dropoutRun) Outcome {
	after, before := deploy.ClientID(dropAfter), deploy.ClientID(dropBefore)
	if !r.struckAfter || !r.struckBefore {
		return fail(name, InvNotExercised, "client-1 died after its masked input: %v; client-2 before it: %v", r.struckAfter, r.struckBefore)
	}
	if len(r.closes) != dropRounds {
		return fail(name, InvNoProgress, "%d of %d rounds closed", len(r.closes), dropRounds)
	}
	for _, rc := range r.closes {
		if rc.SecAgg == nil || rc.SecAgg.Failure != "" || !rc.Aggregate {
			return fail(name, InvSecAggDropout, "round %d closed without a secure sum: %+v", rc.Round, rc.SecAgg)
		}
	}
	rc := r.closes[dropRound-1]
	sc := rc.SecAgg
	want := []string{deploy.ClientID(0), after, deploy.ClientID(3), deploy.ClientID(4)}
	if !slices.Equal(sc.Survivors, want) || !slices.Equal(sc.Dropouts, []string{before}) || sc.Cohort != secBanks {
		return fail(name, InvSecAggDropout, "round %d: survivors %v and dropouts %v of a cohort of %d, want %v and [%s] of %d",
			rc.Round, sc.Survivors, sc.Dropouts, sc.Cohort, want, before, secBanks)
	}
	if len(sc.Survivors) < sc.Threshold {
		return fail(name, InvSecAggDropout, "round %d: %d survivors below t = %d", rc.Round, len(sc.Survivors), sc.Threshold)
	}
	if rc.Weight != r.weight {
		return fail(name, InvSecAggSum, "round %d aggregated weight %v, the survivors declared %v", rc.Round, rc.Weight, r.weight)
	}
	if len(r.want) == 0 || len(r.got) != len(r.want) || r.bound <= 0 {
		return fail(name, InvSecAggSum, "round %d: no model to compare (%d coordinates, %d expected, bound %g)", rc.Round, len(r.got), len(r.want), r.bound)
	}
	var worst float64
	for k, w := range r.want {
		// float32's own rounding of the published coordinate.
		tol := r.bound + math.Abs(w)*float64(1<<3)/float64(1<<24)
		d := math.Abs(float64(r.got[k]) - w)
		if d > tol {
			return fail(name, InvSecAggSum, "round %d coordinate %d is %v, the survivors' weighted mean %v (|Δ| %.3g above the bound %.3g)",
				rc.Round, k, r.got[k], w, d, tol)
		}
		worst = max(worst, d)
	}
	out := Outcome{Name: name, Metrics: map[string]float64{
		"rounds": float64(len(r.closes)), "cohort": float64(sc.Cohort), "t": float64(sc.Threshold),
		"survivors": float64(len(sc.Survivors)), "dropouts": float64(len(sc.Dropouts)),
		"max_abs_error": worst, "error_bound": r.bound, "secagg_seconds": sc.Seconds,
		"error_had_dropout_counted": r.withDropout,
	}}
	if r.finalAccurate {
		out.Metrics["final_accuracy_client0"] = r.finalAccuracy
	}
	return out
}
