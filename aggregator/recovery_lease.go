package aggregator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
)

// Two aggregators must never serve one job at once. The checkpoint's
// conditional writes fence the second one off at its first write, but by
// then it has announced its newer run, and agents that followed it would
// reject the first one's rounds and done: the job hangs. So a durable
// aggregator holds the job's run lease, one key beside its checkpoint
// (bus.RunLeaseKey), before it subscribes or publishes anything:
//
//   - the record names the run that holds the job, since when, with what
//     TTL, on which host and process, and the runs that held it before;
//     it is only ever written conditionally (created when absent, else
//     replaced at the revision read), so two writers cannot both win;
//   - the holder rewrites it every TTL/4 (renew);
//   - a newcomer that finds it held watches it for a TTL on its own clock,
//     from after its first read: a write meanwhile is a live holder, and
//     the newcomer refuses (ErrJobRunning) having announced nothing; a
//     record left unchanged for a TTL is a dead holder's, and the newcomer
//     takes it over, adding the dead run to the record's ended runs; a
//     record the holder released (a clean exit) is taken over at once;
//   - a holder that could not renew for a TTL, counted from the start of
//     its last successful renewal (before any newcomer's watch began),
//     holds nothing any more: it stores no checkpoint and publishes
//     nothing (Lease.Held), and stops (Lease.Lost).
//
// Only the durations on each party's own clock matter, never a comparison
// of two machines' clocks. The ended runs go out with every hello reply,
// round opening and done (bus.RoundOpen.Ended): agents follow a new run
// only when it names theirs among them (agent.RunGuard), so that even an
// aggregator that skipped the lease (an older build) cannot pull them off
// the job's run.

// LeaseStore is the lease key (bus.JetStreamRunLease on NATS, MemLeaseStore
// in tests). Create and Update fail with an error wrapping
// bus.ErrLeaseConflict when the key exists, or when its latest revision is
// not rev.
type LeaseStore interface {
	// Get returns the record and its revision; nil and 0 when there is none.
	Get(ctx context.Context) (data []byte, rev uint64, err error)
	Create(ctx context.Context, data []byte) (rev uint64, err error)
	Update(ctx context.Context, data []byte, rev uint64) (uint64, error)
}

// DefaultLeaseTTL is how long a holder may go without renewing before a
// newcomer takes the job over, and how long a newcomer watches a held
// lease. It bounds the wait of `aggregator --resume` after a crash, and
// must outlast the checkpoint bucket's unavailability that the job should
// survive (a cluster electing the bucket's leader takes a few seconds).
const DefaultLeaseTTL = 10 * time.Second

// maxEnded bounds the runs a lease record remembers: an agent misses a run
// only if it heard none of that run's announcements, and only the latest
// few can have agents still waiting.
const maxEnded = 16

// leaseVersion is the layout of lease record this build writes and reads.
const leaseVersion = 1

// ErrJobRunning is the refusal to start a second aggregator for a job whose
// lease a live run holds (errors.Is of a *JobRunningError).
var ErrJobRunning = errors.New("the job is being run by another aggregator")

// JobRunningError names the live run that holds the job.
type JobRunningError struct {
	Job, Run string
	Since    time.Time // when the run took the lease, on its holder's clock
	Host     string
	PID      int
}

func (e *JobRunningError) Error() string {
	s := fmt.Sprintf("job %s is being run by run %s since %s; refusing to start a second aggregator", e.Job, e.Run, e.Since.UTC().Format(time.RFC3339))
	if e.Host != "" || e.PID != 0 {
		s += fmt.Sprintf(" (it renews its lease from host %q, pid %d)", e.Host, e.PID)
	}
	return s
}

// Is makes errors.Is(err, ErrJobRunning) hold.
func (e *JobRunningError) Is(target error) bool { return target == ErrJobRunning }

// leaseRecord is the value of the lease key (JSON).
type leaseRecord struct {
	Version int           `json:"version"`
	Run     string        `json:"run"`
	Since   time.Time     `json:"since"`
	Renewed time.Time     `json:"renewed"`
	TTL     time.Duration `json:"ttl_ns"`
	Host    string        `json:"host,omitempty"`
	PID     int           `json:"pid,omitempty"`
	// Ended are the runs that held the job before Run, oldest first.
	Ended []string `json:"ended,omitempty"`
	// Released says that Run ended cleanly: the next run need not wait.
	Released bool `json:"released,omitempty"`
}

func (r leaseRecord) encode() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("aggregator: encode lease record: %w", err)
	}
	return b, nil
}

func decodeLease(b []byte) (leaseRecord, error) {
	var r leaseRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return leaseRecord{}, fmt.Errorf("aggregator: decode lease record: %w", err)
	}
	if r.Version != leaseVersion {
		return leaseRecord{}, fmt.Errorf("aggregator: decode lease record: version %d, want %d", r.Version, leaseVersion)
	}
	if _, ok := bus.RunStart(r.Run); !ok {
		return leaseRecord{}, fmt.Errorf("aggregator: decode lease record: run id %q is not a bus.NewRunID", r.Run)
	}
	return r, nil
}

// LeaseConfig configures AcquireLease.
type LeaseConfig struct {
	Job string
	Run string // the run taking the lease (bus.NewRunID)
	// TTL: see DefaultLeaseTTL (0). A newcomer watches a held lease for
	// the longer of its own TTL and the holder's.
	TTL time.Duration
	// Host and PID name the holder in a refusal (informational).
	Host string
	PID  int
	Now  func() time.Time // nil: time.Now
	// Sleep waits d or until ctx ends (nil: a timer); with Now it is the
	// lease's clock, so that tests can run it on a simulated one.
	Sleep func(ctx context.Context, d time.Duration) error
	Log   zerolog.Logger
}

// Lease is a run's hold on its job (AcquireLease). It renews itself until
// Release; its methods are safe for concurrent use.
type Lease struct {
	cfg   LeaseConfig
	store LeaseStore
	ended []string

	mu       sync.Mutex
	rec      leaseRecord // as last written
	rev      uint64
	lastOK   time.Time // start of the last successful write
	lostErr  error
	released bool

	lost    chan struct{}
	stop    context.CancelFunc
	stopped chan struct{}
}

// AcquireLease takes job cfg.Job's lease for run cfg.Run: at once when the
// job has none or its holder released it, after a TTL when its holder has
// stopped renewing it; it fails with a *JobRunningError when the holder
// renews it meanwhile. The lease then renews itself until Release, which
// its owner must call (it ends the renewal).
func AcquireLease(ctx context.Context, store LeaseStore, cfg LeaseConfig) (*Lease, error) {
	op := "aggregator: lease of job " + cfg.Job
	if _, ok := bus.RunStart(cfg.Run); !ok {
		return nil, fmt.Errorf("%s: run id %q is not a bus.NewRunID", op, cfg.Run)
	}
	if cfg.TTL < 0 {
		return nil, fmt.Errorf("%s: negative ttl %v", op, cfg.TTL)
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultLeaseTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	l := &Lease{cfg: cfg, store: store, lost: make(chan struct{}), stopped: make(chan struct{})}
	// Conflicts mean that another aggregator wrote meanwhile; each is
	// looked at again, and a live writer ends the loop with a refusal.
	const attempts = 8
	for range attempts {
		data, rev, err := store.Get(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		read := cfg.Now()
		var prev *leaseRecord
		if data != nil {
			r, err := decodeLease(data)
			if err != nil {
				// Not ours to overwrite: a record this build cannot read
				// may be a newer build's live lease.
				return nil, fmt.Errorf("%s: revision %d: %w", op, rev, err)
			}
			prev = &r
		}
		if prev != nil && !prev.Released {
			wait := max(cfg.TTL, prev.TTL)
			cfg.Log.Info().Str("job", cfg.Job).Str("holder", prev.Run).Time("since", prev.Since).Str("host", prev.Host).Int("pid", prev.PID).
				Dur("ttl", wait).Msg("the job's lease is held: waiting for it to be renewed (then this aggregator refuses) or to lapse (then it takes the job over)")
			changed, err := l.watch(ctx, rev, read, wait)
			if err != nil {
				return nil, fmt.Errorf("%s: watching run %s's lease: %w", op, prev.Run, err)
			}
			if changed {
				if err := l.refuseIfHeld(ctx); err != nil {
					return nil, err
				}
				continue // released meanwhile
			}
			cfg.Log.Warn().Str("job", cfg.Job).Str("holder", prev.Run).Dur("ttl", wait).
				Msg("the job's lease lapsed (its holder stopped renewing it): taking the job over")
		}
		now := cfg.Now()
		rec := leaseRecord{Version: leaseVersion, Run: cfg.Run, Since: now, Renewed: now, TTL: cfg.TTL, Host: cfg.Host, PID: cfg.PID}
		if prev != nil {
			rec.Ended = append(slices.Clone(prev.Ended), prev.Run)
			rec.Ended = rec.Ended[max(0, len(rec.Ended)-maxEnded):]
		}
		data, err = rec.encode()
		if err != nil {
			return nil, err
		}
		newRev, err := l.write(ctx, data, rev)
		if errors.Is(err, bus.ErrLeaseConflict) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: take: %w", op, err)
		}
		l.rec, l.rev, l.lastOK, l.ended = rec, newRev, now, slices.Clone(rec.Ended)
		rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		l.stop = stop
		go l.keep(rctx)
		from := ""
		if prev != nil {
			from = prev.Run
		}
		cfg.Log.Info().Str("job", cfg.Job).Str("run", cfg.Run).Str("took_over_from", from).Dur("ttl", cfg.TTL).Msg("holding the job's lease")
		return l, nil
	}
	return nil, fmt.Errorf("%s: %d attempts lost to other writers of the lease", op, attempts)
}

// refuseIfHeld reads the record that changed while it was watched: the
// refusal naming its live holder, or nil when it was released.
func (l *Lease) refuseIfHeld(ctx context.Context) error {
	op := "aggregator: lease of job " + l.cfg.Job
	data, rev, err := l.store.Get(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if data == nil {
		return nil
	}
	r, err := decodeLease(data)
	if err != nil {
		return fmt.Errorf("%s: revision %d: %w", op, rev, err)
	}
	if r.Released {
		return nil
	}
	return fmt.Errorf("%s: %w", op, &JobRunningError{Job: l.cfg.Job, Run: r.Run, Since: r.Since, Host: r.Host, PID: r.PID})
}

// watch polls the record until its revision moves from rev (changed) or
// ttl has passed since from without it moving.
func (l *Lease) watch(ctx context.Context, rev uint64, from time.Time, ttl time.Duration) (changed bool, err error) {
	poll := max(ttl/20, time.Millisecond)
	for l.cfg.Now().Sub(from) < ttl {
		if err := l.cfg.Sleep(ctx, poll); err != nil {
			return false, err
		}
		_, cur, err := l.store.Get(ctx)
		if err != nil {
			return false, err
		}
		if cur != rev {
			return true, nil
		}
	}
	return false, nil
}

// write stores data at rev (created when rev is 0). A conflict whose
// record is data itself was this very write, stored by an attempt whose
// acknowledgement was lost: the write succeeded.
func (l *Lease) write(ctx context.Context, data []byte, rev uint64) (uint64, error) {
	var newRev uint64
	var err error
	if rev == 0 {
		newRev, err = l.store.Create(ctx, data)
	} else {
		newRev, err = l.store.Update(ctx, data, rev)
	}
	if errors.Is(err, bus.ErrLeaseConflict) {
		if cur, curRev, gerr := l.store.Get(ctx); gerr == nil && bytes.Equal(cur, data) {
			return curRev, nil
		}
	}
	return newRev, err
}

// keep renews the lease every TTL/4 until Release, or until it is lost:
// taken over (a conflict), or not renewed for a TTL.
func (l *Lease) keep(ctx context.Context) {
	defer close(l.stopped)
	every := l.cfg.TTL / 4
	wait := every
	for {
		if l.cfg.Sleep(ctx, wait) != nil {
			return // released
		}
		err := l.renew(ctx, every)
		if err == nil {
			wait = every
			continue
		}
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		late := l.cfg.Now().Sub(l.lastOK)
		l.mu.Unlock()
		switch {
		case errors.Is(err, bus.ErrLeaseConflict) && l.adoptOwn(ctx):
			wait = 0 // an earlier renewal was stored after all: renew on top of it
			continue
		case errors.Is(err, bus.ErrLeaseConflict):
			l.markLost(fmt.Errorf("aggregator: lease of job %s: taken over by another aggregator: %w", l.cfg.Job, err))
			return
		case late >= l.cfg.TTL:
			l.markLost(fmt.Errorf("aggregator: lease of job %s: not renewed for %v (ttl %v), so another aggregator may have taken the job over: %w",
				l.cfg.Job, late.Round(time.Millisecond), l.cfg.TTL, err))
			return
		}
		l.cfg.Log.Warn().Err(err).Str("job", l.cfg.Job).Dur("unrenewed", late).Dur("ttl", l.cfg.TTL).Msg("renewing the job's lease failed; retrying")
		wait = max(every/5, time.Millisecond)
	}
}

// renew rewrites the record with a fresh renewal time, within bound.
func (l *Lease) renew(ctx context.Context, bound time.Duration) error {
	l.mu.Lock()
	rec, rev := l.rec, l.rev
	l.mu.Unlock()
	sent := l.cfg.Now()
	rec.Renewed = sent
	data, err := rec.encode()
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	newRev, err := l.write(wctx, data, rev)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.rec, l.rev, l.lastOK = rec, newRev, sent
	l.mu.Unlock()
	return nil
}

// adoptOwn reports whether the record that a renewal conflicted with is
// still this run's: a renewal that timed out here was stored all the same,
// and moved the revision on. Only this run writes records naming it (run
// ids are random), so such a record is no other aggregator's. Its revision
// is taken; the time of the last successful renewal stays the earlier one,
// which is the safe side.
func (l *Lease) adoptOwn(ctx context.Context) bool {
	data, rev, err := l.store.Get(ctx)
	if err != nil || data == nil {
		return false
	}
	r, err := decodeLease(data)
	if err != nil || r.Run != l.cfg.Run || r.Released {
		return false
	}
	l.mu.Lock()
	l.rec, l.rev = r, rev
	l.mu.Unlock()
	return true
}

func (l *Lease) markLost(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr == nil {
		l.lostErr = err
		close(l.lost)
	}
	l.cfg.Log.Error().Err(err).Str("job", l.cfg.Job).Str("run", l.cfg.Run).Msg("the job's lease is lost: this aggregator stops")
}

// Run is the run holding the lease.
func (l *Lease) Run() string { return l.cfg.Run }

// Ended are the runs that held the job before this one, oldest first.
func (l *Lease) Ended() []string { return slices.Clone(l.ended) }

// Held returns nil while the run holds the lease: not released, not lost,
// and renewed within the TTL, on the lease's own clock (LeaseConfig.Now),
// which measures what a newcomer measures.
func (l *Lease) Held() error {
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lostErr != nil:
		return l.lostErr
	case l.released:
		return fmt.Errorf("aggregator: lease of job %s: released by run %s", l.cfg.Job, l.cfg.Run)
	case now.Sub(l.lastOK) >= l.cfg.TTL:
		return fmt.Errorf("aggregator: lease of job %s: not renewed for %v (ttl %v), so another aggregator may have taken the job over",
			l.cfg.Job, now.Sub(l.lastOK).Round(time.Millisecond), l.cfg.TTL)
	}
	return nil
}

// Lost is closed when the lease is lost (Held says why).
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Release ends the renewal and, unless the lease was lost, marks the
// record released so that the next run takes the job over without waiting
// for a TTL. Held fails from its start: the run publishes nothing more.
// Later calls do nothing.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	l.released = true
	l.mu.Unlock()
	l.stop()
	<-l.stopped
	l.mu.Lock()
	rec, rev, lost := l.rec, l.rev, l.lostErr
	l.mu.Unlock()
	if lost != nil {
		return nil // nothing of this run's to release
	}
	rec.Released, rec.Renewed = true, l.cfg.Now()
	data, err := rec.encode()
	if err != nil {
		return err
	}
	if _, err := l.write(ctx, data, rev); err != nil {
		return fmt.Errorf("aggregator: lease of job %s: release (the next aggregator waits for it to lapse): %w", l.cfg.Job, err)
	}
	l.cfg.Log.Debug().Str("job", l.cfg.Job).Str("run", l.cfg.Run).Msg("released the job's lease")
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MemLeaseStore is the in-memory double of a LeaseStore
// (bus.JetStreamRunLease on NATS). Safe for concurrent use.
type MemLeaseStore struct {
	mu   sync.Mutex
	data []byte
	rev  uint64
}

// Get implements LeaseStore.
func (s *MemLeaseStore) Get(context.Context) ([]byte, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.data), s.rev, nil
}

// Create implements LeaseStore.
func (s *MemLeaseStore) Create(_ context.Context, data []byte) (uint64, error) {
	return s.Update(context.Background(), data, 0)
}

// Update implements LeaseStore.
func (s *MemLeaseStore) Update(_ context.Context, data []byte, rev uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev != s.rev {
		return 0, fmt.Errorf("aggregator: mem lease store: revision %d, latest %d: %w", rev, s.rev, bus.ErrLeaseConflict)
	}
	s.data = slices.Clone(data)
	s.rev++
	return s.rev, nil
}
