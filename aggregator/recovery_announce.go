package aggregator

import (
	"context"
	"time"
)

// Core NATS keeps no messages: an announcement lost to a server restart, a
// node failover or a client that (re)subscribed after it would leave the
// clients idle until the round's deadline. The server therefore announces
// again what clients may have missed; every announcement is idempotent at
// the agent (a model it has, a round it trained, done twice).

// resendRound marks the open round for announcing again after a client
// (re)joined while it was open: a restarted agent subscribed after the
// announcement, and would otherwise sit out the round and hold its quorum
// up until the deadline. Clients that have the round already ignore the
// repeat. The announcement is a broadcast to every client, so one per
// join made joining quadratic: 1,000 joins sent a million round messages
// and the agents spent their time decoding them. flushResend sends one
// for all the joins of a batch.
func (s *Server) resendRound(ev Event, acts []Action) {
	if _, ok := ResendRound(s.machine, ev, acts); ok {
		s.resendDue = true
	}
}

// resendGap is the least time between two coalesced round re-announcements.
const resendGap = 100 * time.Millisecond

// flushResend announces the open round once for the joins marked since the
// last flush, at most every resendGap.
func (s *Server) flushResend(ctx context.Context) error {
	now := s.cfg.Now()
	if !s.resendDue || now.Sub(s.resentAt) < resendGap {
		return nil
	}
	s.resendDue, s.resentAt = false, now
	if !s.machine.open {
		return nil // a round closed since; its successor was announced
	}
	return s.act(ctx, s.machine.openRound())
}

// reannounce publishes the latest models (the global one, or each
// client's personalized one) and the open round again, or done once the
// job is finished.
func (s *Server) reannounce(ctx context.Context) error {
	m := s.machine
	s.cfg.Log.Debug().Uint64("round", m.round).Bool("open", m.open).Bool("finished", m.finished).Msg("announcing again")
	for _, p := range m.models {
		if err := s.act(ctx, p); err != nil {
			return err
		}
	}
	switch {
	case m.open:
		return s.act(ctx, m.openRound())
	case m.finished:
		// Not through act: done again must not restart the final wait.
		if err := s.leaseHeld(); err != nil {
			return err
		}
		o := s.cfg.Outbound(Anchored(Finished{Rounds: m.closed}, s.anchor()))[0]
		return s.ep.Publish(ctx, o.Subject, o.Kind, o.Round, o.Body)
	}
	return nil
}

// newsTimer paces re-announcements: due after every quiet spell of wait,
// which doubles after each re-announcement and resets on news.
type newsTimer struct {
	every, wait time.Duration
	last        time.Time
}

func (n *newsTimer) reset(now time.Time, every time.Duration) {
	n.every, n.wait, n.last = every, every, now
}

func (n *newsTimer) heard(now time.Time) { n.wait, n.last = n.every, now }

func (n *newsTimer) due(now time.Time, most time.Duration) bool {
	if n.every <= 0 || now.Sub(n.last) < n.wait {
		return false
	}
	n.last, n.wait = now, min(2*n.wait, max(most, n.every))
	return true
}

// noteNews resets the re-announcement timer when a step made progress: an
// update counted, a round opened or closed, a model or done went out. It
// reports whether ev was an update the machine accepted.
func (s *Server) noteNews(ev Event, acts []Action) (accepted bool) {
	u, isUpdate := ev.(UpdateIn)
	accepted = isUpdate
	news := false
	for _, a := range acts {
		switch x := a.(type) {
		case Dropped:
			if isUpdate && x.Client == u.Client && x.Round == u.Round {
				accepted = false
			}
		case OpenRound, RoundClosed, PublishModel, Finished:
			news = true
		}
	}
	if news || accepted {
		s.news.heard(s.cfg.Now())
	}
	return accepted
}

// maybeReannounce re-announces after a quiet spell while a round is open
// or the clients' final reports are awaited.
func (s *Server) maybeReannounce(ctx context.Context) error {
	if !s.machine.open && !s.machine.finished {
		return nil
	}
	if !s.news.due(s.cfg.Now(), s.cfg.Round.RoundTimeout) {
		return nil
	}
	return s.reannounce(ctx)
}
