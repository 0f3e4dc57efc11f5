package job

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/learner"
)

// paceLearner pulls its parameters towards a target and spends a fixed wall
// time per local step, standing in for a bank's compute: SlowFactor then
// makes one bank slower in proportion to its work. Its training may also
// wait on the job's events (gate), so that what the test checks does not
// rest on wall-clock speeds.
type paceLearner struct {
	target []float32
	params []float32
	step   time.Duration
	gate   func() // called before each training; nil: none
}

func (l *paceLearner) SchemaHash() string { return "pace-v1" }
func (l *paceLearner) NumParams() int     { return len(l.target) }
func (l *paceLearner) TrainSize() int     { return 10 }
func (l *paceLearner) Init(uint64)        { l.params = make([]float32, len(l.target)) }
func (l *paceLearner) Params() []float32  { return slices.Clone(l.params) }
func (l *paceLearner) SetParams(p []float32) error {
	if len(p) != len(l.target) {
		return fmt.Errorf("pace learner: %d params, want %d", len(p), len(l.target))
	}
	copy(l.params, p)
	return nil
}
func (l *paceLearner) Train(steps int) float64 {
	if l.gate != nil {
		l.gate()
	}
	for range steps {
		time.Sleep(l.step)
		for i := range l.params {
			l.params[i] += 0.5 * (l.target[i] - l.params[i])
		}
	}
	return 0
}
func (l *paceLearner) Evaluate() map[string]float64 { return map[string]float64{"test_acc": 1} }

// slowJob orders a slow-bank job by its events rather than by wall-clock
// speeds, which a loaded machine upsets (the SlowFactor wait multiplies a
// stall of the slow bank's first round, and the fast banks could finish
// every round before its first update). The slow bank finishes a round's
// training only after that round closed, so its update is always late and
// the fast banks alone make every quorum; the fast banks train round
// gateRound and later only once an update of the slow bank is on the wire,
// so that one arrives before the job ends, at most gateRound rounds stale.
type slowJob struct {
	mu       sync.Mutex
	changed  *sync.Cond
	closes   int  // rounds closed
	slowSent bool // an update of the slow bank was published
	rounds   int
}

func newSlowJob(rounds int) *slowJob {
	j := &slowJob{rounds: rounds}
	j.changed = sync.NewCond(&j.mu)
	return j
}

func (j *slowJob) closed() {
	j.mu.Lock()
	j.closes++
	j.mu.Unlock()
	j.changed.Broadcast()
}

func (j *slowJob) sent() {
	j.mu.Lock()
	j.slowSent = true
	j.mu.Unlock()
	j.changed.Broadcast()
}

// slowGate waits until the round the slow bank trains has closed: two
// closes after the one it saw last (the close that opened its round may
// not have been counted yet), or the end of the job.
func (j *slowJob) slowGate() {
	j.mu.Lock()
	defer j.mu.Unlock()
	target := j.closes + 2
	for j.closes < target && j.closes < j.rounds {
		j.changed.Wait()
	}
}

// fastGate holds a fast bank's training of round gateRound or later (at
// least gateRound-1 closes counted) until the slow bank's update is out.
func (j *slowJob) fastGate(gateRound int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.closes >= gateRound-1 && !j.slowSent {
		j.changed.Wait()
	}
}

// A bank 5x slower than the others never holds a round up: with a quorum of
// the fast banks every round closes at quorum (or buffer) long before the
// deadline, and the slow bank's late updates are dropped, folded in with
// the configured staleness weight, or buffered, by policy.
func TestSlowBankEachPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four jobs on an embedded NATS server")
	}
	const (
		banks  = 4
		slow   = 3
		rounds = 12
		weight = 10 // paceLearner.TrainSize
		// gateRound is the first round the fast banks train only once the
		// slow bank's update is out: rounds up to gateRound can be open
		// when it comes, a staleness within the default maximum age (10).
		gateRound = 10
	)
	tests := []struct {
		name      string
		staleness aggregator.Staleness
		buffer    int
		reason    string
		// staleWeight is the weight a folded-in update of staleness s has;
		// nil: late updates must be dropped.
		staleWeight func(s uint64) float64
	}{
		{name: "drop", staleness: aggregator.Staleness{Policy: aggregator.StaleDrop}, reason: "quorum"},
		{name: "constant", staleness: aggregator.Staleness{Policy: aggregator.StaleConstant, Factor: 0.5}, reason: "quorum",
			staleWeight: func(uint64) float64 { return 0.5 * weight }},
		{name: "polynomial", staleness: aggregator.Staleness{Policy: aggregator.StalePolynomial, A: 0.5}, reason: "quorum",
			staleWeight: func(s uint64) float64 { return weight * math.Pow(1+float64(s), -0.5) }},
		{name: "fedbuff", staleness: aggregator.Staleness{Policy: aggregator.StaleConstant, Factor: 1}, buffer: 3, reason: "buffer",
			staleWeight: func(uint64) float64 { return weight }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := "slow-" + tc.name
			srv, err := bus.StartServer(bus.ServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown()
			events := newSlowJob(rounds)
			watch, err := bus.Connect(srv.ClientURL(), bus.ConnectOptions{Name: "slow-watch"})
			if err != nil {
				t.Fatal(err)
			}
			defer watch.Close()
			// The aggregator's copy of the slow bank's update is queued
			// before this one is delivered, so it comes before any update
			// a fast bank publishes after the gate opens.
			if _, err := watch.Subscribe(bus.Subject(job, bus.KindUpdate, deploy.ClientID(slow)), func(*nats.Msg) { events.sent() }); err != nil {
				t.Fatal(err)
			}
			if err := watch.Flush(); err != nil {
				t.Fatal(err)
			}
			learners := make([]learner.Learner, banks)
			for i := range learners {
				pl := &paceLearner{target: []float32{float32(i), 1}, step: 60 * time.Millisecond,
					gate: func() { events.fastGate(gateRound) }}
				if i == slow {
					pl.gate = events.slowGate
				}
				learners[i] = pl
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var closes []aggregator.RoundClosed
			res, err := RunSim(ctx, SimConfig{
				Job: job, Algo: aggregator.AlgoFedAvg, Learners: learners, Rounds: rounds, LocalEpochs: 2,
				RoundTimeout: time.Minute, Quorum: banks - 1, Staleness: tc.staleness, Buffer: tc.buffer, Seed: 1,
				SlowFactor: map[int]float64{slow: 5}, NATSURL: srv.ClientURL(), Log: zerolog.Nop(),
				// The aggregator's own staleness policy, on updates in the
				// clear; under secure aggregation the agent folds a late
				// update into its next input (scenario secagg-late).
				SecAgg: SecAggOff,
				OnRound: func(rc aggregator.RoundClosed, _ map[string]map[string]float64) {
					closes = append(closes, rc)
					events.closed()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(closes) != rounds {
				t.Fatalf("%d rounds closed, want %d", len(closes), rounds)
			}
			slowID := deploy.ClientID(slow)
			folded := 0
			for _, rc := range closes {
				// A deadline close would mean the job waited for the slow bank.
				if rc.Reason != tc.reason {
					t.Fatalf("round %d closed by %s, want %s (in %v, late %v)", rc.Round, rc.Reason, tc.reason, rc.In, rc.Late)
				}
				if tc.buffer > 0 && slices.Contains(rc.In, slowID) {
					// FedBuff rounds last until B updates are in, so the slow
					// bank may make one in time: it still counts.
					folded++
				}
				if len(rc.Stale) == 0 {
					continue
				}
				if tc.staleWeight == nil {
					t.Fatalf("round %d folded in %v under the drop policy", rc.Round, rc.Stale)
				}
				extra := rc.Weight - float64(len(rc.In)*weight)
				if tc.buffer > 0 {
					// FedBuff closes on any B updates, so a fast bank's update
					// can miss a round too; each folds in at full weight here.
					if slices.Contains(rc.Stale, slowID) {
						folded++
					}
					if math.Abs(extra-float64(len(rc.Stale)*weight)) > 1e-9 {
						t.Fatalf("round %d: %d buffered late updates carried weight %v", rc.Round, len(rc.Stale), extra)
					}
					continue
				}
				if !slices.Equal(rc.Stale, []string{slowID}) {
					t.Fatalf("round %d folded in %v, only %s is slow", rc.Round, rc.Stale, slowID)
				}
				folded++
				if !matchesSomeStaleness(extra, tc.staleWeight) {
					t.Fatalf("round %d: stale update carried weight %v, not the policy's weight for any staleness", rc.Round, extra)
				}
			}
			late := res.Agg.Dropped["late"]
			switch {
			case tc.staleWeight == nil && late == 0:
				t.Fatalf("drop policy dropped no late update (dropped %v)", res.Agg.Dropped)
			case tc.staleWeight != nil && folded == 0:
				t.Fatalf("the slow bank's updates never counted under %s (dropped %v)", tc.name, res.Agg.Dropped)
			}
			t.Logf("%s: %d stale updates folded in, dropped %v, %.2fs", tc.name, folded, res.Agg.Dropped, res.Seconds)
		})
	}
}

// matchesSomeStaleness reports whether w is the policy's weight for some
// staleness within the default maximum age.
func matchesSomeStaleness(w float64, policy func(uint64) float64) bool {
	for s := uint64(1); s <= 10; s++ {
		if math.Abs(w-policy(s)) < 1e-9 {
			return true
		}
	}
	return false
}
