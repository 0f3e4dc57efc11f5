package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	joblib "graphfed/job"
	"graphfed/workload/rec"
)

// newGenRecCmd is `graphfed gen rec`: a heavy-tailed user–item dataset in
// the LightGCN layout, optionally with the pathological shapes of
// spectral's property test.
func newGenRecCmd(g *globalFlags) *cobra.Command {
	d := rec.DefaultGenConfig()
	spec := joblib.GenRecSpec{Config: d}
	cfg := &spec.Config
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
			r, err := joblib.GenRec(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("gen rec: %w", err)
			}
			return g.emit(Report{Command: "gen rec", Dataset: r.Dataset, Seed: int64(cfg.Seed), Metrics: r.Metrics}, start)
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
	f.StringVar(&spec.Shapes, "shapes", "", "pathological shapes to add, e.g. dup=30,stars=4:200,pendants=10:5 or all (see --help)")
	f.Uint64Var(&cfg.Seed, "seed", d.Seed, "random seed; the same flags and seed give the same files")
	f.StringVar(&spec.Out, "out", "", "output directory (created if missing); its name is the dataset's")
	return cmd
}
