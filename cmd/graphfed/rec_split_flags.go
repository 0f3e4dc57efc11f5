package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"graphfed/job"
	"graphfed/workload/rec"
)

// recSplitHelp documents --split for a recommendation dataset.
const recSplitHelp = "lightgcn (the dataset's train.txt/test.txt, the default) or random:TRAIN,VAL,TEST " +
	"(LPSFed's random:0.8,0.1,0.1: train and test pooled, every user's items split at random under --split-seed; " +
	"with a validation share the best validation round is selected)"

// recSplitFlags are LPSFed's protocol options `graphfed split rec` and
// `graphfed sim --lightgcn` share (issue 32): the holdout's seed and which
// spectral partitioning (--split itself is each command's).
type recSplitFlags struct {
	splitSeed     uint64
	partitioning  int
	partitionSeed *uint64
}

func (r *recSplitFlags) register(f *pflag.FlagSet) {
	f.Uint64Var(&r.splitSeed, "split-seed", 1, "recommendation: seed of --split random's per-user shuffles (fixed across runs and partitionings)")
	f.IntVar(&r.partitioning, "partitioning", 0, "recommendation: which spectral partitioning: 0 matches clusters to the ±edge-variation targets by size, k > 0 by a permutation seeded by k (distinct partitionings of one graph)")
	f.Var(unsetUint(&r.partitionSeed), "partition-seed", "recommendation: seed of the partition's eigensolver (default --seed); fix it to run several seeds on one partitioning (split rec's --seed)")
}

// holdout parses a --split spec with the flags' seed.
func (r *recSplitFlags) holdout(spec string) (rec.Holdout, error) {
	h, err := rec.ParseHoldout(spec)
	if err != nil {
		return rec.Holdout{}, fmt.Errorf("--split: %w", err)
	}
	h.Seed = r.splitSeed
	return h, nil
}

// recSpec binds sim's flags into a recommendation job's spec (Settings,
// Changed and Progress are the caller's).
func (s *simFlags) recSpec(sc job.SimConfig) (job.RecSpec, error) {
	h, err := s.recSplit.holdout(s.split)
	if err != nil {
		return job.RecSpec{}, err
	}
	lo := s.learn.options()
	lo.Rec.Strict = s.ref.strict
	return job.RecSpec{Sim: sc, Conns: s.conns, Dir: s.lightgcn, Clients: s.clients, Partition: s.part,
		Validation: s.validation, MaxUsers: s.maxUsers, EdgeVariation: s.edgeVariation, EvalEvery: s.recEvalEvery,
		Holdout: h, Partitioning: s.recSplit.partitioning, PartitionSeed: s.recSplit.partitionSeed,
		Learner: lo.Rec, Server: s.ref.config(0), FreezeRounds: s.ref.freeze, Privacy: s.priv.p, Seed: s.seed,
		Out: s.out}, nil
}
