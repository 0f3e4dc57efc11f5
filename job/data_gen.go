package job

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"graphfed/aml/amlworld"
	"graphfed/aml/worldgen"
	"graphfed/workload/rec"
)

// GenAMLSpec is an AMLworld-format world to generate (`graphfed gen
// aml`): the worldgen preset of Size and Ratio with Banks banks, seeded
// with Seed, written to Out. Start from DefaultGenAMLSpec.
type GenAMLSpec struct {
	Banks       int
	Size, Ratio string // worldgen.ParseSize, worldgen.ParseRatio
	Seed        uint64
	Out         string
	Prefix      string // the files' prefix; "": the preset's (HI-Small)
	// Overrides of the preset; nil: the preset's (zero is a setting).
	IllicitRatio, CrossBankHop, RecruitPool *float64
	Progress                                Progress // nil: none shown
}

// DefaultGenAMLSpec is a tiny HI world of 8 banks in the working
// directory.
func DefaultGenAMLSpec() GenAMLSpec {
	return GenAMLSpec{Banks: 8, Size: "tiny", Ratio: "hi", Seed: 1, Out: "."}
}

// GenAML generates the world and reports what it holds.
func GenAML(ctx context.Context, spec GenAMLSpec) (DataReport, error) {
	sz, err := worldgen.ParseSize(spec.Size)
	if err != nil {
		return DataReport{}, err
	}
	rt, err := worldgen.ParseRatio(spec.Ratio)
	if err != nil {
		return DataReport{}, err
	}
	cfg, err := worldgen.Preset(sz, rt, spec.Seed)
	if err != nil {
		return DataReport{}, err
	}
	cfg.Banks = spec.Banks
	if spec.Prefix != "" {
		cfg.Prefix = spec.Prefix
	}
	for _, o := range []struct {
		to  *float64
		set *float64
	}{{&cfg.IllicitRatio, spec.IllicitRatio}, {&cfg.CrossBankHop, spec.CrossBankHop}, {&cfg.RecruitPool, spec.RecruitPool}} {
		if o.set != nil {
			*o.to = *o.set
		}
	}
	if err := cfg.Validate(); err != nil {
		return DataReport{}, err
	}
	if err := ctx.Err(); err != nil {
		return DataReport{}, err
	}
	bar := progressOr(spec.Progress).Stage("gen aml "+cfg.Prefix, int(cfg.Transactions))
	s, err := worldgen.Generate(cfg, spec.Out, func(done, _ int64) { bar.Update(int(done), "rows") })
	bar.Finish()
	if err != nil {
		return DataReport{}, err
	}
	typ := map[string]int64{}
	att := map[string]int{}
	for t := range s.RowsPerTypology {
		typ[amlworld.Typology(t).String()] = s.RowsPerTypology[t]
		att[amlworld.Typology(t).String()] = s.AttemptsPerTypology[t]
	}
	lo, hi := s.BankEdges[0], s.BankEdges[0]
	bankEdges := map[string]int64{}
	for b, n := range s.BankEdges {
		lo, hi = min(lo, n), max(hi, n)
		bankEdges[s.BankIDs[b]] = n
	}
	return DataReport{Dataset: cfg.Prefix, Clients: cfg.Banks, Metrics: map[string]any{
		"rows":                         s.Rows,
		"accounts":                     s.Accounts,
		"entities":                     s.Entities,
		"banks":                        s.Banks,
		"bank_ids":                     s.BankIDs,
		"bank_edges":                   bankEdges,
		"bank_edge_ratio":              ratio64(hi, lo),
		"laundering_rows":              s.LaunderingRows,
		"laundering_rate":              ratio64(s.LaunderingRows, s.Rows),
		"pattern_rows":                 s.PatternRows,
		"attempts":                     s.Attempts,
		"attempts_per_typology":        att,
		"rows_per_typology":            typ,
		"self_transfer_share":          ratio64(s.SelfTransfers, s.Rows),
		"cross_bank_share":             ratio64(s.CrossBankRows, s.Rows),
		"laundering_cross_bank_share":  ratio64(s.LaunderingCrossBankRows, s.LaunderingRows),
		"pattern_hop_cross_bank_share": ratio64(s.PatternCrossBankRows, s.PatternRows),
		"trans_file":                   s.TransPath,
		"patterns_file":                s.PatternsPath,
		"accounts_file":                s.AccountsPath,
	}}, nil
}

// GenRecSpec is a user–item dataset to generate in the LightGCN layout
// (`graphfed gen rec`): Config (start from rec.DefaultGenConfig; its Name
// is Out's base name) with the pathological Shapes of rec.ParseShapes,
// written to Out.
type GenRecSpec struct {
	Config rec.GenConfig
	Shapes string
	Out    string
}

// DefaultGenRecSpec is rec.DefaultGenConfig without shapes.
func DefaultGenRecSpec() GenRecSpec { return GenRecSpec{Config: rec.DefaultGenConfig()} }

// GenRec generates the dataset, writes it and reports what it holds.
func GenRec(ctx context.Context, spec GenRecSpec) (DataReport, error) {
	cfg, out := spec.Config, spec.Out
	if out == "" {
		return DataReport{}, errors.New("--out DIR is required")
	}
	if err := rec.ParseShapes(spec.Shapes, &cfg.Shapes); err != nil {
		return DataReport{}, fmt.Errorf("--shapes: %w", err)
	}
	cfg.Name = filepath.Base(filepath.Clean(out))
	if err := cfg.Validate(); err != nil {
		return DataReport{}, err
	}
	if err := ctx.Err(); err != nil {
		return DataReport{}, err
	}
	data, err := rec.Generate(cfg)
	if err != nil {
		return DataReport{}, err
	}
	if err := data.WriteLightGCN(out); err != nil {
		return DataReport{}, err
	}
	users := make([]int, data.Users)
	for u := range users {
		users[u] = data.Train.Degree(u)
	}
	s := cfg.Shapes
	return DataReport{Dataset: data.Name, Metrics: map[string]any{
		"users": data.Users, "items": data.Items, "nodes": data.Users + data.Items,
		"train_interactions": data.NumTrain(), "test_interactions": data.NumTest(),
		"user_degree": degreeSummary(users), "item_degree": degreeSummary(data.ItemDegrees()),
		"config": map[string]any{"users": cfg.Users, "items": cfg.Items, "user_tail": cfg.UserTail,
			"min_degree": cfg.MinDegree, "max_degree": cfg.MaxDegree, "item_zipf": cfg.ItemZipf,
			"test_fraction": cfg.TestFraction, "shapes": strings.TrimSpace(spec.Shapes)},
		"shapes": map[string]any{"dup_users": s.DupUsers, "stars": s.Stars, "star_leaves": s.StarLeaves,
			"detached_stars": s.DetachedStars, "hub_items": s.HubItems, "hub_leaves": s.HubLeaves,
			"detached_hubs": s.DetachedHubs, "pendants": s.Pendants, "chain": s.Chain,
			"components": s.Components, "component_users": s.ComponentUsers, "component_items": s.ComponentItems,
			"isolated_users": s.IsolatedUsers, "isolated_items": s.IsolatedItems},
		"train_file": filepath.Join(out, "train.txt"), "test_file": filepath.Join(out, "test.txt"),
	}}, nil
}
