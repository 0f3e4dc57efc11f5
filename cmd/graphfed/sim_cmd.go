package main

import (
	"math"
	"time"

	"github.com/spf13/cobra"

	"graphfed/job"
	"graphfed/jobfile"
	"graphfed/runreport"
)

func newSimCmd(g *globalFlags) *cobra.Command {
	var s simFlags
	var mem *memoryLimit
	cmd := &cobra.Command{
		Use:   "sim (--dataset DIR | --scenario aml|csbm | --lightgcn DIR) [--algo ALGO] [--clients N] [--rounds R]",
		Short: "Run an aggregator and N agents in one process on an embedded (or --nats) server",
		RunE: func(cmd *cobra.Command, _ []string) error {
			mem.defaultFor(simMemoryLimitFor(max(s.clients, job.DefaultNodeClients)))
			if err := mem.apply(cmd, g.logger()); err != nil {
				return err
			}
			live, stopMetrics, err := s.metrics.start(cmd.Context(), g.logger())
			if err != nil {
				return err
			}
			defer stopMetrics()
			s.sim.Metrics = live
			return runSim(cmd, g, &s)
		},
	}
	mem = registerMemoryLimit(cmd, simMemoryLimit, "the 5M-row 8-bank AML job then stays under 3 GiB of RSS with room for the GC (a live heap near the limit makes the GC run continuously: raise it for bigger worlds); 480 KiB more per client beyond that, up to 7 GiB, for the many-party jobs")
	s.register(cmd)
	return cmd
}

// runSim binds the flags into the task's spec (aml with --scenario aml,
// recommendation with --lightgcn, node classification otherwise), runs
// it in the job library and prints its summary.
func runSim(cmd *cobra.Command, g *globalFlags, s *simFlags) error {
	start := time.Now()
	ctx, sc := cmd.Context(), s.common(g)
	slow, err := s.async.slowFactors(math.MaxInt) // the library checks them against the clients
	if err != nil {
		return err
	}
	settings, changed := jobfile.Settings(cmd.Flags())
	var sum runreport.Summary
	switch {
	case s.scenario == "aml":
		spec := job.AMLSpec{Sim: sc, Conns: s.conns, Out: s.out, World: s.world, EvalEvery: s.amlEvalEvery,
			Learner: s.learn.options().AML, Privacy: s.priv.p, Seed: s.seed, SlowFactor: slow,
			Progress: cmdProgress{}, Notes: g.humanOut(), Settings: settings, Changed: changed}
		res, err := job.RunAML(ctx, spec, nil)
		if err != nil {
			return err
		}
		sum = res.Summary
	case s.lightgcn != "":
		lo := s.learn.options()
		lo.Rec.Strict = s.ref.strict
		spec := job.RecSpec{Sim: sc, Conns: s.conns, Dir: s.lightgcn, Clients: s.clients, Partition: s.part,
			Validation: s.validation, MaxUsers: s.maxUsers, EdgeVariation: s.edgeVariation, EvalEvery: s.recEvalEvery,
			Learner: lo.Rec, Server: s.ref.config(0), FreezeRounds: s.ref.freeze, Privacy: s.priv.p, Seed: s.seed,
			Protocol: s.recProtocol(), Out: s.out, Settings: settings, Changed: changed, Progress: cmdProgress{}}
		res, err := job.RunRec(ctx, spec)
		if err != nil {
			return err
		}
		sum = res.Summary
	default:
		lo := s.learn.options()
		spec := job.NodeSpec{Sim: sc, Conns: s.conns, Learner: &lo, FedGSPServer: s.gsp.server, FedGSPSelect: s.gsp.sel, Privacy: s.priv.p,
			Data: job.NodeData{Dir: s.dir, Scenario: s.scenario, CSBM: s.csbm.cfg, Split: s.split, Clients: s.clients, Partition: s.part},
			Seed: s.seed, SlowFactor: slow, Out: s.out, Settings: settings, Changed: changed, Progress: cmdProgress{}}
		res, err := job.RunNode(ctx, spec)
		if err != nil {
			return err
		}
		sum = res.Summary
	}
	return g.emit(sum, start)
}
