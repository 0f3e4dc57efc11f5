package job

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"time"

	"graphfed/aggregator"
	"graphfed/aml/amllearner"
	"graphfed/aml/amlworld"
	"graphfed/aml/bank"
	"graphfed/aml/edgegnn"
	"graphfed/aml/eval"
	"graphfed/deploy"
	"graphfed/graph"
	"graphfed/learner"
	"graphfed/privacy"
	"graphfed/runreport"
	"graphfed/seeds"
)

// AMLRound is one closed round of an AML job: the close, the banks' pooled
// validation F1 of the model they started it with (NaN when not scored
// that round), and the job's traffic and spending so far.
type AMLRound struct {
	Close    aggregator.RoundClosed
	ValF1    float64
	Progress deploy.Progress
}

// AMLResult is a finished AML job.
type AMLResult struct {
	Plan    AMLPlan
	Dataset string // the world's name: aml-<size>, or the --trans file
	Sim     SimResult
	Rounds  []AMLRound
	Scores  eval.Scores
	// Summary is the report `graphfed sim --scenario aml` prints.
	Summary runreport.Summary
}

// RunAML runs the AML job of spec: it generates the world (or loads
// World.Trans), splits it into bank views on the generated worlds'
// temporal split, gives each bank an agent and an AML learner, and runs
// the job on an embedded server (or Sim.NATSURL). OnRound, if set, hears
// each round as it closes.
func RunAML(ctx context.Context, spec AMLSpec, onRound func(AMLRound)) (AMLResult, error) {
	start := time.Now()
	fail := func(err error) (AMLResult, error) { return AMLResult{}, fmt.Errorf("job: aml: %w", err) }
	sc := spec.Sim
	var noise *uint64
	if spec.Seed != nil {
		sc.Seed, noise = seedOf(spec.Seed)
	}
	log, p := sc.Log, progressOr(spec.Progress)
	sc = resolveSim(sc)
	if sc.Algo == "" {
		sc.Algo = DefaultAMLAlgo
	}
	if sc.Rounds == 0 {
		sc.Rounds = DefaultAMLRounds
	}
	if err := deploy.CheckTaskAlgo(deploy.TaskAML, sc.Algo); err != nil {
		return fail(err)
	}
	sc.Task = deploy.TaskAML
	// The learner and the privacy plan depend on the spec alone: bad
	// settings fail before a world is generated or loaded.
	lc := resolveLearner(spec.Learner, sc.Rounds)
	planned, err := spec.Privacy.forRun(deploy.TaskAML, sc.Algo, privacy.PlannedReleases(sc.Rounds, lc.ExchangeEvery), noise, spec.Out)
	if err != nil {
		return fail(err)
	}
	if spec.World.Dir == "" && spec.Out != "" {
		spec.World.Dir = filepath.Join(spec.Out, "world")
	}
	w, err := spec.World.world(sc.Seed, p, log)
	if err != nil {
		return fail(err)
	}
	defer w.cleanup()
	// Typologies are evaluation labels, like the laundering flag: banks
	// count recall by typology, the job pools it.
	attempts, err := amlworld.LoadPatternsBeside(w.trans)
	if err != nil {
		return fail(err)
	}
	views, err := bank.SplitWorld(w.graph, w.accounts)
	if err != nil {
		return fail(err)
	}
	for i := range spec.SlowFactor {
		if i < 0 || i >= len(views) {
			return fail(fmt.Errorf("a slow factor for bank index %d; the job has banks 0..%d", i, len(views)-1))
		}
	}
	plan := AMLPlan{Algo: sc.Algo, Rounds: sc.Rounds, Banks: len(views), Rows: w.graph.NumEdges(), Accounts: w.graph.NumAccounts()}
	w.graph = nil // from here on only the banks' views are used (and kept in memory)
	final := newFinalBar(views, p)
	// The banks share GOMAXPROCS sets of model work buffers: they train in
	// parallel on every core without holding a set each.
	work := edgegnn.NewWorkers(0)
	plan.Learner = lc
	learners := make([]learner.Learner, len(views))
	ids := make([]string, len(views))
	for i, v := range views {
		d, err := deploy.AMLData(v)
		if err != nil {
			return fail(err)
		}
		if attempts != nil {
			d.Typology, _ = amlworld.MatchTypologies(v.Graph, attempts)
		}
		v.Graph.Compact() // built: trim its arrays, drop its account lookup
		o := deploy.DefaultLearnerOptions()
		o.AML = lc
		o.AML.OnFinalScore, o.AML.Work = final.bank(i), work
		built, err := deploy.BuildLearner(deploy.TaskAML, sc.Algo, deploy.Data{Bank: &d}, o,
			deploy.Party{ID: v.ID, Seed: seeds.Party(sc.Seed, i, seeds.Learner)}, log)
		if err != nil {
			return fail(err)
		}
		l := built.Learner.(*amllearner.Learner) // in memory, unwrapped: its size plans K
		learners[i], ids[i] = l, v.ID
		plan.TrainRows = append(plan.TrainRows, l.TrainSize())
	}
	if sc.LocalEpochs == 0 {
		// Rounds that fit the work: K grows with the banks' data.
		sc.LocalEpochs = deploy.AMLLocalSteps(plan.TrainRows, lc.BatchSize, sc.Rounds)
		log.Info().Int("k", sc.LocalEpochs).Ints("train_rows", plan.TrainRows).Int("batch", lc.BatchSize).Int("rounds", sc.Rounds).
			Msg("aml: local steps per round from the banks' training transactions")
	}
	plan.LocalSteps = sc.LocalEpochs
	plan.Privacy = planned
	if spec.OnPlan != nil {
		spec.OnPlan(plan)
	}
	if spec.Notes != nil && plan.Privacy.NodeTarget > 0 {
		if note, err := NodeTargetPlan(plan.Privacy); err != nil {
			log.Warn().Err(err).Msg("aml: the node target's plan")
		} else {
			fmt.Fprint(spec.Notes, note)
		}
	}
	bar := p.Stage("sim aml "+sc.Algo, sc.Rounds)
	log.Info().Int("banks", len(views)).Int("rows", plan.Rows).Int("accounts", plan.Accounts).Msg("AML world ready")
	sc.Learners, sc.IDs, sc.EvalEvery, sc.SlowFactor, sc.Privacy = learners, ids, spec.EvalEvery, spec.SlowFactor, plan.Privacy
	if sc.InProcess, err = InProcessConns(spec.Conns, sc.NATSURL, len(learners)+2, log); err != nil {
		return fail(err)
	}
	var rounds []AMLRound
	sc.OnRound = func(rc aggregator.RoundClosed, scores map[string]map[string]float64) {
		f1 := math.NaN() // not scored this round (EvalEvery)
		if len(scores) > 0 {
			f1, _, _ = eval.PooledF1(scores, "val_")
		}
		rounds = append(rounds, AMLRound{Close: rc, ValF1: f1})
	}
	sc.OnProgress = func(_ aggregator.RoundClosed, pr deploy.Progress) {
		r := &rounds[len(rounds)-1]
		r.Progress = pr
		bar.Update(int(r.Close.Round), fmt.Sprintf("%s in=%d late=%d val_f1(start)=%.4f %s %s",
			r.Close.Reason, len(r.Close.In), len(r.Close.Late), r.ValF1, runreport.HumanBytes(pr.Bytes),
			progressClaims(pr.NodeEpsilonP90, pr.ClientEpsilon, plan.Privacy)))
		if onRound != nil {
			onRound(*r)
		}
	}
	res, err := RunSim(ctx, sc)
	bar.Finish()
	final.finish()
	out := AMLResult{Plan: plan, Dataset: w.dataset, Sim: res, Rounds: rounds}
	if err != nil {
		return out, fmt.Errorf("job: aml: %w", err)
	}
	if out.Scores, err = eval.Score(res.Agg.Final); err != nil {
		return out, err
	}
	out.Summary = amlSummary(out, sc)
	if spec.Notes != nil && out.Scores.Typology != nil {
		if err := eval.WriteTypologyTable(spec.Notes, out.Scores.Typology); err != nil {
			return out, fmt.Errorf("job: aml: %w", err)
		}
	}
	if spec.Out != "" {
		if err := writeAMLRun(ctx, spec, sc, out, start); err != nil {
			return out, fmt.Errorf("job: aml: %w", err)
		}
	}
	return out, nil
}

// finalBar shows the banks' final evaluation, which at AMLworld scale
// takes a while after the last round, as one bar: seeds scored by every
// bank of those they score in all.
type finalBar struct {
	p     Progress
	done  []int
	total int
	mu    sync.Mutex // banks report from their own goroutines
	bar   Bar
}

func newFinalBar(views []*bank.View, p Progress) *finalBar {
	f := &finalBar{p: p, done: make([]int, len(views))}
	for _, v := range views {
		for e, home := range v.Home {
			if home && v.Split[e] != graph.SplitTrain {
				f.total++
			}
		}
	}
	return f
}

// bank returns bank i's amllearner.Config.OnFinalScore.
func (f *finalBar) bank(i int) func(done, total int) {
	return func(done, _ int) {
		f.mu.Lock()
		f.done[i] = done
		sum := 0
		for _, d := range f.done {
			sum += d
		}
		if f.bar == nil {
			f.bar = f.p.Stage("final evaluation", f.total)
		}
		bar := f.bar
		f.mu.Unlock()
		bar.Update(sum, "seeds scored (every home validation and test transaction)")
	}
}

func (f *finalBar) finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bar != nil {
		f.bar.Finish()
	}
}
