package job

import (
	"context"
	"fmt"
	"path/filepath"

	"graphfed/aml/amlworld"
	"graphfed/aml/bank"
	"graphfed/deploy"
	"graphfed/graph"
	"graphfed/spectral"
	"graphfed/workload/rec"
)

// SplitAMLSpec cuts an AMLworld world into one directory per bank
// (`graphfed split aml`, bank.Write); Lenient skips malformed rows
// (counted) instead of failing.
type SplitAMLSpec struct {
	bank.SplitOptions
	Lenient bool
}

// SplitAML writes the banks' directories and reports their rows and
// accounts.
func SplitAML(ctx context.Context, spec SplitAMLSpec) (DataReport, error) {
	if err := ctx.Err(); err != nil {
		return DataReport{}, err
	}
	opt := spec.SplitOptions
	if spec.Lenient {
		opt.Policy = amlworld.Lenient
	}
	s, err := bank.Write(opt)
	if err != nil {
		return DataReport{}, err
	}
	rows := map[string]int{}
	accounts := map[string]int{}
	for _, b := range s.Banks {
		rows[b.Bank], accounts[b.Bank] = b.Rows, b.Accounts
	}
	return DataReport{Dataset: s.Name, Clients: len(s.Banks), Metrics: map[string]any{
		"rows":                  s.Rows,
		"skipped_rows":          s.Skipped,
		"banks":                 s.Banks,
		"bank_rows":             rows,
		"bank_accounts":         accounts,
		"accounts_without_rows": s.AccountsWithoutRows,
		"split":                 s.Cut,
		"out":                   opt.Out,
	}}, nil
}

// SplitRecSpec cuts a LightGCN dataset into the clients of a federated
// recommendation job (`graphfed split rec`, rec.Split), one LightGCN
// directory per client under Out. Protocol, when its Split is set, gives
// SplitOptions' Holdout and its Partitioning and PartitionSeed (when set)
// theirs, as `graphfed sim --lightgcn` reads them. Partitionings K > 1
// writes partitionings 0..K−1 instead of one, each under
// Out/partitioning-<k>.
type SplitRecSpec struct {
	LightGCN, Out string
	rec.SplitOptions
	Protocol      RecProtocol
	Partitionings int
}

// resolve folds the protocol options into the split options.
func (s SplitRecSpec) resolve() (rec.SplitOptions, error) {
	o := s.SplitOptions
	if s.Protocol.Split != "" {
		h, err := s.Protocol.holdout()
		if err != nil {
			return o, err
		}
		o.Holdout = h
	}
	if s.Protocol.Partitioning != 0 {
		o.Partitioning = s.Protocol.Partitioning
	}
	if s.Protocol.PartitionSeed != nil {
		o.Seed = *s.Protocol.PartitionSeed
	}
	return o, nil
}

// SplitRec writes the clients' directories and reports them.
func SplitRec(ctx context.Context, spec SplitRecSpec) (DataReport, error) {
	d, err := graph.LoadLightGCN(spec.LightGCN)
	if err != nil {
		return DataReport{}, err
	}
	base, err := spec.resolve()
	if err != nil {
		return DataReport{}, fmt.Errorf("split rec: %w", err)
	}
	if spec.Partitionings < 0 || spec.Partitionings > 1 && base.Partitioning != 0 {
		return DataReport{}, fmt.Errorf("split rec: %d partitionings from partitioning %d: give one of them", spec.Partitionings, base.Partitioning)
	}
	ks := []int{base.Partitioning}
	if spec.Partitionings > 1 {
		ks = ks[:0]
		for k := range spec.Partitionings {
			ks = append(ks, k)
		}
	}
	var parts []recPartitioning
	for _, k := range ks {
		if err := ctx.Err(); err != nil {
			return DataReport{}, err
		}
		opt := base
		opt.Partitioning = k
		clients, st, err := rec.Split(d, opt)
		if err != nil {
			return DataReport{}, err
		}
		out := spec.Out
		if len(ks) > 1 {
			out = filepath.Join(spec.Out, PartitioningDir(k))
		}
		if err := rec.WriteClients(out, clients); err != nil {
			return DataReport{}, err
		}
		parts = append(parts, recPartitioning{k: k, out: out, clients: clients, stats: st})
	}
	m := parts[0].report()
	if len(parts) > 1 {
		all := map[string]any{}
		for _, p := range parts {
			r := p.report()
			r["same_client_as_0"] = sameClientShare(parts[0].clients, p.clients, d.Users)
			all[PartitioningDir(p.k)] = r
		}
		m = map[string]any{"partitionings": all}
	}
	m["partition"], m["split"], m["out"] = spec.Partition, base.Holdout.String(), spec.Out
	return DataReport{Dataset: d.Name, Clients: len(parts[0].clients), Metrics: m}, nil
}

// PartitionSpec cuts a node-classification dataset into per-client TSV
// directories for separate agent processes (`graphfed partition`): the
// dataset (LoadNodeDataset), resplit (ResplitDataset) and
// partitioned (PartitionDataset) under Seed.
type PartitionSpec struct {
	Dataset, Scenario string
	CSBM              graph.CSBMConfig
	Split             string
	Clients           int
	Method            string
	Out               string
	Seed              uint64
}

// DefaultPartitionSpec is 3 Louvain clients of the dataset's own split.
func DefaultPartitionSpec() PartitionSpec {
	return PartitionSpec{Split: "public", Clients: 3, Method: "louvain", Seed: 1}
}

// PartitionResult is what Partition wrote: the report and the partition's
// shape.
type PartitionResult struct {
	DataReport
	Stats graph.PartitionSummary
}

// Partition writes Out/<client id> per client.
func Partition(ctx context.Context, spec PartitionSpec) (PartitionResult, error) {
	d, name, err := LoadNodeDataset(spec.Dataset, spec.Scenario, spec.CSBM, spec.Seed)
	if err != nil {
		return PartitionResult{}, err
	}
	if d, err = ResplitDataset(d, spec.Split, spec.Seed); err != nil {
		return PartitionResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return PartitionResult{}, err
	}
	cgs, err := PartitionDataset(d, spec.Clients, spec.Method, spec.Seed)
	if err != nil {
		return PartitionResult{}, err
	}
	for i, cg := range cgs {
		// The dataset stays in the name: a FedGSP agent picks its preset by it.
		cg.Data.Name = name + "/" + deploy.ClientID(i)
		if err := graph.WriteTSV(filepath.Join(spec.Out, deploy.ClientID(i)), cg.Data); err != nil {
			return PartitionResult{}, err
		}
	}
	ps := graph.PartitionStats(cgs)
	return PartitionResult{Stats: ps, DataReport: DataReport{Dataset: name, Clients: spec.Clients, Metrics: map[string]any{
		"min_nodes": ps.MinNodes, "max_nodes": ps.MaxNodes, "cross_share": ps.CrossShare, "out": spec.Out}}}, nil
}

// DefaultSplitRecSpec is 4 clients of a spectral partition, as `graphfed
// sim --lightgcn` cuts them, with seed 1.
func DefaultSplitRecSpec() SplitRecSpec {
	return SplitRecSpec{SplitOptions: rec.SplitOptions{Clients: 4, Partition: rec.PartitionSpectral,
		EdgeVariation: spectral.DefaultEdgeVariation, Seed: 1}}
}
