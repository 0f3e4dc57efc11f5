package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"graphfed/aggregator"
	"graphfed/aml/eval"
	"graphfed/bus"
	"graphfed/deploy"
)

// aggregatorFile is the --config file: JSON with the same names as the flags.
type aggregatorFile struct {
	Algo         string   `json:"algo"`
	Rounds       int      `json:"rounds"`
	MinClients   int      `json:"min_clients"`
	Quorum       int      `json:"quorum"`
	RoundTimeout string   `json:"round_timeout"`
	Staleness    string   `json:"staleness"`
	StaleFactor  float64  `json:"stale_factor"`
	StaleA       float64  `json:"stale_a"`
	Seed         uint64   `json:"seed"`
	Clients      []string `json:"clients"`
}

// recFlags are the aggregator's settings of a recommendation job: the
// one definition `aggregator` and `sim --lightgcn` share.
type recFlags struct {
	phi, freeze, refEvery    int
	strict                   bool
	strictUsers, strictItems int
	strictEdges              int
}

// registerReference adds the reference-graph and freezing flags (Φ is
// registered by each command: its help differs).
func (rf *recFlags) registerReference(f *pflag.FlagSet) {
	f.IntVar(&rf.freeze, "freeze-rounds", 2, "rec: first rounds in which nothing is distributed")
	f.IntVar(&rf.refEvery, "ref-every", 0, "rec: rebuild the GNMK reference every N rounds (0: once)")
	f.BoolVar(&rf.strict, "strict", false, "rec: build the reference from the assumed counts below, clients send none")
	f.IntVar(&rf.strictUsers, "strict-users", 5000, "rec strict mode: assumed users per client")
	f.IntVar(&rf.strictItems, "strict-items", 5000, "rec strict mode: assumed items per client")
	f.IntVar(&rf.strictEdges, "strict-edges", 100000, "rec strict mode: assumed interactions per client")
}

// config is the LPSFed strategy's configuration from the flags.
func (rf *recFlags) config(seed uint64) aggregator.LPSFedConfig {
	return aggregator.LPSFedConfig{Phi: rf.phi, Strict: rf.strict, RefEvery: rf.refEvery, Seed: seed,
		StrictStats: aggregator.ReferenceStats{Users: rf.strictUsers, Items: rf.strictItems, Edges: rf.strictEdges}}
}

func newAggregatorCmd(g *globalFlags) *cobra.Command {
	var (
		natsURL, job, cfgFile, creds, keyring, task string
		fc                                          aggregatorFile
		timeout, finalWait, deadlineCap             time.Duration
		deadlineFactor                              float64
		rec                                         recoveryFlags
		blobs                                       blobFlags
		rf                                          recFlags
		gsp                                         fedgspFlags
		createLedger, insecure, resume              bool
		mf                                          metricsFlags
		tlsf                                        tlsFlags
		contract                                    contractFlags
	)
	var mem *memoryLimit
	cmd := &cobra.Command{
		Use:   "aggregator --nats URL --job ID [--algo ALGO] [--config FILE]",
		Short: "Run a job's aggregator against a NATS server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			if err := mem.apply(cmd, g.logger()); err != nil {
				return err
			}
			if err := requireCredentials("aggregator", creds != "", insecure, "--creds SEED --keyring keyring.json", g.logger()); err != nil {
				return err
			}
			if creds != "" && keyring == "" {
				l := g.logger()
				l.Warn().Msg("no --keyring: the envelopes received are not checked for their senders' signatures")
			}
			if cfgFile != "" {
				if err := mergeAggregatorFile(cmd, cfgFile, &fc, &timeout); err != nil {
					return err
				}
			}
			if task == "" {
				task = deploy.TaskNode
				if fc.Algo == aggregator.AlgoLPSFed || fc.Algo == aggregator.AlgoLPSFedBPR {
					task = deploy.TaskRec
				}
			}
			var err error
			round := aggregator.Config{Algo: fc.Algo, Rounds: fc.Rounds, MinClients: fc.MinClients, Quorum: fc.Quorum,
				RoundTimeout: timeout, Staleness: aggregator.Staleness{Policy: fc.Staleness, Factor: fc.StaleFactor, A: fc.StaleA},
				DeadlineFactor: deadlineFactor, DeadlineCap: deadlineCap}
			if task == deploy.TaskRec {
				round.FreezeRounds = rf.freeze
			}
			if round.Personalizes() {
				round.LPSFed = rf.config(fc.Seed)
			}
			if fc.Algo == aggregator.AlgoFedGSP {
				gc, err := gsp.serverConfig(cmd)
				if err != nil {
					return err
				}
				round.FedGSP = gc
			}
			if round.Contract, err = contract.contract(g.logger(), task, fc.Algo, keyring != ""); err != nil {
				return err
			}
			round.Robust = contract.robustRule()
			live, stopMetrics, err := mf.start(cmd.Context(), g.logger())
			if err != nil {
				return err
			}
			defer stopMetrics()
			p := newProgress("aggregator "+job, fc.Rounds)
			agg, err := deploy.NewAggregator(cmd.Context(), deploy.AggregatorOptions{
				Job: job, Task: task, Conn: deploy.ConnOptions{URL: natsURL, Creds: creds, TLS: tlsf.files}, Keyring: keyring,
				Durable: rec.durable, Recovery: rec.options(), Round: round, InitSeed: fc.Seed, Enrol: fc.Clients,
				CreateLedger: createLedger, Resume: resume, FinalWait: finalWait, Log: g.logger(), Blobs: blobs.options(), Metrics: live,
				OnRound: func(rc aggregator.RoundClosed) {
					p.update(int(rc.Round), fmt.Sprintf("%s in=%d late=%d%s", rc.Reason, len(rc.In), len(rc.Late), budgetNote(rc)))
				},
			})
			if err != nil {
				return err
			}
			defer agg.Close()
			res, err := agg.Run(cmd.Context())
			p.finish()
			// Stopped by a signal: the report so far is written, then the
			// command fails with the reason.
			var stopped *aggregator.StoppedError
			if err != nil && !errors.As(err, &stopped) {
				return err
			}
			metrics := map[string]any{"task": task}
			for _, k := range []string{"test_acc", "test_macro_f1", "test_score", "test_at_best_val", "test_f1_illicit", "recall_at_20", "ndcg_at_20"} {
				if v, n := meanScore(res.Final, k); n > 0 {
					metrics[k] = v
				}
			}
			if task == deploy.TaskAML {
				sc, err := eval.Score(res.Final)
				if err != nil {
					return err
				}
				putAMLScores(metrics, sc)
			}
			// test_acc and test_macro_f1 stay in the report for every task
			// (scripts read them; NaN when no client scores them).
			acc, _ := meanScore(res.Final, "test_acc")
			n := len(res.Final)
			f1, _ := meanScore(res.Final, "test_macro_f1")
			deadline := 0
			for _, c := range res.Closes {
				if c.Reason == "deadline" {
					deadline++
				}
			}
			maps.Copy(metrics, map[string]any{"test_acc": acc, "test_macro_f1": f1, "clients_reporting": n,
				"rounds_closed_at_deadline": deadline, "rejects": res.Rejects, "rejects_by": res.RejectsBy, "dropped": res.Dropped,
				"model_sha256": aggregator.ResultDigest(res), "resumed": res.Resumed, "resumed_round": res.ResumedRound, "run": res.Run,
				"flow": res.Flow})
			putRobust(metrics, round.Robust, res)
			if res.Stopped != "" {
				metrics["stopped"] = res.Stopped
			}
			if len(res.Heads) > 0 {
				// Every chain's final head, the aggregator's own included:
				// graphfed audit --expect-heads checks the ledger reaches
				// them, which no record in the ledger can vouch for alone.
				metrics["ledger_heads"] = res.Heads
			}
			if c := agg.Carried(); len(c) > 0 {
				metrics["carried_budgets"] = c
			}
			msgs, bytes := agg.Transport().Stats()
			if err := g.emit(Report{
				Command: "aggregator", Algo: fc.Algo, Clients: n, Rounds: int(res.Rounds), Seed: int64(fc.Seed),
				Metrics: metrics, Comm: &CommReport{Bytes: bytes, Messages: msgs},
			}, start); err != nil {
				return err
			}
			if stopped != nil {
				return stopped
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&natsURL, "nats", "nats://127.0.0.1:4222", "NATS server or cluster URL")
	f.StringVar(&job, "job", "", "job id ([a-z0-9-]{1,64})")
	f.StringVar(&cfgFile, "config", "", "JSON file with the settings below (flags given explicitly win)")
	f.StringVar(&creds, "creds", "", "NATS credentials file; an NKey seed (from graphfed keys) also signs every envelope sent")
	f.StringVar(&keyring, "keyring", "", "keyring.json of the job (graphfed keys): verify every envelope's signature")
	tlsf.register(cmd)
	f.BoolVar(&resume, "resume", false, "continue a job id that ran before (a durable job from its checkpoint; the banks' spent budgets carry over and are stated); without it such a job is refused")
	registerInsecure(cmd, &insecure)
	f.BoolVar(&createLedger, "create-ledger", false, "create the job's ledger stream before the job starts (in a permissioned deployment only the aggregator may)")
	rec.register(cmd)
	blobs.register(cmd)
	mf.register(cmd)
	f.StringVar(&task, "task", "", "node, aml or rec (default: rec for lpsfed and lpsfed-bpr, node otherwise; checks --algo)")
	f.StringVar(&fc.Algo, "algo", "fedavg", "local, fedavg, fedgnn-st, cefedgnn (node, aml); fedavg, lpsfed-bpr, lpsfed (rec)")
	f.IntVar(&fc.Rounds, "rounds", 100, "rounds")
	f.IntVar(&fc.MinClients, "min-clients", 1, "clients that must join before round 1")
	f.IntVar(&fc.Quorum, "quorum", 0, "updates that close a round; 0: every live client")
	f.DurationVar(&timeout, "round-timeout", 30*time.Second, "round deadline; with --deadline-factor, its floor")
	registerDeadlineFlags(cmd, &deadlineFactor, &deadlineCap)
	f.DurationVar(&finalWait, "final-wait", 0, "bound on waiting for the clients' final scores (0: 10s)")
	f.StringVar(&fc.Staleness, "staleness", "drop", "late updates: drop, constant or polynomial")
	f.Float64Var(&fc.StaleFactor, "stale-factor", 0.5, "constant staleness weight")
	f.Float64Var(&fc.StaleA, "stale-a", 0.5, "polynomial staleness exponent")
	f.Uint64Var(&fc.Seed, "seed", 1, "shared model initialisation seed (and the rec reference graph's)")
	f.StringSliceVar(&fc.Clients, "clients", nil, "client ids allowed to join (default: any)")
	f.IntVar(&rf.phi, "phi", 128, "rec (lpsfed, lpsfed-bpr): kernel length Φ, the agents' --phi")
	rf.registerReference(f)
	gsp.registerServer(cmd)
	contract.register(f)
	cmd.MarkFlagRequired("job")
	mem = registerMemoryLimit(cmd, 0, "")
	return cmd
}

func mergeAggregatorFile(cmd *cobra.Command, path string, fc *aggregatorFile, timeout *time.Duration) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("aggregator: config: %w", err)
	}
	var file aggregatorFile
	if err := json.Unmarshal(b, &file); err != nil {
		return fmt.Errorf("aggregator: config %s: %w", path, err)
	}
	set := func(name string, apply func()) {
		if !cmd.Flags().Changed(name) {
			apply()
		}
	}
	if file.Algo != "" {
		set("algo", func() { fc.Algo = file.Algo })
	}
	if file.Rounds != 0 {
		set("rounds", func() { fc.Rounds = file.Rounds })
	}
	if file.MinClients != 0 {
		set("min-clients", func() { fc.MinClients = file.MinClients })
	}
	if file.Quorum != 0 {
		set("quorum", func() { fc.Quorum = file.Quorum })
	}
	if file.Staleness != "" {
		set("staleness", func() { fc.Staleness = file.Staleness })
	}
	if file.StaleFactor != 0 {
		set("stale-factor", func() { fc.StaleFactor = file.StaleFactor })
	}
	if file.StaleA != 0 {
		set("stale-a", func() { fc.StaleA = file.StaleA })
	}
	if file.Seed != 0 {
		set("seed", func() { fc.Seed = file.Seed })
	}
	if len(file.Clients) > 0 {
		set("clients", func() { fc.Clients = file.Clients })
	}
	if file.RoundTimeout != "" {
		d, err := time.ParseDuration(file.RoundTimeout)
		if err != nil {
			return fmt.Errorf("aggregator: config %s: round_timeout: %w", path, err)
		}
		set("round-timeout", func() { *timeout = d })
	}
	return nil
}

// recoveryFlags make the aggregator durable: its state in the job's
// JetStream KV bucket and object store, its updates from the job's update
// stream (docs/DEPLOY.md, "Surviving crashes").
type recoveryFlags struct {
	durable    bool
	replicas   int
	ackWait    time.Duration
	reannounce time.Duration
	leaseTTL   time.Duration
}

func (r *recoveryFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&r.durable, "durable", false, "checkpoint to JetStream and read updates from the job's update stream; a restart resumes the job (agents need --durable too)")
	f.IntVar(&r.replicas, "replicas", 1, "replicas of the update stream, checkpoint bucket and model store when created (3 on a 3-node cluster)")
	f.DurationVar(&r.ackWait, "ack-wait", bus.DefaultUpdateAckWait, "redelivery delay of an update a killed aggregator had not acknowledged")
	f.DurationVar(&r.reannounce, "reannounce", 5*time.Second, "with --durable: announce the open round again after this long without news (0: never)")
	f.DurationVar(&r.leaseTTL, "lease-ttl", aggregator.DefaultLeaseTTL, "with --durable: the job's run lease lapses after this long unrenewed; a second aggregator watches a held lease this long, then refuses (renewed) or takes the job over (lapsed: --resume after a crash)")
}

// options are the durable options of the flags (used with --durable).
func (r *recoveryFlags) options() deploy.DurableOptions {
	o := deploy.DurableOptions{Replicas: r.replicas, AckWait: r.ackWait, Reannounce: r.reannounce, LeaseTTL: r.leaseTTL}
	if o.Reannounce == 0 {
		o.Reannounce = -1 // --reannounce 0: never
	}
	return o
}
