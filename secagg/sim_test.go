package secagg

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// go test ./secagg -run TestSim                        the seed table (every run)
// go test ./secagg -run '^TestSimSeed$' -secagg.seed=N  one seed, with its trace
// SECAGG_SIM_SEEDS=100000 go test ./secagg -run TestSimLong -timeout 0
// go test ./secagg -run TestSimGolden -update          rewrite the golden trace

var (
	updateSim = flag.Bool("update", false, "rewrite the golden trace in testdata/")
	simSeed   = flag.Int64("secagg.seed", -1, "TestSimSeed: the seed to run, with its trace on stdout")
)

// simConfigFor is the configuration of seed k in the sweeps: n from 3 to
// 12, t from the smallest valid up by 0 or 1, one to three rounds.
func simConfigFor(k uint64) SimConfig {
	n := 3 + int(k%10)
	t := n/2 + 1 + int(k/10%2)
	if t > n {
		t = n
	}
	return SimConfig{N: n, T: t, Dim: 3, Rounds: 1 + int(k/20%3)}
}

// failSim writes the failing seed's trace (the run is deterministic, so
// a rerun with the trace on is the same run) and fails the test.
func failSim(t *testing.T, seed uint64, cfg SimConfig, err error) {
	t.Helper()
	var buf bytes.Buffer
	cfg.Trace = &buf
	_, again := Simulate(seed, cfg)
	path := filepath.Join(t.ArtifactDir(), fmt.Sprintf("secagg-sim-seed-%d.txt", seed))
	if werr := os.WriteFile(path, buf.Bytes(), 0o644); werr != nil {
		t.Log(werr)
	}
	if fmt.Sprint(again) != fmt.Sprint(err) {
		t.Errorf("seed %d is not deterministic: %v, then %v", seed, err, again)
	}
	t.Errorf("%v\n    trace: %s (go test -artifacts keeps it)\n    reproduce: go test ./secagg -run '^TestSimSeed$' -secagg.seed=%d", err, path, seed)
}

type simTotals struct {
	seeds, rounds, completed, below, all, curious, messages, dups, late, refusals int
	demoting, leftOut                                                             int
	crashes                                                                       [7]int
	nosum                                                                         map[string]int
}

func (s *simTotals) add(r SimReport) {
	s.seeds++
	s.rounds += r.Rounds
	s.completed += r.Completed
	s.below += r.BelowThreshold
	s.all += r.AllSurvived
	s.curious += r.Curious
	s.messages += r.Messages
	s.dups += r.Duplicates
	s.late += r.Late
	s.refusals += r.Refusals.Total()
	s.demoting += r.Demoting
	s.leftOut += r.LeftOut
	if s.nosum == nil {
		s.nosum = map[string]int{}
	}
	for k, n := range r.NoSum {
		s.nosum[k] += n
	}
	for i, c := range r.Crashes {
		s.crashes[i] += c
	}
}

func (s simTotals) String() string {
	return fmt.Sprintf("%d seeds: %d rounds, %d with a sum (%d of all n), %d below t %v, %d lists leaving out inputs masked with an unremovable mask (%d inputs left out in all), %d curious; %d messages, %d duplicates, %d late; %d refusals; crashes by stage %v",
		s.seeds, s.rounds, s.completed, s.all, s.below, s.nosum, s.demoting, s.leftOut, s.curious, s.messages, s.dups, s.late, s.refusals, s.crashes[1:])
}

// runSims runs seeds first..first+count-1 over workers goroutines and
// fails t for each violation.
func runSims(t *testing.T, first, count uint64, workers int) simTotals {
	var (
		mu  sync.Mutex
		tot simTotals
		wg  sync.WaitGroup
	)
	next := make(chan uint64)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range next {
				cfg := simConfigFor(seed)
				rep, err := Simulate(seed, cfg)
				mu.Lock()
				if err != nil {
					failSim(t, seed, cfg, err)
				}
				tot.add(rep)
				mu.Unlock()
			}
		}()
	}
	for k := range count {
		next <- first + k
	}
	close(next)
	wg.Wait()
	return tot
}

// TestSimSeeds is the seed table every go test runs.
func TestSimSeeds(t *testing.T) {
	start := time.Now()
	tot := runSims(t, 1, 200, 2)
	t.Logf("%v in %v", tot, time.Since(start).Round(time.Millisecond))
	// A sweep that never crashed a party at some stage, never closed below
	// t, never ran a curious server or never refused anything tested less
	// than it says.
	for stage := simBeforeAdvertise; stage <= simMidUnmask; stage++ {
		if tot.crashes[stage] == 0 {
			t.Errorf("no crash %s in the sweep", simStageNames[stage])
		}
	}
	if tot.below == 0 || tot.curious == 0 || tot.refusals == 0 || tot.late == 0 || tot.dups == 0 || tot.all == 0 || tot.demoting == 0 {
		t.Errorf("the sweep missed a path: %v", tot)
	}
}

// TestSimLong is the long run: SECAGG_SIM_SEEDS seeds from
// SECAGG_SIM_FIRST (default 1), over every CPU.
func TestSimLong(t *testing.T) {
	v := os.Getenv("SECAGG_SIM_SEEDS")
	if v == "" {
		t.Skip("SECAGG_SIM_SEEDS not set")
	}
	count, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	first := uint64(1)
	if f := os.Getenv("SECAGG_SIM_FIRST"); f != "" {
		if first, err = strconv.ParseUint(f, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	tot := runSims(t, first, count, runtime.GOMAXPROCS(0))
	took := time.Since(start)
	t.Logf("%v in %v: %.0f seeds/s", tot, took.Round(time.Millisecond), float64(tot.seeds)/took.Seconds())
}

// TestSimSeed reruns one seed with its trace (-secagg.seed).
func TestSimSeed(t *testing.T) {
	if *simSeed < 0 {
		t.Skip("-secagg.seed not set")
	}
	seed := uint64(*simSeed)
	cfg := simConfigFor(seed)
	cfg.Trace = os.Stdout
	rep, err := Simulate(seed, cfg)
	t.Logf("%+v", rep)
	if err != nil {
		t.Fatal(err)
	}
}

// goldenSim is the golden trace's run: five banks, three rounds, every
// fault more likely than in the sweeps.
var goldenSim = struct {
	seed uint64
	cfg  SimConfig
}{37, SimConfig{N: 5, T: 3, Dim: 2, Rounds: 3, Crash: 0.2, Dup: 0.1, Straggle: 0.03, Curious: 0.5, MaxDelay: 6}}

func TestSimGolden(t *testing.T) {
	var buf bytes.Buffer
	cfg := goldenSim.cfg
	cfg.Trace = &buf
	if _, err := Simulate(goldenSim.seed, cfg); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", fmt.Sprintf("sim-seed-%d.txt", goldenSim.seed))
	if *updateSim {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./secagg -run TestSimGolden -update writes it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		got := filepath.Join(t.ArtifactDir(), filepath.Base(path))
		_ = os.WriteFile(got, buf.Bytes(), 0o644)
		t.Fatalf("trace differs from %s (got: %s); if the change is meant, rerun with -update", path, got)
	}
}

// The same seed gives the same report and trace.
func TestSimDeterministic(t *testing.T) {
	for _, seed := range []uint64{3, 11, 42} {
		cfg := simConfigFor(seed)
		var a, b bytes.Buffer
		cfg.Trace = &a
		ra, ea := Simulate(seed, cfg)
		cfg.Trace = &b
		rb, eb := Simulate(seed, cfg)
		if fmt.Sprint(ra, ea) != fmt.Sprint(rb, eb) || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
	}
}

// The invariants bite: clients that answer a second list as if it were
// the first hand the curious server both kinds of a survivor's shares,
// and invariant 5 finds the survivor's input computable.
func TestSimCatchesLeakyClients(t *testing.T) {
	caught := 0
	for seed := uint64(1); seed <= 40; seed++ {
		cfg := SimConfig{N: 5, T: 3, Dim: 2, Crash: -1, Straggle: -1, Curious: 1, leakyClient: true}
		_, err := Simulate(seed, cfg)
		var v *SimViolation
		if errors.As(err, &v) && v.Invariant == "no input computable" {
			caught++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if caught == 0 {
		t.Fatal("40 seeds of leaky clients under a curious server and no violation found")
	}
	t.Logf("%d of 40 seeds caught", caught)
}

func TestSimConfigRefused(t *testing.T) {
	for _, cfg := range []SimConfig{{N: 1}, {N: 31}, {N: 6, T: 3}, {N: 4, T: 5}} {
		if _, err := Simulate(1, cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}
