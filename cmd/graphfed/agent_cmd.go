package main

import (
	"math"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/agent"
	"graphfed/aml/amllearner"
	"graphfed/deploy"
	"graphfed/fedgsp"
	"graphfed/job"
	"graphfed/privacy"
	"graphfed/runreport"
)

// agentFlags are `graphfed agent`'s settings beyond the privacy flags.
type agentFlags struct {
	task, algo, data, client string
	natsURL, job, creds      string
	tls                      tlsFlags
	keyring, ledger          string
	durable, insecure        bool
	printSchema              bool
	epochs, evalEvery        int
	plannedRounds            int
	noiseSeed                uint64
	gradSigma, embSigma      float64
	learn                    deploy.LearnerOptions
	multi                    multiGNNFlags // aml
	blobs                    blobFlags
	metrics                  metricsFlags
}

// Defaults of `graphfed agent` that differ by task: an AML bank takes
// K = 32 local steps per round (as `graphfed sim --scenario aml`), others 5.
const agentDefaultEpochs = 5

func newAgentCmd(g *globalFlags) *cobra.Command {
	a := agentFlags{learn: deploy.DefaultLearnerOptions()}
	var priv privacyFlags
	var mem *memoryLimit
	cmd := &cobra.Command{
		Use:   "agent --nats URL --job ID --task node|aml|rec --data DIR [--client ID] [--algo ALGO]",
		Short: "Run one organisation's agent against a NATS server",
		Long: `Run one organisation's agent on its own data directory:
  --task node  a graph in the TSV layout (graphfed partition), --algo ` + strings.Join(deploy.TSVAlgorithms(), ", ") + `
  --task aml   a bank directory (graphfed split aml): DIR/bank-<id>; the client id is the bank's,
               and under cefedgnn or fedgnn-st boundary embeddings go straight to the neighbouring banks
  --task rec   one client's LightGCN directory (graphfed split rec), --algo lpsfed, lpsfed-bpr or fedavg
--algo must be the aggregator's (default: fedavg for node, cefedgnn for aml, lpsfed for rec).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			if err := mem.apply(cmd, g.logger()); err != nil {
				return err
			}
			if a.printSchema {
				return a.schema(cmd, g, priv)
			}
			if err := requireCredentials("agent", a.creds != "", a.insecure, "--creds SEED --keyring keyring.json", g.logger()); err != nil {
				return err
			}
			o := a.options(cmd, priv, g.logger())
			live, stopMetrics, err := a.metrics.start(cmd.Context(), g.logger())
			if err != nil {
				return err
			}
			defer stopMetrics()
			o.Metrics = live
			ag, err := deploy.NewAgent(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer ag.Close()
			res, err := ag.Run(cmd.Context())
			if err != nil {
				return err
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
			pr := map[string]any{"delta": sp.Delta, "epsilon_client": sp.Client, "accountant": priv.accountant}
			if o.Privacy.NodeTarget > 0 {
				pr["target_epsilon"], pr["emb_releases_planned"] = o.Privacy.NodeTarget, o.Privacy.EmbReleases
			}
			if es, err := ag.Gate().Entries(cmd.Context()); err == nil {
				kind, _ := privacy.ParseAccountantKind(priv.accountant)
				if rep, err := privacy.Audit(es, privacy.AuditOptions{Kind: kind, Delta: sp.Delta}); err == nil {
					pr["channels"], pr["dp_channels"], pr["no_dp_channels"] = runreport.ClaimsMap(runreport.Claims(rep, claimParams(job.SimPrivacy{
						Delta: sp.Delta, Accountant: kind, Budget: privacy.Budget{Epsilon: o.Privacy.BudgetEpsilon},
						ModelSigma: o.Privacy.ModelSigma, GradSigma: o.Privacy.GradSigma, NodeTarget: o.Privacy.NodeTarget})))
				}
			}
			return g.emit(Report{Command: "agent", Algo: o.Algo, Dataset: a.data, Clients: 1, Rounds: res.Rounds, Seed: int64(a.learn.Seed),
				Metrics: m, Comm: &CommReport{Bytes: bytes, Messages: msgs}, Privacy: pr}, start)
		},
	}
	a.register(cmd)
	priv.register(cmd)
	for _, n := range []string{"job", "data"} {
		cmd.MarkFlagRequired(n)
	}
	mem = registerMemoryLimit(cmd, 0, "")
	return cmd
}

func (a *agentFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	l := &a.learn
	f.StringVar(&a.natsURL, "nats", "nats://127.0.0.1:4222", "NATS server or cluster URL")
	f.StringVar(&a.job, "job", "", "job id")
	f.StringVar(&a.task, "task", deploy.TaskNode, "node, aml or rec: what --data holds")
	f.StringVar(&a.algo, "algo", "", "the job's algorithm, as the aggregator runs it (default: the task's, see above)")
	f.StringVar(&a.client, "client", "", "this organisation's client id ([a-z0-9-]{1,64}); --task aml: default the bank directory's")
	f.StringVar(&a.data, "data", "", "the organisation's data directory (see above)")
	f.StringVar(&a.creds, "creds", "", "NATS credentials file; an NKey seed (from graphfed keys) also signs every envelope sent")
	f.StringVar(&a.keyring, "keyring", "", "keyring.json of the job (graphfed keys): verify every envelope's signature")
	a.tls.register(cmd)
	registerInsecure(cmd, &a.insecure)
	a.blobs.register(cmd)
	a.metrics.register(cmd)
	f.BoolVar(&a.printSchema, "print-schema", false, "print this bank's model schema HASH:PARAMS (the aggregator's --schema) from --task, --data and the learner flags, and exit without connecting")
	f.BoolVar(&a.durable, "durable", false, "store updates in the job's JetStream update stream (for an aggregator run with --durable)")
	f.Uint64Var(&a.noiseSeed, "noise-seed", 0, "seed the privacy noise: reproducible runs for testing only, marked non-private in the ledger")
	f.StringVar(&a.ledger, "ledger", "", "privacy ledger file (fsynced); default: the job's JetStream ledger stream")
	f.Float64Var(&a.gradSigma, "grad-sigma", agent.DefaultGradSigma, "σ2 on gradient estimators (cefedgnn, fedgnn-st)")
	f.Float64Var(&a.embSigma, "emb-sigma", agent.DefaultEmbSigma, "σ0 on normalized boundary embeddings (cefedgnn, fedgnn-st)")
	f.IntVar(&a.epochs, "local-epochs", agentDefaultEpochs, "local epochs per round (fedgsp: default 1, the authors' protocol; local steps K for aml; default 32 there: on a big world give every bank the same larger K, as sim does: enough steps for the job to go twice over the median bank's training transactions)")
	f.IntVar(&a.evalEvery, "eval-every", 0, "score the model every this many rounds; 0: every round for node and aml, the final model only for rec; negative: the final model only")
	f.Uint64Var(&l.Seed, "seed", l.Seed, "local randomness seed (dropout, sampling, local tables)")
	// node
	f.StringVar(&l.Node.Model, "model", l.Node.Model, "node: gcn or sage")
	f.IntVar(&l.Node.Hidden, "hidden", l.Node.Hidden, "node: hidden units")
	f.Float64Var(&l.Node.LR, "lr", l.Node.LR, "node: Adam learning rate")
	f.Float64Var(&l.Node.WeightDecay, "weight-decay", l.Node.WeightDecay, "node: L2 weight decay")
	f.Float64Var(&l.Node.Dropout, "dropout", l.Node.Dropout, "node: dropout probability")
	f.Float64Var(&l.Node.Prox, "mu", deploy.DefaultProx, "node (fedprox): proximal weight μ")
	f.StringVar(&l.FedGSP.Preset, "fedgsp-preset", "auto", "node (fedgsp): the spectral model's settings, auto (by the data's name, else its train nodes' homophily), "+strings.Join(fedgsp.PresetNames(), ", "))
	f.Float64("desc-sigma", agent.DefaultDescriptorSigma, "node (fedgsp): Gaussian σ on the descriptor rows, released once")
	// aml, as `graphfed sim --scenario aml`
	f.StringVar(&l.AML.Kind, "gnn", l.AML.Kind, "aml: message passing, gin, sage or gcn")
	a.multi.register(f, "aml: ", federatedNote)
	f.IntVar(&l.AML.BatchSize, "batch", l.AML.BatchSize, "aml: seed transactions per local step")
	f.IntVar(&l.AML.Hidden, "aml-hidden", l.AML.Hidden, "aml: hidden units of the transaction GNN")
	f.Float64Var(&l.AML.LR, "aml-lr", l.AML.LR, "aml: Adam learning rate")
	f.StringVar(&l.AML.Opt, "aml-opt", l.AML.Opt, "aml: optimizer, adam or cefed (Algorithm 1: G ← (1−β)G + β∇, W ← W − ηG, sharing G under cefedgnn and fedgnn-st); default adam")
	f.Float64Var(&l.AML.Beta, "aml-beta", l.AML.Beta, "aml (--aml-opt cefed): moving-average rate β of the gradient estimator (fedgnn-st: 1)")
	f.Float64Var(&l.AML.Eta, "aml-eta", l.AML.Eta, "aml (--aml-opt cefed): step size η")
	f.IntSliceVar(&l.AML.FanOut, "fanout", l.AML.FanOut, "aml: neighbours sampled per node at each layer")
	f.IntVar(&l.AML.ExchangeEvery, "emb-every", 0, "aml (cefedgnn, fedgnn-st): release boundary embeddings every this many rounds. 0: every round for hidden layers, 3 releases over --planned-rounds for --emb-release features")
	f.StringVar(&l.AML.Release, "emb-release", amllearner.DefaultRelease, "aml (cefedgnn, fedgnn-st): what a boundary account's release carries: hidden (its per-layer estimates), features (layer 0: its structural features as its own bank computes them) or all (both); every bank of a job must use the same value")
	f.IntVar(&l.AML.ReleaseDims, "emb-dims", l.AML.ReleaseDims, "aml (cefedgnn, fedgnn-st): release this many coordinates of each layer's boundary estimate (its projection on a basis all banks derive alike) instead of all --aml-hidden; every bank of a job must use the same value. 0: all")
	f.Float64Var(&l.AML.PoolWeight, "emb-pool-weight", amllearner.DefaultPoolWeight, "aml (cefedgnn, fedgnn-st): least weight of a foreign account's newest release in the running mean of its releases this bank reads (the n-th enters with max(1/n, this)); 1 reads the latest release only")
	f.IntVar(&a.plannedRounds, "planned-rounds", amlDefaultRounds, "aml under --target-epsilon: the job's rounds (the aggregator's --rounds), to plan the embedding releases the target is spread over; releases beyond the plan are refused")
	f.Float64Var(&l.AML.Gamma, "gamma", l.AML.Gamma, "aml (cefedgnn): moving-average rate γ of the per-layer boundary embedding estimators (fedgnn-st: 1)")
	// rec, as `graphfed sim --lightgcn`
	r := &l.Rec
	f.IntVar(&r.Phi, "phi", r.Phi, "rec: low-pass cut-off Φ, eigenpairs of the client graph (the aggregator's --phi)")
	f.Uint64Var(&r.EigenSeed, "eigen-seed", r.EigenSeed, "rec: eigensolver seed")
	f.BoolVar(&r.Strict, "strict", r.Strict, "rec: send no subgraph counts with the hello (aggregator --strict)")
	f.IntVar(&r.Model.Dim, "emb-dim", r.Model.Dim, "rec: embedding width d")
	f.IntVar(&r.Model.BatchSize, "rec-batch", r.Model.BatchSize, "rec: positive interactions per step")
	f.IntVar(&r.Model.Negatives, "negatives", r.Model.Negatives, "rec: sampled negatives per positive")
	f.IntVar(&r.Model.PoolHidden, "pool-hidden", r.Model.PoolHidden, "rec: hidden width of the pooling MLP (0: one affine map)")
	f.IntVar(&r.Model.PredHidden, "pred-hidden", r.Model.PredHidden, "rec: hidden width of the predictive MLP (0: one affine map)")
	f.Float64Var(&r.Model.LR, "rec-lr", r.Model.LR, "rec: RMSProp learning rate")
	f.Float64Var(&r.Model.Tau, "tau", r.Model.Tau, "rec: BC-loss temperature τ")
	f.Float64Var(&r.Model.Omega, "omega", r.Model.Omega, "rec: weight ω of the server's margin (Eq. 15)")
	f.Float64Var(&r.Model.Gamma, "margin-gamma", r.Model.Gamma, "rec: margin strength γ (Eq. 8)")
	f.BoolVar(&r.Model.MarginFallback, "margin-fallback", r.Model.MarginFallback, "rec: ArcFace's fallback logit where Eq. 8's guard binds")
	f.IntVar(&r.Model.EvalUsers, "eval-users", r.Model.EvalUsers, "rec: test users ranked, a fixed seeded sample (0: all)")
}

// options turns the flags into deploy's agent options; everything else
// (learner, connection, signing, ledger, gate, durability) is deploy's.
func (a *agentFlags) options(cmd *cobra.Command, priv privacyFlags, log zerolog.Logger) deploy.AgentOptions {
	fl := cmd.Flags()
	algo := a.algo
	if algo == "" {
		algo = deploy.DefaultAlgo(a.task)
	}
	epochs := agentLocalEpochs(a.task, algo, a.epochs, fl.Changed("local-epochs"))
	eval := a.evalEvery
	if eval == 0 && a.task == deploy.TaskRec {
		eval = -1
	}
	p := priv.options(cmd)
	if fl.Changed("noise-seed") {
		seed := a.noiseSeed
		p.NoiseSeed = &seed
	}
	p.LedgerPath = a.ledger
	if a.learn.AML.ExchangeEvery == 0 {
		a.learn.AML.ExchangeEvery = amllearner.DefaultExchangeEvery(a.learn.AML.Release, a.plannedRounds)
	}
	if priv.target > 0 {
		p.NodeTarget, p.EmbReleases = priv.target, privacy.PlannedReleases(a.plannedRounds, a.learn.AML.ExchangeEvery)
	}
	learn := a.learn
	learn.Dir = a.data
	learn.AML.OnFinalScore = finalScoreLog(log)
	learn.AML.Ports, learn.AML.TimeDeltas, learn.AML.EgoIDs = a.multi.ports(), a.multi.timeDeltas(), a.multi.egoIDs()
	return deploy.AgentOptions{Job: a.job, ID: a.client, Task: a.task, Algo: algo,
		Conn: deploy.ConnOptions{URL: a.natsURL, Creds: a.creds, TLS: a.tls.files}, Keyring: a.keyring, Durable: a.durable,
		Blobs: a.blobs.options(), Privacy: p, Data: learn, LocalEpochs: epochs, EvalEvery: eval, Log: log}
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

// agentLocalEpochs is an agent's local epochs per round: the given ones,
// else the task's and algorithm's default (aml: amlDefaultK; fedgsp:
// deploy.FedGSPLocalEpochs; otherwise the flag's default, given).
func agentLocalEpochs(task, algo string, given int, changed bool) int {
	switch {
	case changed:
		return given
	case task == deploy.TaskAML:
		return amlDefaultK
	}
	return deploy.DefaultLocalEpochs(algo, given)
}
