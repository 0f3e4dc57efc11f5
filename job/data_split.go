package job

import (
	"context"
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
// directory per client under Out.
type SplitRecSpec struct {
	LightGCN, Out string
	rec.SplitOptions
}

// SplitRec writes the clients' directories and reports them.
func SplitRec(ctx context.Context, spec SplitRecSpec) (DataReport, error) {
	d, err := graph.LoadLightGCN(spec.LightGCN)
	if err != nil {
		return DataReport{}, err
	}
	if err := ctx.Err(); err != nil {
		return DataReport{}, err
	}
	clients, st, err := rec.Split(d, spec.SplitOptions)
	if err != nil {
		return DataReport{}, err
	}
	if err := rec.WriteClients(spec.Out, clients); err != nil {
		return DataReport{}, err
	}
	per := map[string]any{}
	for _, c := range clients {
		per[c.ID] = map[string]any{"users": c.Data.Users, "items": c.Data.Items, "train": c.Data.Train.NNZ(),
			"test": c.Data.Test.NNZ(), "test_dropped": c.TestDropped}
	}
	return DataReport{Dataset: d.Name, Clients: len(clients), Metrics: map[string]any{"per_client": per, "moved": st.Moved,
		"no_train_users": st.NoTrainUsers, "partition": spec.Partition, "out": spec.Out}}, nil
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
