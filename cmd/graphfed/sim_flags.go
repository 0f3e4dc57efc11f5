package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"graphfed/job"
)

// simFlags are `graphfed sim`'s settings, bound into the job library's
// specs. What a task sets by default (algorithm, rounds, local epochs,
// round timeout, clients, partition) is left unset here (zero) and
// resolved by the library for the task that runs.
type simFlags struct {
	sim                        job.SimConfig
	seed                       *uint64
	conns, out                 string
	dir, scenario, split, part string
	clients                    int
	csbm                       csbmFlags
	learn                      learnerFlags
	priv                       privacyFlags
	robust                     robustFlags
	opt                        serverOptFlags
	async                      asyncFlags
	gsp                        fedgspFlags
	world                      job.AMLWorld
	amlEvalEvery               int
	lightgcn                   string
	validation, edgeVariation  float64
	maxUsers, recEvalEvery     int
	ref                        recFlags
	rp                         job.RecProtocol // Split is --split's
	metrics                    metricsFlags
}

func (s *simFlags) register(cmd *cobra.Command) {
	f, sc := cmd.Flags(), &s.sim
	f.StringVar(&s.dir, "dataset", "", "dataset directory in the TSV layout")
	f.StringVar(&s.scenario, "scenario", "", "generated world instead of --dataset: aml (multi-bank AML, the main job) or csbm")
	f.StringVar(&sc.Algo, "algo", "", "local, fedavg, fedprox, fedper, fedgsp, fedgnn-st or cefedgnn (aml: local, fedavg, fedgnn-st, cefedgnn; --lightgcn: fedavg, lpsfed-bpr, lpsfed); default: fedavg, aml cefedgnn, --lightgcn lpsfed")
	f.IntVar(&s.clients, "clients", 0, fmt.Sprintf("number of clients (default %d)", job.DefaultNodeClients))
	f.StringVar(&s.part, "partition", "", job.PartitionMethods+" (default "+job.DefaultNodePartition+"; --lightgcn: spectral)")
	f.StringVar(&s.split, "split", "", job.SplitHelp+" (default "+job.DefaultNodeSplit+"; --lightgcn: "+job.RecSplitHelp+")")
	f.IntVar(&sc.Rounds, "rounds", 0, fmt.Sprintf("federated rounds (default %d; aml %d; --lightgcn %d)", job.DefaultNodeRounds, job.DefaultAMLRounds, job.DefaultRecRounds))
	f.IntVar(&sc.LocalEpochs, "local-epochs", 0, fmt.Sprintf("local steps per round: CE-FedGNN's K; full-batch epochs for node datasets (default %d, fedgsp 1 as its authors); "+
		"aml: enough for the job to go twice over the median bank's training transactions, at least 32", job.DefaultNodeLocalEpochs))
	f.Var(unsetUint(&s.seed), "seed", "seed for data generation, partitioning and model init (default 1); given, it seeds the privacy noise too: a reproducible simulation, marked non-private")
	f.StringVar(&sc.NATSURL, "nats", "", "external NATS server or cluster URL; default: an embedded server")
	f.StringVar(&s.conns, "conns", "auto", job.ConnsHelp)
	f.BoolVar(&sc.Durable, "durable", false, "durable aggregator: checkpoints in JetStream KV and object store, updates through the job's update stream")
	f.StringVar(&sc.SecAgg, "secagg", job.SecAggAuto, "secure aggregation: auto (on wherever the algorithm's close is a sum: the aggregator sees the banks' sum, never one bank's update), on or off")
	f.IntVar(&sc.SecAggBits, "secagg-bits", 0, "secure aggregation: bits b of a masked word, 2 to 32 (0: the fewest that keep 2^24 steps at the clip, 29–31 up to 30 banks, below the float32 update's size; 32: the least rounding)")
	f.BoolVar(&sc.Secure, "secure", false, "fresh keys, keyring and per-party permissions for the job in a temporary directory; every party signs and verifies (not with --nats)")
	f.StringVar(&s.out, "out", "", "run directory for the JSON summary and per-round CSV")
	f.StringVar(&sc.Job, "job", job.DefaultJobID, "job id")
	f.DurationVar(&sc.RoundTimeout, "round-timeout", 0, fmt.Sprintf("round deadline, with --deadline-factor its floor (default %v; --lightgcn %v)", job.DefaultRoundTimeout, job.DefaultRecRoundTimeout))
	registerDeadlineFlags(cmd, &sc.DeadlineFactor, &sc.DeadlineCap)
	f.IntVar(&sc.Quorum, "quorum", 0, "updates that close a round; 0: every live client")
	f.StringVar(&sc.Staleness.Policy, "staleness", "drop", "late updates: drop, constant or polynomial")
	f.Float64Var(&sc.Staleness.Factor, "stale-factor", 0.5, "constant staleness weight")
	f.Float64Var(&sc.Staleness.A, "stale-a", 0.5, "polynomial staleness exponent a in 1/(1+s)^a")
	s.robust.register(f)
	s.opt.register(f)
	s.csbm.register(cmd)
	s.learn.register(f)
	s.priv.register(f)
	s.gsp.registerServer(cmd)
	s.registerAML(cmd)
	s.registerRec(cmd)
	s.async.register(cmd)
	s.metrics.register(cmd)
}

func (s *simFlags) registerAML(cmd *cobra.Command) {
	f, w := cmd.Flags(), &s.world
	f.IntVar(&w.Banks, "banks", 0, fmt.Sprintf("AML world: banks (one client each; default %d). With many banks a bank sees little of a foreign account's activity, which is what CE-FedGNN's exchange adds", job.DefaultAMLBanks))
	f.StringVar(&w.Size, "size", "", "AML world size: demo (the default: 30k accounts, 300k rows, 1 in 100 laundering), tiny, small or medium")
	f.IntVar(&w.Rows, "world-rows", 0, "AML world: transactions (0: the size's default)")
	f.IntVar(&w.NumAccounts, "world-accounts", 0, "AML world: accounts (0: the size's default)")
	f.Float64Var(&w.IllicitRatio, "illicit-ratio", 0, "AML world: share of laundering transactions (0: the HI preset's 1/900)")
	f.StringVar(&w.Trans, "trans", "", "AML: run on this AMLworld *_Trans.csv (generated or downloaded) instead of generating a world; the banks are the file's")
	f.StringVar(&w.Accounts, "accounts", "", "AML (--trans): the world's accounts file (default: <name>_accounts.csv beside --trans, if present)")
	f.IntVar(&s.amlEvalEvery, "eval-every", 0, "AML: banks score the model every this many rounds (default every round; the final model always)")
}

func (s *simFlags) registerRec(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.lightgcn, "lightgcn", "", "recommendation dataset in the LightGCN layout (train.txt, test.txt): runs --algo fedavg, lpsfed-bpr or lpsfed")
	f.IntVar(&s.recEvalEvery, "rec-eval-every", 0, "recommendation: evaluate every N rounds too (0: final model only)")
	f.IntVar(&s.maxUsers, "max-users", 0, "recommendation: keep only the first N users of the dataset (0: all)")
	f.Float64Var(&s.validation, "validation", 0, "recommendation: tune on a validation split instead: hold out this fraction of each user's training items and evaluate on them (test.txt is not used; 0: train on train.txt, evaluate on test.txt)")
	f.Float64Var(&s.edgeVariation, "edge-variation", 0, fmt.Sprintf("recommendation: spread of interactions across the spectral partition's clients (default %g)", job.DefaultEdgeVariation))
	s.ref.registerReference(f)
	registerRecProtocol(f, &s.rp)
}

// recProtocol is LPSFed's protocol options, --split included.
func (s *simFlags) recProtocol() job.RecProtocol { p := s.rp; p.Split = s.split; return p }

// common is what every task's spec takes from the flags.
func (s *simFlags) common(g *globalFlags) job.SimConfig {
	sc := s.sim
	sc.Robust, sc.Buffer, sc.Log = s.robust.robust(), s.async.buffer, g.logger()
	sc.ServerOpt = s.opt.opt()
	return sc
}
