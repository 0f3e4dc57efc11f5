package aggregator

import (
	"context"
	"errors"
	"fmt"

	"graphfed/bus"
)

// StoppedError is what Run returns when its context ended before the job
// finished: the result so far comes with it, and the agents were told
// (a done with Stopped set) unless Notified is false.
type StoppedError struct {
	Job, Reason string
	Rounds      uint64 // rounds closed
	Notified    bool
	Err         error // the notice's failure, when not Notified
}

func (e *StoppedError) Error() string {
	s := fmt.Sprintf("aggregator: job %s stopped after %d rounds: %s", e.Job, e.Rounds, e.Reason)
	if !e.Notified {
		s += fmt.Sprintf(" (the agents were not told: %v)", e.Err)
	}
	return s
}

func (e *StoppedError) Unwrap() error { return e.Err }

// StopReason is why ctx ended: its cause (the signal the CLI received)
// when one was given, else its error.
func StopReason(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil {
		return c.Error()
	}
	return "stopped"
}

// stop ends a run whose context ended: it tells the agents that the job
// stopped, with the reason, in a done of this run signed like every other
// envelope, so that they exit at once instead of waiting for rounds that
// will not come. A durable server's checkpoint is left as it is (the done
// goes through no machine step): the job can be resumed. The notice is
// sent under a fresh bound (StopWait), ctx being over.
func (s *Server) stop(ctx context.Context) (Result, error) {
	reason := StopReason(ctx)
	rounds := s.machine.closed
	e := &StoppedError{Job: s.cfg.Job, Reason: reason, Rounds: rounds}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.StopWait)
	defer cancel()
	switch held := s.leaseHeld(); {
	case held != nil:
		// The job may be another run's by now: agents that have not heard
		// of it yet would take our notice and leave its job.
		e.Err = held
	case !s.machine.Finished():
		done := &bus.Done{Rounds: rounds, Run: s.cfg.Run, Ended: s.cfg.ended(), Stopped: reason}
		e.Err = errors.Join(s.ep.Publish(sctx, bus.Subject(s.cfg.Job, bus.KindDone), bus.KindDone, rounds, done), s.tr.Flush(sctx))
		e.Notified = e.Err == nil
	default:
		e.Notified = true // they had the job's done already
		// Stopped while waiting for the final metrics: the done record
		// names the final heads that came in and the last reported for
		// the rest (records_server.go), rather than leave the ledger
		// without one.
		if err := s.recordDone(sctx); err != nil {
			s.cfg.Log.Error().Err(err).Msg("aggregator stopping: the ledger's done record could not be stored; the audit will say the ledger may have lost its tail")
		}
	}
	s.cfg.Log.Warn().Str("job", s.cfg.Job).Str("reason", reason).Uint64("rounds", rounds).Bool("agents_told", e.Notified).
		Err(e.Err).Msg("aggregator stopping: the report so far follows")
	res := s.snapshot()
	res.Stopped = reason
	return res, e
}

// failed ends a run on err, or as stopped when ctx ended meanwhile and
// err is that ending as seen by a store or transport (a cancellation, or a
// request timing out as its context ends, which the stores report as
// such). A stop (SIGINT) that lands while a step's checkpoint is being
// stored fails that store, and the step it would have persisted is not acted on,
// so the earlier checkpoint stands and the run is a stop that can be
// resumed, not a failure (seen in CI: TestProcessSigintAggregator exited
// with the checkpoint's "nats: timeout"). Any other failure stays one.
func (s *Server) failed(ctx context.Context, err error) (Result, error) {
	if ctx.Err() != nil && endedWith(err) {
		s.cfg.Log.Debug().Err(err).Msg("aggregator: the step in progress when the job stopped")
		return s.stop(ctx)
	}
	return s.snapshot(), err
}

// endedWith reports whether err is how a call fails when its context
// ends (stores add the context's end to a timeout it caused, see
// bus.JetStreamCheckpointStore).
func endedWith(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
