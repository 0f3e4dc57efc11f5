package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"graphfed/workload/rec"
)

// newGenRecCmd is `graphfed gen rec`: a heavy-tailed user–item dataset in
// the LightGCN layout, optionally with the pathological shapes of
// spectral's property test.
func newGenRecCmd(g *globalFlags) *cobra.Command {
	d := rec.DefaultGenConfig()
	var (
		cfg    = d
		out    string
		shapes string
	)
	cmd := &cobra.Command{
		Use:   "rec --users N --items M --seed S --out DIR [--user-tail a] [--item-zipf s] [--shapes LIST]",
		Short: "Generate a user–item recommendation dataset in the LightGCN layout (train.txt, test.txt)",
		Long: `Generate a synthetic implicit-feedback user–item dataset in the LightGCN
layout (DIR/train.txt and DIR/test.txt), readable by sim --lightgcn and
data stats --lightgcn. User degrees follow a Pareto tail (--user-tail, the
tail index: smaller is heavier; --min-degree), item popularity a Zipf law
(--item-zipf), and --test-fraction of each user's items is held out as
test interactions. User and item ids are shuffled.

--shapes adds the structures of the spectral solver's property test, each
with nodes of its own (so the dataset has more users and items than
--users and --items): a comma-separated list of
  dup=N                  N users copying another user's items
  stars=N:LEAVES         N users with LEAVES items of their own each
  detached-stars=N       of those, N not tied to the rest of the graph
  hubs=N:LEAVES          N items with LEAVES single-item users each
  detached-hubs=N        of those, N not tied to the rest
  pendants=N:CHAIN       N identical chains of CHAIN edges off one user
  components=N:UxI       N copies of one small U-user, I-item graph
  isolated-users=N       users without items
  isolated-items=N       items without users
A shape without a value takes the default shown ("dup" is dup=30);
"all" adds every shape with its default. Output is determined by the
flags, the seed included.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			if out == "" {
				return fmt.Errorf("gen rec: --out DIR is required")
			}
			if err := rec.ParseShapes(shapes, &cfg.Shapes); err != nil {
				return fmt.Errorf("gen rec: --shapes: %w", err)
			}
			cfg.Name = filepath.Base(filepath.Clean(out))
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("gen rec: %w", err)
			}
			data, err := rec.Generate(cfg)
			if err != nil {
				return fmt.Errorf("gen rec: %w", err)
			}
			if err := data.WriteLightGCN(out); err != nil {
				return fmt.Errorf("gen rec: %w", err)
			}
			users := make([]int, data.Users)
			for u := range users {
				users[u] = data.Train.Degree(u)
			}
			s := cfg.Shapes
			return g.emit(Report{
				Command: "gen rec", Dataset: data.Name, Seed: int64(cfg.Seed),
				Metrics: map[string]any{
					"users": data.Users, "items": data.Items, "nodes": data.Users + data.Items,
					"train_interactions": data.NumTrain(), "test_interactions": data.NumTest(),
					"user_degree": degreeSummary(users), "item_degree": degreeSummary(data.ItemDegrees()),
					"config": map[string]any{"users": cfg.Users, "items": cfg.Items, "user_tail": cfg.UserTail,
						"min_degree": cfg.MinDegree, "max_degree": cfg.MaxDegree, "item_zipf": cfg.ItemZipf,
						"test_fraction": cfg.TestFraction, "shapes": strings.TrimSpace(shapes)},
					"shapes": map[string]any{"dup_users": s.DupUsers, "stars": s.Stars, "star_leaves": s.StarLeaves,
						"detached_stars": s.DetachedStars, "hub_items": s.HubItems, "hub_leaves": s.HubLeaves,
						"detached_hubs": s.DetachedHubs, "pendants": s.Pendants, "chain": s.Chain,
						"components": s.Components, "component_users": s.ComponentUsers, "component_items": s.ComponentItems,
						"isolated_users": s.IsolatedUsers, "isolated_items": s.IsolatedItems},
					"train_file": filepath.Join(out, "train.txt"), "test_file": filepath.Join(out, "test.txt"),
				},
			}, start)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Users, "users", d.Users, "users of the base graph")
	f.IntVar(&cfg.Items, "items", d.Items, "items of the base graph")
	f.Float64Var(&cfg.UserTail, "user-tail", d.UserTail, "Pareto tail index of user degrees (smaller: heavier tail)")
	f.IntVar(&cfg.MinDegree, "min-degree", d.MinDegree, "smallest user degree of the base graph")
	f.IntVar(&cfg.MaxDegree, "max-degree", 0, "largest user degree (0: items/2)")
	f.Float64Var(&cfg.ItemZipf, "item-zipf", d.ItemZipf, "Zipf exponent of item popularity (0: uniform)")
	f.Float64Var(&cfg.TestFraction, "test-fraction", d.TestFraction, "share of each user's items held out as test interactions")
	f.StringVar(&shapes, "shapes", "", "pathological shapes to add, e.g. dup=30,stars=4:200,pendants=10:5 or all (see --help)")
	f.Uint64Var(&cfg.Seed, "seed", d.Seed, "random seed; the same flags and seed give the same files")
	f.StringVar(&out, "out", "", "output directory (created if missing); its name is the dataset's")
	return cmd
}
