package aggregator

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Deadline adaptation (Config.DeadlineFactor). A fixed round timeout is
// wrong in both directions: on a world where a local step takes minutes,
// every round closes at the timeout with nothing in and the model never
// changes; on a small one, a generous timeout makes every round with a
// dead client wait for nothing. The policy below measures how long
// updates take and sizes each round from that:
//
//   - every update that reaches the machine gives one sample: for an
//     update of the open round, the larger of the time since the round
//     opened (which covers training, queueing and the network: all the
//     deadline must cover) and the client's own measured training time
//     (UpdateIn.Took); for a late one, its training time alone;
//   - the latest Window samples are kept, and a round may stay open for
//     Factor × their median, never less than RoundTimeout (the floor) nor
//     more than Cap;
//   - a round whose deadline passes with nothing in while live clients
//     remain is extended by another floor, up to Cap: the first round,
//     with nothing measured, waits for the first update rather than close
//     empty. A round that reached its cap with nothing in ends the
//     extensions until an update arrives again, so that a job whose
//     clients all died still ends (each later round at its budget, until
//     they are declared dead).
//
// The policy is part of the pure machine: time enters only through events,
// and its state (the samples) is in the snapshot.

// Defaults of the adaptive deadline.
const (
	DefaultDeadlineWindow = 32 // samples kept: four rounds of eight banks
	DefaultDeadlineCapX   = 20 // the cap, in floors, when Config.DeadlineCap is 0
)

// Reasons of a DeadlineAdapted.
const (
	AdaptMeasured = "measured" // Factor × the median of the measured update times
	AdaptEmpty    = "empty"    // nothing in at the deadline, live clients remain
)

// deadlinePolicy is the adaptive deadline's configuration and samples.
type deadlinePolicy struct {
	factor     float64
	floor, cap time.Duration
	window     int
	samples    []time.Duration // the latest, oldest first, at most window
}

func newDeadlinePolicy(c Config) deadlinePolicy {
	p := deadlinePolicy{factor: c.DeadlineFactor, floor: c.RoundTimeout, cap: c.DeadlineCap, window: c.DeadlineWindow}
	if p.cap == 0 {
		p.cap = DefaultDeadlineCapX * p.floor
	}
	if p.window == 0 {
		p.window = DefaultDeadlineWindow
	}
	return p
}

// validateDeadline checks the adaptive deadline's configuration.
func (c Config) validateDeadline() error {
	switch {
	case math.IsNaN(c.DeadlineFactor) || c.DeadlineFactor != 0 && !(c.DeadlineFactor >= 1 && c.DeadlineFactor <= 1000):
		return fmt.Errorf("aggregator: config: deadline factor %v: want 0 (off) or within [1, 1000]", c.DeadlineFactor)
	case c.DeadlineCap < 0 || c.DeadlineCap > 0 && c.DeadlineCap < c.RoundTimeout:
		return fmt.Errorf("aggregator: config: deadline cap %v below the round timeout %v", c.DeadlineCap, c.RoundTimeout)
	case c.DeadlineWindow < 0 || c.DeadlineWindow > 4096:
		return fmt.Errorf("aggregator: config: deadline window %d outside [0, 4096]", c.DeadlineWindow)
	}
	return nil
}

func (p *deadlinePolicy) on() bool { return p.factor > 0 }

// observe records one update's time, clipped to the cap (one client
// claiming hours moves the median no further than the cap allows).
func (p *deadlinePolicy) observe(d time.Duration) {
	if !p.on() || d <= 0 {
		return
	}
	p.samples = append(p.samples, min(d, p.cap))
	if n := len(p.samples) - p.window; n > 0 {
		p.samples = slices.Delete(p.samples, 0, n)
	}
}

// median of the samples (the mean of the middle two of an even count); 0
// when nothing was measured.
func (p *deadlinePolicy) median() time.Duration {
	n := len(p.samples)
	if n == 0 {
		return 0
	}
	s := slices.Clone(p.samples)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1] + (s[n/2]-s[n/2-1])/2
}

// budget is how long a round may stay open: Factor × the median, within
// [floor, cap]; the floor when adaptation is off or nothing was measured.
func (p *deadlinePolicy) budget() time.Duration {
	med := p.median()
	if !p.on() || med == 0 {
		return p.floor
	}
	b := float64(med) * p.factor
	if b >= float64(p.cap) {
		return p.cap
	}
	return max(p.floor, time.Duration(b))
}

// roundView is what the extension decision needs of the open round.
type roundView struct {
	openedAt, deadline, now time.Time
	in                      int  // updates counted so far, late ones folded in included
	live                    int  // clients counted towards the quorum
	starved                 bool // an earlier round reached its cap with nothing in, and nothing came since
}

// extension is the new deadline of a round whose deadline has passed
// (now ≥ deadline), or false when it must close: adaptation off, an update
// in, nobody live to wait for, starved, or the cap reached.
func (p *deadlinePolicy) extension(r roundView) (time.Time, bool) {
	if !p.on() || r.in > 0 || r.live == 0 || r.starved || r.now.Before(r.deadline) {
		return time.Time{}, false
	}
	limit := r.openedAt.Add(p.cap)
	next := r.deadline.Add(p.floor)
	if !next.After(r.now) {
		next = r.now.Add(p.floor)
	}
	if next.After(limit) {
		next = limit
	}
	if !next.After(r.now) {
		return time.Time{}, false
	}
	return next, true
}

// DeadlineSnapshot is the adaptive deadline's durable state.
type DeadlineSnapshot struct {
	// Samples are the measured update times kept, oldest first.
	Samples []time.Duration `json:"samples,omitempty"`
	// Extensions is how many times the open round was extended for being
	// empty; Starved says an earlier round reached its cap with nothing in
	// and no update has come since.
	Extensions int  `json:"extensions,omitempty"`
	Starved    bool `json:"starved,omitempty"`
}

// restore takes samples back from a snapshot, validated.
func (p *deadlinePolicy) restore(s DeadlineSnapshot) error {
	if len(s.Samples) > 0 && !p.on() {
		return fmt.Errorf("%d deadline samples with adaptation off", len(s.Samples))
	}
	if len(s.Samples) > p.window {
		return fmt.Errorf("%d deadline samples in a window of %d", len(s.Samples), p.window)
	}
	for _, d := range s.Samples {
		if d <= 0 || d > p.cap {
			return fmt.Errorf("deadline sample %v outside (0, %v]", d, p.cap)
		}
	}
	if s.Extensions < 0 {
		return fmt.Errorf("%d deadline extensions", s.Extensions)
	}
	p.samples = slices.Clone(s.Samples)
	return nil
}
