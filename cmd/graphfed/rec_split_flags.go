package main

import (
	"github.com/spf13/pflag"

	"graphfed/job"
)

// registerRecProtocol adds the LPSFed protocol flags `graphfed split rec`
// and `graphfed sim --lightgcn` share (--split is each command's).
func registerRecProtocol(f *pflag.FlagSet, p *job.RecProtocol) {
	f.Uint64Var(&p.SplitSeed, "split-seed", 1, "recommendation: seed of --split random's per-user shuffles (fixed across runs and partitionings)")
	f.IntVar(&p.Partitioning, "partitioning", 0, "recommendation: which spectral partitioning: 0 matches clusters to the edge targets by size, k > 0 by a permutation seeded by k")
	f.Var(unsetUint(&p.PartitionSeed), "partition-seed", "recommendation: seed of the partition's eigensolver (default --seed): fix it to run several seeds on one partitioning")
}
