package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"graphfed/deploy"
	"graphfed/job"
)

// agentFlags are `graphfed agent`'s settings, bound into job.AgentSpec.
type agentFlags struct {
	spec        job.AgentSpec
	tls         tlsFlags
	insecure    bool
	printSchema bool
	noiseSeed   *uint64
	learn       learnerFlags
	priv        privacyFlags
	blobs       blobFlags
	metrics     metricsFlags
}

func newAgentCmd(g *globalFlags) *cobra.Command {
	var a agentFlags
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
			spec := a.bind(g)
			if a.printSchema {
				return printSchema(cmd, g, spec, start)
			}
			if err := requireCredentials("agent", spec.Conn.Creds != "", a.insecure, "--creds SEED --keyring keyring.json", g.logger()); err != nil {
				return err
			}
			live, stopMetrics, err := a.metrics.start(cmd.Context(), g.logger())
			if err != nil {
				return err
			}
			defer stopMetrics()
			spec.Metrics = live
			rep, err := job.RunAgent(cmd.Context(), spec)
			if err != nil {
				return err
			}
			return g.emit(rep, start)
		},
	}
	a.register(cmd)
	for _, n := range []string{"job", "data"} {
		cmd.MarkFlagRequired(n)
	}
	mem = registerMemoryLimit(cmd, 0, "")
	return cmd
}

func (a *agentFlags) register(cmd *cobra.Command) {
	f, s := cmd.Flags(), &a.spec
	f.StringVar(&s.Conn.URL, "nats", "nats://127.0.0.1:4222", "NATS server or cluster URL")
	f.StringVar(&s.Job, "job", "", "job id")
	f.StringVar(&s.Task, "task", deploy.TaskNode, "node, aml or rec: what --data holds")
	f.StringVar(&s.Algo, "algo", "", "the job's algorithm, as the aggregator runs it (default: the task's, see above)")
	f.StringVar(&s.ID, "client", "", "this organisation's client id ([a-z0-9-]{1,64}); --task aml: default the bank directory's")
	f.StringVar(&s.DataDir, "data", "", "the organisation's data directory (see above)")
	f.StringVar(&s.Conn.Creds, "creds", "", "NATS credentials file; an NKey seed (from graphfed keys) also signs every envelope sent")
	f.StringVar(&s.Keyring, "keyring", "", "keyring.json of the job (graphfed keys): verify every envelope's signature")
	f.StringVar(&s.SecAgg, "secagg", job.SecAggAuto, "secure aggregation: auto (take part whenever a round announces it; needs --keyring and --creds), on or off")
	a.tls.register(cmd)
	registerInsecure(cmd, &a.insecure)
	a.blobs.register(cmd)
	a.metrics.register(cmd)
	f.BoolVar(&a.printSchema, "print-schema", false, "print this bank's model schema HASH:PARAMS (the aggregator's --schema) from --task, --data and the learner flags, and exit without connecting")
	f.BoolVar(&s.Durable, "durable", false, "store updates in the job's JetStream update stream (for an aggregator run with --durable)")
	f.Var(unsetUint(&a.noiseSeed), "noise-seed", "seed the privacy noise: reproducible runs for testing only, marked non-private in the ledger")
	f.StringVar(&s.LedgerPath, "ledger", "", "privacy ledger file (fsynced); default: the job's JetStream ledger stream")
	f.IntVar(&s.LocalEpochs, "local-epochs", 0, fmt.Sprintf("local epochs per round (default %d; fedgsp 1, the authors' protocol; aml: local steps K, default %d: on a big world give every bank the same larger K, as sim does)",
		job.DefaultNodeLocalEpochs, deploy.DefaultAMLLocalSteps))
	f.IntVar(&s.EvalEvery, "eval-every", 0, "score the model every this many rounds; 0: every round for node and aml, the final model only for rec; negative: the final model only")
	f.IntVar(&s.PlannedRounds, "planned-rounds", job.DefaultAMLRounds, "aml under --target-epsilon: the job's rounds (the aggregator's --rounds), to plan the embedding releases the target is spread over; releases beyond the plan are refused")
	f.BoolVar(&s.Learner.Rec.Strict, "strict", false, "rec: send no subgraph counts with the hello (aggregator --strict)")
	a.learn.register(f)
	f.Uint64Var(&a.learn.o.Seed, "seed", a.learn.o.Seed, "local randomness seed (dropout, sampling, local tables)")
	a.priv.register(f)
}

// bind is the agent's spec from its flags.
func (a *agentFlags) bind(g *globalFlags) job.AgentSpec {
	s := a.spec
	strict := s.Learner.Rec.Strict
	s.Learner = a.learn.options()
	s.Learner.Rec.Strict = strict
	s.Conn.TLS, s.Blobs, s.Privacy, s.Log = a.tls.files, a.blobs.options(), a.priv.p, g.logger()
	s.Privacy.NoiseSeed = a.noiseSeed
	return s
}

// printSchema prints the model schema of the learner the flags build from
// --data: what the aggregator's --schema must say.
func printSchema(cmd *cobra.Command, g *globalFlags, spec job.AgentSpec, start time.Time) error {
	schema, client, o, err := job.AgentSchema(spec)
	if err != nil {
		return err
	}
	if !g.json {
		_, err := fmt.Fprintln(cmd.OutOrStdout(), schema)
		return err
	}
	return g.emit(Report{Command: "agent --print-schema", Algo: o.Algo, Dataset: spec.DataDir, Clients: 1,
		Metrics: map[string]any{"schema": schema, "task": o.Task, "client": client}}, start)
}
