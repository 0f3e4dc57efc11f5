package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"graphfed/bus"
)

// JobStopped is Run's error when the aggregator stopped the job before its
// last round (a done of the agent's run with a stop reason): the agent
// leaves at once, without a final evaluation.
type JobStopped struct {
	Client, Reason string
	Rounds         uint64 // rounds the aggregator closed
}

func (e *JobStopped) Error() string {
	return fmt.Sprintf("agent %s: the aggregator stopped the job after %d rounds: %s", e.Client, e.Rounds, e.Reason)
}

// goodbyeWait bounds saying goodbye after Run's context ended.
const goodbyeWait = 2 * time.Second

// goodbye tells the aggregator that the agent leaves (ctx ended: SIGINT,
// SIGTERM), so that the open round closes without waiting for it.
func (a *Agent) goodbye(ctx context.Context) {
	reason := "interrupted"
	if c := context.Cause(ctx); c != nil {
		reason = "interrupted: " + c.Error()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), goodbyeWait)
	defer cancel()
	subj := bus.Subject(a.cfg.Job, bus.KindBye, a.cfg.Client)
	err := errors.Join(a.ep.Publish(sctx, subj, bus.KindBye, uint64(a.m.Rounds()), &bus.Bye{Reason: reason}), a.ep.Transport().Flush(sctx))
	if err != nil {
		a.cfg.Log.Warn().Err(err).Str("client", a.cfg.Client).Msg("saying goodbye failed: the aggregator waits for this agent until the round's deadline")
		return
	}
	a.cfg.Log.Info().Str("client", a.cfg.Client).Str("reason", reason).Msg("said goodbye")
}

// stopNotice reports whether m is the aggregator's notice that it stopped
// the job, for the agent's run: it is checked when it arrives, ahead of
// its turn in the queue, so that an agent leaves as soon as its current
// step is done, whatever else is queued.
// It counts no rejects (the queue's turn does).
func (a *Agent) stopNotice(m bus.Msg) (*JobStopped, bool) {
	if m.Subject != bus.Subject(a.cfg.Job, bus.KindDone) {
		return nil, false
	}
	var d bus.Done
	if _, err := a.ep.OpenFrom(m.Data, bus.KindDone, bus.AggregatorID, &d); err != nil || d.Stopped == "" {
		return nil, false
	}
	if a.runs.Check(&d, false) != nil {
		return nil, false
	}
	return &JobStopped{Client: a.cfg.Client, Reason: d.Stopped, Rounds: d.Rounds}, true
}
