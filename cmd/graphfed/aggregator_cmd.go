package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"graphfed/aggregator"
	"graphfed/job"
)

// errAggregatorConfig answers the --config FILE that is no more: its
// settings were a subset of the flags, which a job file holds whole.
var errAggregatorConfig = errors.New("aggregator: --config is gone: put these settings in a job file, whose keys are the flags' names " +
	"(graphfed run JOB.yaml; see docs/JOBS.md, and graphfed run --print-defaults --algo ALGO --run aggregator for a complete one)")

func newAggregatorCmd(g *globalFlags) *cobra.Command {
	spec := job.DefaultAggregatorSpec()
	var (
		cfgFile  string
		insecure bool
		rec      recoveryFlags
		blobs    blobFlags
		rf       recFlags
		gsp      fedgspFlags
		mf       metricsFlags
		tlsf     tlsFlags
		contract contractFlags
		mem      *memoryLimit
	)
	cmd := &cobra.Command{
		Use:   "aggregator --nats URL --job ID [--algo ALGO]",
		Short: "Run a job's aggregator against a NATS server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start, log := time.Now(), g.logger()
			if cfgFile != "" {
				return errAggregatorConfig
			}
			if err := mem.apply(cmd, log); err != nil {
				return err
			}
			if err := requireCredentials("aggregator", spec.Conn.Creds != "", insecure, "--creds SEED --keyring keyring.json", log); err != nil {
				return err
			}
			var err error
			if spec.FedGSP, err = gsp.serverConfig(cmd); err != nil {
				return err
			}
			spec.Conn.TLS, spec.Durable, spec.Recovery, spec.Blobs = tlsf.files, rec.durable, rec.options(), blobs.options()
			spec.LPSFed, spec.FreezeRounds = rf.config(spec.Seed), rf.freeze
			spec.Contract, spec.Robust, spec.Progress = contract.k, contract.robust.robust(), cmdProgress{}
			spec.ServerOpt = contract.opt.opt()
			// The metrics are served until the report is written (and
			// --metrics-linger after it).
			var stopMetrics func()
			spec.StartMetrics, stopMetrics = mf.live.Deferred(cmd.Context(), log)
			defer stopMetrics()
			// Stopped by a signal: the report so far is written, then the
			// command fails with the reason.
			rep, err := job.RunAggregator(cmd.Context(), spec, log)
			if stopped := new(*aggregator.StoppedError); err != nil && !errors.As(err, stopped) {
				return err
			}
			if err := g.emit(rep, start); err != nil {
				return err
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Conn.URL, "nats", spec.Conn.URL, "NATS server or cluster URL")
	f.StringVar(&spec.Job, "job", "", "job id ([a-z0-9-]{1,64})")
	f.StringVar(&cfgFile, "config", "", "gone: a job file holds the settings (graphfed run JOB.yaml)")
	f.MarkHidden("config")
	f.StringVar(&spec.Conn.Creds, "creds", "", "NATS credentials file; an NKey seed (from graphfed keys) also signs every envelope sent")
	f.StringVar(&spec.Keyring, "keyring", "", "keyring.json of the job (graphfed keys): verify every envelope's signature")
	f.StringVar(&spec.SecAgg, "secagg", job.SecAggAuto, "secure aggregation: auto (on wherever the algorithm's close is a sum, with --keyring and --creds: the aggregator sees the banks' sum, never one bank's update), on or off")
	tlsf.register(cmd)
	f.BoolVar(&spec.Resume, "resume", false, "continue a job id that ran before (a durable job from its checkpoint; the banks' spent budgets carry over and are stated); without it such a job is refused")
	registerInsecure(cmd, &insecure)
	f.BoolVar(&spec.CreateLedger, "create-ledger", false, "create the job's ledger stream before the job starts (in a permissioned deployment only the aggregator may)")
	rec.register(cmd)
	blobs.register(cmd)
	mf.register(cmd)
	f.StringVar(&spec.Task, "task", "", "node, aml or rec (default: rec for lpsfed and lpsfed-bpr, node otherwise; checks --algo)")
	f.StringVar(&spec.Algo, "algo", spec.Algo, "local, fedavg, fedgnn-st, cefedgnn (node, aml); fedavg, lpsfed-bpr, lpsfed (rec)")
	f.IntVar(&spec.Rounds, "rounds", spec.Rounds, "rounds")
	f.IntVar(&spec.MinClients, "min-clients", spec.MinClients, "clients that must join before round 1")
	f.IntVar(&spec.Quorum, "quorum", spec.Quorum, "updates that close a round; 0: every live client")
	f.DurationVar(&spec.RoundTimeout, "round-timeout", spec.RoundTimeout, "round deadline; with --deadline-factor, its floor")
	registerDeadlineFlags(cmd, &spec.DeadlineFactor, &spec.DeadlineCap)
	f.DurationVar(&spec.FinalWait, "final-wait", 0, "bound on waiting for the clients' final scores (0: 10s)")
	f.StringVar(&spec.Staleness.Policy, "staleness", spec.Staleness.Policy, "late updates: drop, constant or polynomial")
	f.Float64Var(&spec.Staleness.Factor, "stale-factor", spec.Staleness.Factor, "constant staleness weight")
	f.Float64Var(&spec.Staleness.A, "stale-a", spec.Staleness.A, "polynomial staleness exponent")
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "shared model initialisation seed (and the rec reference graph's)")
	f.StringSliceVar(&spec.Clients, "clients", nil, "client ids allowed to join (default: any)")
	f.IntVar(&rf.phi, "phi", spec.LPSFed.Phi, "rec (lpsfed, lpsfed-bpr): kernel length Φ, the agents' --phi")
	rf.registerReference(f)
	gsp.registerServer(cmd)
	contract.register(f)
	cmd.MarkFlagRequired("job")
	mem = registerMemoryLimit(cmd, 0, "")
	return cmd
}
