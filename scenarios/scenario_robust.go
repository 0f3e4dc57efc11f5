package scenarios

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/learner"
	"graphfed/seeds"
)

// The robust-aggregation scenario (issue 29, item 2): five banks on a
// secure server configured as `graphfed keys` configures it, one of which
// (bank 4, its agent and its own signing key) releases its honest model
// scaled up to the job's clip every round. Such an update is within the
// contract, so nothing rejects it: the sample-weighted mean takes it in
// and the model drifts off, and only a robust rule keeps it near the run
// of the four honest banks alone.
//
// The attack is a scaling, not a sign flip, on purpose: the attacker's
// release has the norm of the clip C, the largest an honest release can
// have, so the contract's bound C + σ·(2·sqrt(d) + 10) accepts it (a
// larger one is rejected as norm and tests the contract, as huge-update
// does). normclip bounds magnitudes, not directions: against a flipped
// vector scaled down to the median norm it would still leave a fifth of
// it in the mean, which the bound below does not allow for.
const (
	robustBanks    = 5
	robustAttacker = 4 // the bank that scales its releases
	robustRounds   = 6
	robustDim      = 8 // features: the model has robustDim+1 parameters
	robustSamples  = 400
	// robustLabelNoise makes the labels noisy enough that the best model
	// is not a confident one, so that an inflated model usually costs the
	// honest banks test loss (seed 1: 0.435 clean, 0.667 under the mean).
	// Not always: where the clean model is short of its optimum, scaling
	// it up lowers the loss (seed 3, or seed 1 with the learner's default
	// 0.5: 0.31 to 0.15). The losses are reported; what is asserted is the
	// distance in parameters.
	robustLabelNoise = 2
	robustClip       = 10
	// robustSigma is σ1 of every bank's gate. Small, so that the noise
	// allowance in the bound (10·σ·sqrt(d) a round) stays below the banks'
	// own spread; the contract's norm bound follows it.
	robustSigma = 1e-3
)

// robustRules are the rules the attacked job runs under; holds says
// whether the final model must stay within the bound of the clean run,
// factor is the rule's factor on the honest banks' range in that bound
// (robustBound). The mean must end beyond the loosest, factor 1.
var robustRules = []struct {
	name   string
	rule   aggregator.Robust
	holds  bool
	factor float64
}{
	{"mean", aggregator.Robust{}, false, 1},
	{"median", aggregator.Robust{Rule: aggregator.RobustMedian}, true, 0.5},
	{"trimmed", aggregator.Robust{Rule: aggregator.RobustTrimmed, Trim: 1}, true, 0.5},
	{"normclip", aggregator.Robust{Rule: aggregator.RobustNormClip}, true, 0.6},
}

func robustScenario() Scenario {
	const name = "robust-aggregation"
	return Scenario{Name: name,
		Doc: "one of five banks releases its model scaled to the job's clip every round (within the contract): the mean drifts off, median, trimmed and normclip stay within the derived bound of the four honest banks' run, and the attacker leads what they set aside",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			clean, err := runRobustJob(ctx, name+"-clean", o, aggregator.Robust{}, robustBanks-1)
			if err != nil {
				return fail(name, InvNoProgress, "clean job: %v", err), nil
			}
			var runs []robustRun
			for _, r := range robustRules {
				run, err := runRobustJob(ctx, name+"-"+r.name, o, r.rule, robustBanks)
				if err != nil {
					return fail(name, InvNoProgress, "job under %s: %v", r.name, err), nil
				}
				runs = append(runs, run)
			}
			return judgeRobust(name, clean, runs), nil
		}}
}

// robustRun is one job's result and what its banks' learners released
// before noise: honest[i][r] is bank i's own model at round r+1 (the
// attacker's before scaling).
type robustRun struct {
	res    deploy.JobResult
	honest [][][]float32
}

// runRobustJob runs banks 0..banks-1 under rule; with five, bank 4 is the
// attacker. The banks' data and noise seeds do not depend on the run, so
// an honest bank releases the same noise in every run.
func runRobustJob(ctx context.Context, job string, o ScenarioOptions, rule aggregator.Robust, banks int) (robustRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	jo := deploy.JobOptions{Local: deploy.LocalOptions{Job: job, Secure: true},
		Aggregator: deploy.AggregatorOptions{Task: deploy.TaskNode, InitSeed: o.Seed, FinalWait: 2 * time.Second,
			Log: o.Log, Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: robustRounds, MinClients: banks,
				Quorum: banks, RoundTimeout: time.Minute, Robust: rule}}}
	learners := make([]*scalingLearner, banks)
	for i := range banks {
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: robustDim, Samples: robustSamples, TaskSeed: o.Seed,
			DataSeed: seeds.Party(o.Seed, i, seeds.Sampler), LabelNoise: robustLabelNoise})
		if err != nil {
			return robustRun{}, err
		}
		learners[i] = &scalingLearner{Learner: l}
		if i == robustAttacker {
			learners[i].target = robustClip
		}
		p := logisticPrivacy(o.Seed, i)
		p.ModelSigma, p.ModelClip = robustSigma, robustClip
		jo.Agents = append(jo.Agents, deploy.AgentOptions{ID: deploy.ClientID(i), Learner: learners[i], LocalEpochs: 2,
			Privacy: p, Log: o.Log})
	}
	j, err := deploy.StartJob(ctx, jo)
	if err != nil {
		return robustRun{}, err
	}
	defer j.Close()
	res, err := j.Run(ctx)
	run := robustRun{res: res}
	for _, l := range learners {
		run.honest = append(run.honest, l.released())
	}
	return run, err
}

// scalingLearner records the learner's parameters at every release (the
// agent takes Params once a round, after training, and gates it); with a
// target it releases them scaled to that norm instead, what a bank that
// tampers with its own agent can do with a valid key.
type scalingLearner struct {
	learner.Learner
	target float64

	mu     sync.Mutex
	honest [][]float32
}

func (l *scalingLearner) Params() []float32 {
	p := l.Learner.Params()
	l.mu.Lock()
	l.honest = append(l.honest, slices.Clone(p))
	l.mu.Unlock()
	if n := norm2(p); l.target > 0 && n > 0 {
		for i := range p {
			p[i] = float32(float64(p[i]) * l.target / n)
		}
	}
	return p
}

func (l *scalingLearner) released() [][]float32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.honest)
}

func norm2(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

func dist2(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return math.Sqrt(s)
}

// robustBound is how far a rule's final model may be from the clean
// run's, derived from the run's own honest models (before noise): factor
// times the sum over the rounds of the honest range, plus the noise.
//
// One round: let h_1..h_5 be the banks' honest models (the attacker's
// before scaling), R the per-coordinate range max_i h_ij − min_i h_ij and
// m the mean of h_1..h_4, the clean run's aggregate from the same start.
// Whatever the fifth value, the median of the five lies in [h(2), h(3)]
// of the sorted honest four in every coordinate, and the trimmed mean
// (trim 1) is a mean of three values within [h(1), h(4)] with at most one
// outside [h(2), h(3)]: both within R/2 of m, ||R||/2 in L2. normclip's
// result is m + (1/5)·Σ(s_i − 1)·h_i over the honest vectors it scales
// down to the round's median norm ν, + (ν·ĥ_5 − m)/5 for the attacker's.
// The attacker's norm (the clip) is the round's largest, so ν is an
// honest norm and one honest vector at most is above it: the first term
// is within ||R||/5, the second within (|ν − ||h_5||| + ||h_5 − m||)/5 ≤
// 2·||R||/5; 3/5·||R|| in all.
// Noise: the released values carry z ~ N(0, σ²) a coordinate, the same
// draws in every run for an honest bank (seeded per bank); with |z| ≤ 5σ
// the ranges widen by 10σ a coordinate, 10σ·sqrt(d) in L2.
// Rounds: a bank's round is full-batch gradient descent on a convex
// logistic loss with a step (0.5) below 2/L (L ≤ λmax(X̃ᵀX̃)/4n: at most
// 1.8 for the banks of seeds 1 to 8, so 2/L ≥ 1.1), a non-expansive map;
// so is the mean of the banks' maps, and the distance after round r is at most the distance before
// plus round r's allowance. The sum over the rounds is a worst case: the
// runs end several times inside it (the scenario reports both).
func robustBound(honest [][][]float32, factor float64) float64 {
	var bound float64
	rounds := len(honest[0])
	for _, h := range honest {
		rounds = min(rounds, len(h))
	}
	for r := range rounds {
		n := len(honest[0][r])
		var rr float64
		for j := range n {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, h := range honest {
				lo, hi = min(lo, float64(h[r][j])), max(hi, float64(h[r][j]))
			}
			rr += (hi - lo) * (hi - lo)
		}
		bound += factor * (math.Sqrt(rr) + 10*robustSigma*math.Sqrt(float64(n)))
	}
	return bound
}

// judgeRobust checks every attacked run against the clean one; runs are
// in robustRules' order.
func judgeRobust(name string, clean robustRun, runs []robustRun) Outcome {
	all := append([]robustRun{clean}, runs...)
	for k, run := range all {
		banks, label := robustBanks, "clean"
		if k == 0 {
			banks = robustBanks - 1
		} else {
			label = robustRules[k-1].name
		}
		a := run.res.Aggregator
		if len(a.Rejects) > 0 {
			// The attack is within the contract: a reject means this
			// scenario tests the contract, not the rule.
			return fail(name, InvNotRejected, "%s: the job rejected %v (by sender %v)", label, a.Rejects, a.RejectsBy)
		}
		if len(a.Closes) != robustRounds {
			return fail(name, InvNoProgress, "%s: %d of %d rounds closed", label, len(a.Closes), robustRounds)
		}
		for _, rc := range a.Closes {
			if len(rc.In) != banks || len(rc.Stale) > 0 {
				return fail(name, InvNoProgress, "%s: round %d counted %v (stale %v), want the %d banks", label, rc.Round, rc.In, rc.Stale, banks)
			}
		}
		if len(run.honest) != banks || slices.ContainsFunc(run.honest, func(h [][]float32) bool { return len(h) != robustRounds }) {
			return fail(name, InvNoProgress, "%s: a bank did not release once a round", label)
		}
		if len(a.Model) == 0 {
			return fail(name, InvNoProgress, "%s: no final model", label)
		}
	}
	base := clean.res.Aggregator.Model
	loss, acc := honestScores(clean.res.Aggregator)
	m := map[string]float64{"clean_test_loss": loss, "clean_test_acc": acc, "clean_norm": norm2(base)}
	attacker := deploy.ClientID(robustAttacker)
	for k, run := range runs {
		r, a := robustRules[k], run.res.Aggregator
		d, bound := dist2(a.Model, base), robustBound(run.honest, r.factor)
		loss, acc := honestScores(a)
		m["dist_"+r.name], m["bound_"+r.name] = d, bound
		m["rel_dist_"+r.name] = d / norm2(base)
		m["test_loss_"+r.name], m["test_acc_"+r.name] = loss, acc
		if r.holds && !(d <= bound) {
			return fail(name, InvResultChanged, "under %s the final model is %.4g from the clean run's, above the bound %.4g", r.name, d, bound)
		}
		if !r.holds && !(d > bound) {
			// The attack must bite: otherwise the rules pass for nothing.
			return fail(name, InvResultChanged, "under %s the attacker moved the model only %.4g, within the bound %.4g: the attack does not bite", r.name, d, bound)
		}
		if r.rule.Rule == aggregator.RobustNone {
			if a.SetAside != nil {
				return fail(name, InvResultChanged, "the mean set aside %v", a.SetAside)
			}
			continue
		}
		// Every one of the attacker's releases was touched, and it leads
		// what the rule set aside.
		for _, rc := range a.Closes {
			if rc.SetAside[attacker] == 0 {
				return fail(name, InvNotRejected, "under %s nothing of the attacker's round %d was set aside (%v)", r.name, rc.Round, rc.SetAside)
			}
		}
		mine, honestMax := a.SetAside[attacker], 0
		for id, k := range a.SetAside {
			if id != attacker {
				honestMax = max(honestMax, k)
			}
		}
		m["set_aside_attacker_"+r.name], m["set_aside_honest_max_"+r.name] = float64(mine), float64(honestMax)
		if mine <= honestMax {
			return fail(name, InvNotRejected, "under %s %d of the attacker's values set aside, as many of an honest bank's (%d; all: %v)",
				r.name, mine, honestMax, a.SetAside)
		}
	}
	return Outcome{Name: name, Metrics: m}
}

// honestScores are the honest banks' mean final test loss and accuracy.
func honestScores(a aggregator.Result) (loss, acc float64) {
	n := 0
	for i := range robustBanks - 1 {
		if sc, ok := a.Final[deploy.ClientID(i)]; ok {
			loss, acc = loss+sc["test_loss"], acc+sc["test_acc"]
			n++
		}
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return loss / float64(n), acc / float64(n)
}
