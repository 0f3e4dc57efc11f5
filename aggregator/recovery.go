package aggregator

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"graphfed/bus"
)

// durableState is what a durable server tracks beside its machine to write
// checkpoints: where in the update log each update of the open round is.
type durableState struct {
	position   uint64            // log position of the last update applied
	pendingAt  map[string]uint64 // log position of each pending update, by client
	staleAt    []uint64          // log positions of the stale updates folded in, in order
	savedModel uint64            // model round last stored; 0: none
}

// fatalError is a failure after which the server must stop rather than go
// on: it could not store the checkpoint of a step it already took.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

func (s *Server) durable() bool { return s.cfg.Store != nil }

// track follows the log positions of the machine's pending and stale
// updates through one step.
func (s *Server) track(ev Event, lm *bus.LoggedMsg, before uint64, accepted bool, acts []Action) {
	if lm != nil {
		s.dur.position = lm.Seq
		if u, ok := ev.(UpdateIn); ok && accepted {
			if u.Round == before {
				s.dur.pendingAt[u.Client] = lm.Seq
			} else {
				s.dur.staleAt = append(s.dur.staleAt, lm.Seq)
			}
		}
	}
	for _, a := range acts {
		if _, ok := a.(RoundClosed); ok {
			// The close consumed every pending and stale update.
			s.dur.pendingAt = map[string]uint64{}
			s.dur.staleAt = nil
		}
	}
}

// checkpoint stores the machine's state: the model first, under its round,
// if it is new, then the state record that refers to it.
func (s *Server) checkpoint(ctx context.Context) error {
	const op = "aggregator: checkpoint"
	snap := s.machine.Snapshot()
	if len(snap.Models) > 0 && snap.ModelRound != s.dur.savedModel {
		if err := s.cfg.Store.SaveModel(ctx, snap.ModelRound, encodeModels(snap.ModelRound, snap.Models)); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		s.dur.savedModel = snap.ModelRound
	}
	cp := checkpoint{Version: checkpointVersion, Position: s.dur.position}
	snap.Models = nil
	for i := range snap.Pending {
		at, ok := s.dur.pendingAt[snap.Pending[i].Client]
		if !ok {
			return fmt.Errorf("%s: the pending update of %s has no log position", op, snap.Pending[i].Client)
		}
		cp.PendingAt = append(cp.PendingAt, at)
		snap.Pending[i].Params, snap.Pending[i].Grad = nil, nil
	}
	if len(s.dur.staleAt) != len(snap.Stale) {
		return fmt.Errorf("%s: %d log positions for %d stale updates", op, len(s.dur.staleAt), len(snap.Stale))
	}
	cp.StaleAt = slices.Clone(s.dur.staleAt)
	for i := range snap.Stale {
		snap.Stale[i].Params, snap.Stale[i].Grad = nil, nil
	}
	cp.Machine = snap
	s.mu.Lock()
	cp.Closes, cp.Dropped = slices.Clone(s.result.Closes), maps.Clone(s.result.Dropped)
	s.mu.Unlock()
	data, err := cp.encode()
	if err != nil {
		return err
	}
	if err := s.cfg.Store.SaveState(ctx, data); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// restore resumes from the store's latest checkpoint, if there is one: the
// open round's updates are read back from the log, the model from the
// store, and the machine is rebuilt from them.
func (s *Server) restore(ctx context.Context) error {
	const op = "aggregator: resume"
	data, err := s.cfg.Store.LoadState(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if data == nil {
		return nil
	}
	cp, err := decodeCheckpoint(data)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	snap := cp.Machine
	// A job resumed under other round rules would change course midway.
	if !sameConfig(snap.Config, s.machine.cfg) {
		return fmt.Errorf("%s: job %s was checkpointed with %+v; this server is configured with %+v", op, s.cfg.Job, snap.Config, s.machine.cfg)
	}
	// The snapshot does not record code: the configured reference builder
	// goes on building K^R.
	snap.Config = s.machine.cfg
	AdmitSnapshot(s.ep.Validator(), snap)
	if err := s.refill(ctx, snap.Pending, cp.PendingAt); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := s.refill(ctx, snap.Stale, cp.StaleAt); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if snap.ModelRound > 0 {
		b, err := s.cfg.Store.LoadModel(ctx, snap.ModelRound)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if snap.Models, err = decodeModels(b, snap.ModelRound); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	m, err := Restore(snap)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	s.machine = m
	s.dur.position, s.dur.savedModel, s.dur.staleAt = cp.Position, snap.ModelRound, slices.Clone(cp.StaleAt)
	for i, c := range snap.Pending {
		s.dur.pendingAt[c.Client] = cp.PendingAt[i]
	}
	s.result.Closes = cp.Closes
	if cp.Dropped != nil {
		s.result.Dropped = cp.Dropped
	}
	s.result.Resumed, s.result.ResumedRound = true, snap.Round
	if m.Finished() {
		s.doneAt = s.cfg.Now()
	}
	s.cfg.Log.Info().Uint64("round", snap.Round).Bool("open", snap.Open).Int("pending", len(snap.Pending)).
		Uint64("log_position", cp.Position).Uint64("model_round", snap.ModelRound).Msg("resuming from checkpoint")
	return nil
}

// refill reads the vectors of checkpointed contributions back from the
// update log, validating each message again (a signature included).
func (s *Server) refill(ctx context.Context, cs []Contribution, at []uint64) error {
	for i := range cs {
		m, err := s.cfg.Updates.Get(ctx, at[i])
		if err != nil {
			return err
		}
		env, body, err := s.ep.Open(m)
		if err != nil {
			return fmt.Errorf("update of %s at log position %d: %w", cs[i].Client, at[i], err)
		}
		u, ok := body.(*bus.Update)
		if !ok || env.From != cs[i].Client {
			return fmt.Errorf("log position %d holds a %s from %s, not the update of %s", at[i], env.Kind, env.From, cs[i].Client)
		}
		cs[i].Params, cs[i].Grad = u.Params.Floats(), u.Grad.Floats()
	}
	return nil
}

// startLog announces the state a resumed server is in, then consumes the
// update log.
func (s *Server) startLog(ctx context.Context) (func(), error) {
	if s.result.Resumed {
		if err := s.reannounce(ctx); err != nil {
			return nil, err
		}
	}
	stop, err := s.cfg.Updates.Consume(func(lm bus.LoggedMsg) { s.push(queued{msg: lm.Msg, logged: &lm}) },
		func(err error) { s.cfg.Log.Warn().Err(err).Msg("update log") })
	if err != nil {
		return nil, fmt.Errorf("aggregator: run: %w", err)
	}
	return stop, nil
}

// handleLogged applies one update from the durable log.
func (s *Server) handleLogged(ctx context.Context, lm bus.LoggedMsg) error {
	ack := func() {
		if err := lm.Ack(ctx); err != nil {
			s.cfg.Log.Warn().Err(err).Uint64("seq", lm.Seq).Msg("acknowledging an update")
		}
	}
	if lm.Seq == s.dur.position {
		ack() // in the last checkpoint already
		return nil
	}
	env, body, err := s.ep.Open(lm.Msg)
	if err != nil {
		// A rejected update stays rejected: acknowledge it, or it comes back.
		s.cfg.Log.Warn().Str("subject", lm.Subject).Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected message")
		ack()
		return nil
	}
	b, ok := body.(*bus.Update)
	if !ok {
		ack()
		return nil
	}
	ev, err := updateEvent(env.From, b, s.cfg.Now())
	if err != nil {
		s.cfg.Log.Warn().Str("from", env.From).Err(err).Msg("rejected update")
		ack()
		return nil
	}
	err = s.stepFrom(ctx, ev, &lm)
	s.cfg.Log.Debug().Str("client", env.From).Uint64("round", b.Round).Uint64("seq", lm.Seq).
		Uint64("delivered", lm.Delivered).Msg("update applied")
	return err
}
