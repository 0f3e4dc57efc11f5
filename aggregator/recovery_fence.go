package aggregator

import "fmt"

// The server's side of the run lease (recovery_lease.go): what it
// announces, and the checks that keep a run whose lease lapsed from
// acting on the job that another run may have taken over.

// ended are the runs that ended before this one, announced with the run
// id (none without a lease).
func (c ServerConfig) ended() []string {
	if c.Lease == nil {
		return nil
	}
	return c.Lease.Ended()
}

// leaseHeld returns nil while the server may act: it holds its lease, or
// has none (a server that is not durable).
func (s *Server) leaseHeld() error {
	if s.cfg.Lease == nil {
		return nil
	}
	if err := s.cfg.Lease.Held(); err != nil {
		return &fatalError{fmt.Errorf("aggregator: job %s, run %s: %w", s.cfg.Job, s.cfg.Run, err)}
	}
	return nil
}

// leaseLost is closed when the lease is lost; nil (never ready) without one.
func (s *Server) leaseLost() <-chan struct{} {
	if s.cfg.Lease == nil {
		return nil
	}
	return s.cfg.Lease.Lost()
}
