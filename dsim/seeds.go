package dsim

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Seeds runs the simulator over a range of seeds.
type Seeds struct {
	First uint64 // the first seed
	Count int    // how many consecutive seeds
	// Config derives a seed's job and faults; nil: RandomConfig.
	Config func(seed uint64) (Config, error)
	// RerunEvery: every RerunEvery-th seed runs twice, and the two runs
	// must agree bit for bit (the determinism invariant); 0: never.
	RerunEvery int
	// Workers run seeds in parallel (each run is single-threaded and
	// independent of the others); 0: 1.
	Workers int
	// MaxFailures stops the sweep after that many failing seeds; 0: 10.
	MaxFailures int
	// SecureOnly runs only secure seeds (Config.SecAgg): Count of them,
	// the first at or after First.
	SecureOnly bool
	// TraceDir, when set, receives the readable trace of every failing
	// seed (WriteTrace); the path is in the violation.
	TraceDir string
}

// Summary is what a sweep found.
type Summary struct {
	Seeds    int // seeds run
	Finished int // jobs that finished
	Steps    int
	// PerStrategy counts the seeds run per strategy (Config.Strategy).
	PerStrategy map[string]int
	Secure      int // seeds that aggregated securely (Config.SecAgg)
	ServerOpt   int // seeds with a server optimizer (Config.ServerOpt)
	Counters    Counters
	// Failures are the violations found, by ascending seed.
	Failures []*Violation
}

// RunSeeds runs the sweep. The error is for a harness that cannot run;
// broken invariants are in the summary.
func RunSeeds(ctx context.Context, o Seeds) (Summary, error) {
	if o.Count < 0 || o.First > math.MaxUint64-uint64(o.Count) {
		return Summary{}, fmt.Errorf("dsim seeds: bad range from %d, %d seeds", o.First, o.Count)
	}
	if o.Config == nil {
		o.Config = func(seed uint64) (Config, error) { return RandomConfig(seed), nil }
	}
	workers := max(1, o.Workers)
	maxFail := o.MaxFailures
	if maxFail == 0 {
		maxFail = 10
	}
	var (
		mu    sync.Mutex
		sum   Summary
		first error
		wg    sync.WaitGroup
		next  = o.First
		end   = o.First + uint64(o.Count)
		taken int
	)
	take := func() (uint64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if o.SecureOnly {
			for next < math.MaxUint64 && !secureSeed(next) {
				next++
			}
			end = math.MaxUint64
			if taken >= o.Count {
				return 0, false
			}
		}
		if next >= end || first != nil || len(sum.Failures) >= maxFail || ctx.Err() != nil {
			return 0, false
		}
		taken++
		next++
		return next - 1, true
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed, ok := take(); ok; seed, ok = take() {
				rerun := o.RerunEvery > 0 && seed%uint64(o.RerunEvery) == o.First%uint64(o.RerunEvery)
				res, err := runSeed(ctx, o.Config, seed, rerun)
				mu.Lock()
				switch {
				case err != nil:
					first = err
				default:
					sum.Seeds++
					if sum.PerStrategy == nil {
						sum.PerStrategy = map[string]int{}
					}
					sum.PerStrategy[res.Strategy]++
					if res.Secure {
						sum.Secure++
					}
					if res.ServerOpt != "" {
						sum.ServerOpt++
					}
					sum.Steps += res.Steps
					sum.Counters.Add(res.Counters)
					if res.Finished {
						sum.Finished++
					}
					if res.Violation != nil {
						sum.Failures = append(sum.Failures, res.Violation)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(sum.Failures, func(a, b *Violation) int { return cmp.Compare(a.Seed, b.Seed) })
	if o.TraceDir != "" {
		for _, v := range sum.Failures {
			cfg, err := o.Config(v.Seed)
			if err == nil {
				v.TraceFile, err = WriteTrace(cfg, o.TraceDir)
			}
			if err != nil && first == nil {
				first = err
			}
		}
	}
	if first == nil {
		first = ctx.Err()
	}
	return sum, first
}

// runSeed runs one seed, twice when asked, and reports a divergence as a
// violation of the determinism invariant.
func runSeed(ctx context.Context, config func(uint64) (Config, error), seed uint64, rerun bool) (Result, error) {
	cfg, err := config(seed)
	if err != nil {
		return Result{}, err
	}
	res, err := Run(ctx, cfg)
	if err != nil || !rerun {
		return res, err
	}
	again, err := Run(ctx, cfg)
	if err != nil {
		return res, err
	}
	if v := Diverged(res, again); v != nil && res.Violation == nil {
		res.Violation = v
	}
	return res, nil
}

// Diverged compares two runs of one seed: their traces and final models
// must be identical bit for bit. It returns nil when they are.
func Diverged(a, b Result) *Violation {
	same := a.Trace == b.Trace && len(a.Model) == len(b.Model)
	for i := 0; same && i < len(a.Model); i++ {
		same = math.Float32bits(a.Model[i]) == math.Float32bits(b.Model[i])
	}
	if same {
		return nil
	}
	return &Violation{Invariant: InvNondeterministic, Seed: a.Seed, Step: a.Steps, At: a.SimTime,
		Detail: fmt.Sprintf("two runs differ: trace %x vs %x, model %v vs %v", a.Trace, b.Trace, a.Model, b.Model)}
}

// traceHash is an FNV-1a hash of a run's steps and models. Two runs of one
// seed must produce the same hash: it is how the determinism invariant
// sees a divergence that the final model alone might hide.
type traceHash uint64

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func newTraceHash() traceHash { return fnvOffset }

func (h *traceHash) u64(xs ...uint64) {
	for _, x := range xs {
		for range 8 {
			*h = (*h ^ traceHash(x&0xff)) * fnvPrime
			x >>= 8
		}
	}
}

func (h *traceHash) str(s string) {
	for i := 0; i < len(s); i++ {
		*h = (*h ^ traceHash(s[i])) * fnvPrime
	}
	h.u64(uint64(len(s)))
}

func (h *traceHash) bytes(b []byte) {
	h.u64(uint64(len(b)))
	for _, c := range b {
		*h = (*h ^ traceHash(c)) * fnvPrime
	}
}

func (h *traceHash) floats(p []float32) {
	h.u64(uint64(len(p)))
	for _, v := range p {
		h.u64(uint64(math.Float32bits(v)))
	}
}
