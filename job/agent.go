package job

import (
	"context"
	"fmt"
	"math"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/aml/amllearner"
	"graphfed/deploy"
	"graphfed/privacy"
	"graphfed/runreport"
	"graphfed/telemetry"
)

// AgentSpec is one organisation's agent (`graphfed agent`) on its own
// data directory. Zero fields are unset and take the library's defaults.
type AgentSpec struct {
	Job, ID string // ID "": the bank directory's (task aml)
	Task    string // "": node
	Algo    string // "": deploy.DefaultAlgo(Task); must be the aggregator's
	DataDir string
	Conn    deploy.ConnOptions
	Keyring string
	Durable bool
	Blobs   deploy.BlobOptions
	// SecAgg is the secure-aggregation mode (SecAggAuto, "" too: take
	// part whenever a round announces it and the agent has a keyring and
	// seed to sign with; SecAggOn; SecAggOff).
	SecAgg string
	// LocalEpochs 0: aml deploy.DefaultAMLLocalSteps, else the
	// algorithm's (deploy.DefaultLocalEpochs of DefaultNodeLocalEpochs).
	LocalEpochs int
	// EvalEvery scores every this many rounds; 0: every round for node
	// and aml, the final model only for rec; negative: the final only.
	EvalEvery int
	// PlannedRounds is the job's rounds, over which an AML node target's
	// releases are planned; 0: DefaultAMLRounds.
	PlannedRounds int
	Learner       deploy.LearnerOptions // Seed is the learner's
	Privacy       Privacy               // NoiseSeed, when set, as given
	LedgerPath    string                // a ledger file; "": the job's JetStream ledger
	Metrics       *telemetry.Metrics
	Log           zerolog.Logger
}

// AgentOptions resolves spec into deploy's agent options.
func AgentOptions(spec AgentSpec) (deploy.AgentOptions, error) {
	task, algo := spec.Task, spec.Algo
	if task == "" {
		task = deploy.TaskNode
	}
	if algo == "" {
		algo = deploy.DefaultAlgo(task)
	}
	epochs := spec.LocalEpochs
	switch {
	case epochs != 0:
	case task == deploy.TaskAML:
		epochs = deploy.DefaultAMLLocalSteps
	default:
		epochs = deploy.DefaultLocalEpochs(algo, DefaultNodeLocalEpochs)
	}
	eval := spec.EvalEvery
	if eval == 0 && task == deploy.TaskRec {
		eval = -1
	}
	rounds := spec.PlannedRounds
	if rounds == 0 {
		rounds = DefaultAMLRounds
	}
	learn := spec.Learner
	learn.Dir = spec.DataDir
	if learn.AML.ExchangeEvery == 0 {
		learn.AML.ExchangeEvery = amllearner.DefaultExchangeEvery(learn.AML.Release, rounds)
	}
	learn.AML.OnFinalScore = finalScoreLog(spec.Log)
	sp, err := spec.Privacy.resolve(task, algo, privacy.PlannedReleases(rounds, learn.AML.ExchangeEvery))
	if err != nil {
		return deploy.AgentOptions{}, err
	}
	p, err := sp.options(0)
	if err != nil {
		return deploy.AgentOptions{}, fmt.Errorf("job: privacy: %w", err)
	}
	p.NoiseSeed, p.LedgerPath = spec.Privacy.NoiseSeed, spec.LedgerPath // one party: its seed as given
	sa, err := resolveSecAgg(spec.SecAgg, algo, aggregator.Robust{}, spec.Keyring != "" && spec.Conn.Creds != "")
	if err != nil {
		return deploy.AgentOptions{}, err
	}
	return deploy.AgentOptions{Job: spec.Job, ID: spec.ID, Task: task, Algo: algo, Conn: spec.Conn, Keyring: spec.Keyring, SecAgg: sa,
		Durable: spec.Durable, Blobs: spec.Blobs, Privacy: p, Data: learn, LocalEpochs: epochs, EvalEvery: eval,
		Metrics: spec.Metrics, Log: spec.Log}, nil
}

// RunAgent runs the agent until its job ends and returns its report: the
// rounds it trained, what it rejected and dropped, its data and final
// scores, and what its gate spent and claims.
func RunAgent(ctx context.Context, spec AgentSpec) (runreport.Summary, error) {
	o, err := AgentOptions(spec)
	if err != nil {
		return runreport.Summary{}, fmt.Errorf("agent: %w", err)
	}
	ag, err := deploy.NewAgent(ctx, o)
	if err != nil {
		return runreport.Summary{}, err
	}
	defer ag.Close()
	res, err := ag.Run(ctx)
	if err != nil {
		return runreport.Summary{}, err
	}
	msgs, bytes := ag.Transport().Stats()
	m := map[string]any{"rounds_trained": res.Rounds, "rejects": res.Rejects, "task": o.Task, "client": ag.ID(),
		"conn": ag.ConnCounts(), "inbox": res.Inbox}
	for k, v := range ag.DataStats() {
		m["data_"+k] = v
	}
	for k, v := range ag.Counters() {
		m[k] = v
	}
	for k, v := range res.Final {
		m[k] = v
	}
	sp := ag.Gate().Spent(math.NaN())
	pr := map[string]any{"delta": sp.Delta, "epsilon_client": sp.Client, "accountant": o.Privacy.Accountant}
	if o.Privacy.NodeTarget > 0 {
		pr["target_epsilon"], pr["emb_releases_planned"] = o.Privacy.NodeTarget, o.Privacy.EmbReleases
	}
	if es, err := ag.Gate().Entries(ctx); err == nil {
		kind, _ := privacy.ParseAccountantKind(o.Privacy.Accountant)
		if rep, err := privacy.Audit(es, privacy.AuditOptions{Kind: kind, Delta: sp.Delta}); err == nil {
			pr["channels"], pr["dp_channels"], pr["no_dp_channels"] = runreport.ClaimsMap(runreport.Claims(rep, ClaimParams(SimPrivacy{
				Delta: sp.Delta, Accountant: kind, Budget: privacy.Budget{Epsilon: o.Privacy.BudgetEpsilon},
				ModelSigma: o.Privacy.ModelSigma, GradSigma: o.Privacy.GradSigma, NodeTarget: o.Privacy.NodeTarget})))
		}
	}
	return runreport.Summary{Command: "agent", Algo: o.Algo, Dataset: spec.DataDir, Clients: 1, Rounds: res.Rounds, Seed: int64(o.Data.Seed),
		Metrics: m, Comm: &runreport.Comm{Bytes: bytes, Messages: msgs}, Privacy: pr}, nil
}

// AgentSchema is the model schema HASH:PARAMS of the learner spec builds
// from its data (the aggregator's --schema), and the data's client id;
// it connects to nothing.
func AgentSchema(spec AgentSpec) (schema, client string, o deploy.AgentOptions, err error) {
	if o, err = AgentOptions(spec); err != nil {
		return "", "", o, fmt.Errorf("agent --print-schema: %w", err)
	}
	l, err := deploy.BuildLearner(o.Task, o.Algo, deploy.Data{Dir: o.Data.Dir}, o.Data, deploy.Party{ID: o.ID, Seed: o.Data.Seed}, spec.Log)
	if err != nil {
		return "", "", o, fmt.Errorf("agent --print-schema: %w", err)
	}
	return fmt.Sprintf("%s:%d", l.Learner.SchemaHash(), l.Learner.NumParams()), l.ID, o, nil
}

// finalScoreLog logs a bank's final evaluation every tenth of the way: at
// AMLworld scale it scores hundreds of thousands of transactions after the
// last round, and a silent agent looks hung.
func finalScoreLog(log zerolog.Logger) func(done, total int) {
	last := -1
	return func(done, total int) {
		tenth := done * 10 / max(total, 1)
		if tenth == last {
			return
		}
		last = tenth
		log.Info().Int("scored", done).Int("of", total).Msg("final evaluation")
	}
}
