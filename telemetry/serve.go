package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server serves a registry's /metrics on one address until its context
// ends.
type Server struct {
	addr net.Addr
	srv  *http.Server
	done chan struct{} // closed when the server stopped serving
}

// Serve listens on addr (HOST:PORT; port 0 picks a free one, Addr tells
// which) and serves h at /metrics until ctx ends or Shutdown is called.
// The listener is bound when Serve returns, so a scraper may connect at
// once.
func Serve(ctx context.Context, addr string, h http.Handler) (*Server, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("telemetry: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	s := &Server{addr: ln.Addr(), done: make(chan struct{}),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln) // http.ErrServerClosed after Shutdown
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Shutdown(context.Background())
		case <-s.done:
		}
	}()
	return s, nil
}

// Done is closed once the server has stopped serving.
func (s *Server) Done() <-chan struct{} { return s.done }

// Addr is the address the server listens on (the port chosen for port 0).
func (s *Server) Addr() net.Addr { return s.addr }

// Shutdown stops the server, waiting at most 5 s (and not past ctx) for
// scrapes in flight; it may be called more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("telemetry: shutdown %s: %w", s.addr, err)
	}
	return nil
}
