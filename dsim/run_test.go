package dsim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"graphfed/aggregator"
)

// optSeed is a -dsim.seed flag that can tell "unset" from seed 0.
type optSeed struct {
	v   uint64
	set bool
}

func (o *optSeed) String() string { return strconv.FormatUint(o.v, 10) }
func (o *optSeed) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 64)
	o.v, o.set = v, err == nil
	return err
}

var (
	dsimSeed   optSeed
	dsimSeeds  = flag.Int("dsim.seeds", 1000, "seeds TestDeterministicSimSeeds sweeps (200 under -short)")
	dsimFirst  = flag.Uint64("dsim.first", 1, "first seed TestDeterministicSimSeeds sweeps")
	dsimSecure = flag.Bool("dsim.secure", false, "TestDeterministicSimSeeds sweeps only secure seeds (Config.SecAgg), -dsim.seeds of them")
	dsimStrict = flag.Bool("dsim.strictsecure", true, "make an update sent in the clear in a secure job a violation (Config.StrictSecure; since agents hold their vectors in every round of a secure job, on)")
	dsimBudget = flag.Duration("dsim.budget", 0, "stop TestDeterministicSimSeeds's sweep after this long and report the seeds run (0: none)")
	traceDir   = flag.String("dsim.tracedir", filepath.Join(os.TempDir(), "dsim-traces"), "where failing seeds' traces are written")
)

func init() {
	flag.Var(&dsimSeed, "dsim.seed", "run only this seed of TestDeterministicSimSeeds, twice (reproduces a failure)")
}

// reproCommand is the one line that reruns a failing seed.
func reproCommand(seed uint64) string {
	return fmt.Sprintf("go test ./dsim -run TestDeterministicSimSeeds -dsim.seed=%d", seed)
}

// TestDeterministicSimSeeds sweeps the simulator over many seeds, each with
// its own job and mix of every fault, checking every invariant after every
// step; every tenth seed also runs twice and must agree bit for bit.
func TestDeterministicSimSeeds(t *testing.T) {
	o := Seeds{First: *dsimFirst, Count: *dsimSeeds, RerunEvery: 10, TraceDir: *traceDir, Workers: 2}
	if testing.Short() && o.Count > 200 {
		o.Count = 200
	}
	if dsimSeed.set {
		o = Seeds{First: dsimSeed.v, Count: 1, RerunEvery: 1, TraceDir: *traceDir}
	}
	o.SecureOnly = *dsimSecure && !dsimSeed.set
	if *dsimStrict {
		o.Config = func(seed uint64) (Config, error) {
			c := RandomConfig(seed)
			c.StrictSecure = true
			return c, nil
		}
	}
	ctx := context.Background()
	if *dsimBudget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dsimBudget)
		defer cancel()
	}
	start := time.Now()
	sum, err := RunSeeds(ctx, o)
	took := time.Since(start)
	budgetSpent := *dsimBudget > 0 && errors.Is(err, context.DeadlineExceeded)
	if err != nil && !budgetSpent {
		t.Fatal(err)
	}
	if budgetSpent {
		t.Logf("budget of %v spent: %d of %d seeds run", *dsimBudget, sum.Seeds, o.Count)
	} else if sum.Seeds != o.Count && len(sum.Failures) == 0 {
		t.Fatalf("ran %d of %d seeds", sum.Seeds, o.Count)
	}
	for _, v := range sum.Failures {
		t.Errorf("%v\n    trace: %s\n    reproduce: %s", v, v.TraceFile, reproCommand(v.Seed))
	}
	c := sum.Counters
	if !dsimSeed.set && !o.SecureOnly && !budgetSpent && o.Count >= 30 {
		// A green sweep must have driven every strategy and channel. Each
		// strategy has a quarter of the seeds, give or take a block of
		// three at the range's ends.
		for _, st := range Strategies() {
			if sum.PerStrategy[st] < o.Count/4-3 {
				t.Errorf("%d of %d seeds ran %s: %v", sum.PerStrategy[st], o.Count, st, sum.PerStrategy)
			}
		}
		for what, n := range map[string]int{"secure seeds": sum.Secure, "server optimizer seeds": sum.ServerOpt, "secure sums checked": c.SecureChecked, "secure rounds without a sum": c.SecureFailed,
			"embeddings sent": c.EmbSent, "scalars sent": c.ScalarsSent,
			"personalized models": c.Personal, "final reports": c.Finals, "budget refusals": c.BudgetRefusals,
			"updates with descriptors": c.DescSent, "descriptor refusals": c.DescRefused,
			"lives that found their descriptors released": c.DescKept, "closes that learned graphs": c.GraphCloses} {
			if n == 0 {
				t.Errorf("no %s in %d seeds", what, sum.Seeds)
			}
		}
	}
	t.Logf("%d seeds in %v on %d workers: %.0f seeds/s", sum.Seeds, took.Round(time.Millisecond), o.Workers, float64(sum.Seeds)/took.Seconds())
	t.Logf("per strategy %v: %d embedding messages, %d scalars, %d personalized models, %d final reports, refused %v",
		sum.PerStrategy, c.EmbSent, c.ScalarsSent, c.Personal, c.Finals, c.Refused)
	t.Logf("fedgsp: %d updates with descriptors, %d descriptor releases refused by the budget, %d lives that found theirs in the ledger, %d closes that learned the graphs",
		c.DescSent, c.DescRefused, c.DescKept, c.GraphCloses)
	t.Logf("secure aggregation: %d seeds, %d masked updates, %d protocol messages, %d sums (%d checked against the survivors' releases, %d folding earlier rounds), %d rounds without a sum, refused %v, %d updates in the clear",
		sum.Secure, c.MaskedUpdates, c.SecAggSent, c.SecureSums, c.SecureChecked, c.SecureUnchecked, c.SecureFailed, c.SecAggRefused, c.ClearInSecure)
	t.Logf("%d seeds, %d steps: %d messages (%d dropped, %d duplicated, %d reordered, %d lost to partitions), "+
		"%d agent and %d aggregator crashes, %d updates counted, %d stale, closes %v, dropped %v",
		sum.Seeds, sum.Steps, c.Sent, c.Dropped, c.Duplicated, c.Reordered, c.PartitionDrops,
		c.AgentCrashes, c.AggCrashes, c.Accepted, c.StaleFolded, c.Closes, c.Rejected)
}

// The final model is a function of the seed: bit-identical across runs of
// one seed, different across seeds.
func TestDsimBitIdenticalPerSeed(t *testing.T) {
	models := map[string]uint64{}
	for seed := uint64(1); seed <= 20; seed++ {
		a, err := Run(context.Background(), RandomConfig(seed))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(context.Background(), RandomConfig(seed))
		if err != nil {
			t.Fatal(err)
		}
		if v := Diverged(a, b); v != nil {
			t.Fatalf("seed %d: %v", seed, v)
		}
		// A secure job all of whose rounds fell below t has no model.
		noSum := a.Secure && a.Counters.SecureSums == 0
		if a.Violation != nil || !a.Finished || len(a.Model) == 0 && !noSum {
			t.Fatalf("seed %d: finished %v, model %v, violation %v", seed, a.Finished, a.Model, a.Violation)
		}
		if len(a.Model) == 0 {
			continue
		}
		key := fmt.Sprint(a.Model)
		if other, dup := models[key]; dup {
			t.Fatalf("seeds %d and %d produced the same model %v", other, seed, a.Model)
		}
		models[key] = seed
	}
	// Diverged itself must see a one-bit difference.
	a, _ := Run(context.Background(), RandomConfig(1))
	b := a
	b.Model = append([]float32(nil), a.Model...)
	b.Model[0] = math.Float32frombits(math.Float32bits(b.Model[0]) ^ 1)
	if v := Diverged(a, b); v == nil || v.Invariant != InvNondeterministic {
		t.Fatalf("a one-bit model difference went unnoticed: %v", v)
	}
}

// Each fault, injected alone, is exercised (its counter moves), the
// others stay off, and the invariants hold.
func TestDsimFaultsExercised(t *testing.T) {
	tests := []struct {
		fault string
		hit   func(c Counters) int
		// effect is a consequence further down the line: the fault reached
		// the protocol, not only the network.
		effect func(c Counters) int
	}{
		{"drop", func(c Counters) int { return c.Dropped }, func(c Counters) int { return c.Closes["deadline"] }},
		{"dup", func(c Counters) int { return c.Duplicated }, func(c Counters) int { return c.Rejected["duplicate"] }},
		{"delay", func(c Counters) int { return c.Delayed }, func(c Counters) int { return c.StaleFolded + c.Rejected["late"] }},
		{"reorder", func(c Counters) int { return c.Reordered }, func(c Counters) int { return c.Reordered }},
		{"partition", func(c Counters) int { return c.PartitionsStarted }, func(c Counters) int { return c.PartitionDrops }},
		{"agent-crash", func(c Counters) int { return c.AgentCrashes }, func(c Counters) int { return c.AgentRestarts * c.MidStepCrashes }},
		{"aggregator-crash", func(c Counters) int { return c.AggCrashes }, func(c Counters) int { return c.AggRestarts * c.MidStepCrashes }},
	}
	all := FaultKinds()
	if len(tests) != len(all) {
		t.Fatalf("%d fault tests for %d fault kinds %v", len(tests), len(all), all)
	}
	for _, tc := range tests {
		t.Run(tc.fault, func(t *testing.T) {
			sum, err := RunSeeds(context.Background(), Seeds{First: 1, Count: 40, RerunEvery: 8,
				Config: func(seed uint64) (Config, error) { return FocusedConfig(seed, tc.fault) }})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range sum.Failures {
				t.Errorf("%v\n    reproduce: graphfed scenario run %s --seed %d", v, tc.fault, v.Seed)
			}
			c := sum.Counters
			if tc.hit(c) == 0 || tc.effect(c) == 0 {
				t.Fatalf("%s not exercised: %+v", tc.fault, c)
			}
			others := map[string]int{"drop": c.Dropped, "dup": c.Duplicated, "partition": c.PartitionsStarted,
				"agent-crash": c.AgentCrashes, "aggregator-crash": c.AggCrashes}
			for kind, n := range others {
				if kind != tc.fault && n != 0 {
					t.Fatalf("focused on %s, but %s happened %d times", tc.fault, kind, n)
				}
			}
		})
	}
	if _, err := FocusedConfig(1, "meteor"); err == nil {
		t.Fatal("an unknown fault kind was accepted")
	}
}

// The regression the simulator found: a copy of an update that already
// counted, arriving after its round closed (redelivered or duplicated), was
// folded into the next round as a stale update and counted twice. Without
// the fix, about one seed in five shows it; seed 2 is the first.
func TestDsimLateDuplicateCountsOnce(t *testing.T) {
	m, err := aggregator.NewMachine(aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: 3, MinClients: 2, Quorum: 1,
		RoundTimeout: time.Second, Staleness: aggregator.Staleness{Policy: aggregator.StaleConstant, Factor: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := epoch()
	for _, id := range []string{"a", "b"} {
		m.Step(aggregator.Join{Client: id, SchemaHash: "h", NumParams: 1, Weight: 1, Now: t0})
	}
	u := aggregator.UpdateIn{Client: "a", Round: 1, Weight: 1, Params: []float32{1}, Now: t0}
	m.Step(u) // closes round 1 at quorum 1
	acts := m.Step(u)
	if len(acts) != 1 {
		t.Fatalf("the late copy of a counted update was not dropped: %#v", acts)
	}
	if d, ok := acts[0].(aggregator.Dropped); !ok || d.Reason != "late" {
		t.Fatalf("want the late copy dropped as late, got %#v", acts)
	}
	res, err := Run(context.Background(), RandomConfig(2))
	if err != nil || res.Violation != nil {
		t.Fatalf("seed 2: %v %v", err, res.Violation)
	}
}

// BenchmarkDsimSeed reports how fast the simulator sweeps seeds (one
// complete job with faults and every invariant check per iteration).
func BenchmarkDsimSeed(b *testing.B) {
	var steps int
	for i := range b.N {
		res, err := Run(context.Background(), RandomConfig(uint64(i)))
		if err != nil || res.Violation != nil {
			b.Fatalf("seed %d: %v %v", i, err, res.Violation)
		}
		steps += res.Steps
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
	b.ReportMetric(float64(steps)/float64(b.N), "steps/seed")
}

var update = flag.Bool("update", false, "rewrite the golden traces in testdata/")

// The readable traces of one small seed per strategy are golden: a change
// of behaviour (or of the trace's format) shows as a diff, reviewed and
// accepted with go test ./dsim -run TestGoldenTraces -update.
func TestGoldenTraces(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		seed     uint64
		secure   bool
	}{{StrategyFedAvg, 3, false}, {StrategyCEFedGNN, 4, false}, {StrategyLPSFed, 2, false}, {StrategyFedGSP, 34, false},
		// Secure aggregation: sums checked against the survivors' inputs,
		// rounds below t, an aggregator restart, inputs folded forward.
		{StrategyCEFedGNN, 7, true}} {
		name := tc.strategy
		if tc.secure {
			name = "secure-" + name
		}
		t.Run(name, func(t *testing.T) {
			cfg := RandomConfig(tc.seed)
			if cfg.Strategy() != tc.strategy || cfg.SecAgg != tc.secure {
				t.Fatalf("seed %d runs %s, secure %v", tc.seed, cfg.Strategy(), cfg.SecAgg)
			}
			cfg.Trace = true
			res, err := Run(context.Background(), cfg)
			if err != nil || res.Violation != nil {
				t.Fatalf("%v %v", err, res.Violation)
			}
			if tc.secure && res.Counters.SecureChecked == 0 {
				t.Fatalf("seed %d checked no secure sum", tc.seed)
			}
			path := filepath.Join("testdata", fmt.Sprintf("%s-seed-%d.txt", name, tc.seed))
			if *update {
				if err := os.WriteFile(path, []byte(res.Text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it with -update)", err)
			}
			if got := res.Text; got != string(want) {
				g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := 0; i < max(len(g), len(w)); i++ {
					gl, wl := "<end>", "<end>"
					if i < len(g) {
						gl = g[i]
					}
					if i < len(w) {
						wl = w[i]
					}
					if gl != wl {
						t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(accept with -update)", path, i+1, gl, wl)
					}
				}
			}
			// The trace is a function of the seed: a second run writes it again.
			again, _ := Run(context.Background(), cfg)
			if again.Text != res.Text {
				t.Fatal("two traces of one seed differ")
			}
		})
	}
}
