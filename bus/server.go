package bus

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"
)

// DefaultMaxPayload is the embedded server's payload limit (64 MiB). Larger
// models go through the JetStream object store by reference.
const DefaultMaxPayload = 64 << 20

// ServerOptions configure an embedded nats-server. The zero value is a
// loopback server on a random port with JetStream in a temporary directory.
type ServerOptions struct {
	Host     string // default 127.0.0.1
	Port     int    // 0 or -1: a random free port
	StoreDir string // JetStream store; empty: the configuration's, else DefaultStoreDir
	// DefaultStoreDir is the JetStream store when neither StoreDir nor the
	// configuration file names one (created 0700 if missing); empty: a
	// temporary directory removed on Shutdown. `graphfed server` sets a
	// persistent one, so that a restart keeps the privacy ledger.
	DefaultStoreDir string
	MaxPayload      int32         // default: the configuration's, else DefaultMaxPayload
	NoJetStream     bool          // JetStream is on unless this is set
	ReadyTimeout    time.Duration // default 10s
	ConfigFile      string        // optional nats-server configuration file (credentials, cluster); flags above override
	ServerName      string
	// AsyncFsync lets JetStream acknowledge before fsync (the nats-server
	// default: fsync every ~2 minutes). By default graphfed's embedded server
	// fsyncs every write before acknowledging it, because the privacy ledger
	// must be durable before a release is published.
	AsyncFsync bool
	// Cluster makes the server a node of a cluster: its route listener and
	// the other nodes' routes (ServerName is then required, JetStream names
	// its peers by it). Route credentials are optional here, for loopback
	// test clusters; a deployment's nodes use ServerConfig's files.
	Cluster *ClusterOptions
	// Logger receives the server's log as structured lines: what it
	// refused (permission violations, failed logins, slow consumers,
	// limits hit) at warn level with an event field, its other warnings
	// and errors, its notices at debug (server_log.go). Nil: the server
	// writes nothing, as before; its events are counted either way
	// (Server.Events).
	Logger *zerolog.Logger
	// LogLimit bounds the lines a flood of events writes (zero: the
	// defaults). Events are counted whether or not their line is written.
	LogLimit LogLimit
}

// Server is a running embedded nats-server.
type Server struct {
	ns       *server.Server
	tempDir  string
	storeDir string
	auth     bool
	payload  int32
	log      *serverLog // the server's logger: its event counts, and its lines if asked for
}

// StartServer starts an embedded nats-server and waits until it accepts
// connections.
func StartServer(o ServerOptions) (*Server, error) {
	opts := &server.Options{}
	if o.ConfigFile != "" {
		fo, err := server.ProcessConfigFile(o.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("bus: start server: config %s: %w", o.ConfigFile, err)
		}
		opts = fo
	}
	if o.Host != "" || opts.Host == "" {
		opts.Host = o.Host
		if opts.Host == "" {
			opts.Host = "127.0.0.1"
		}
	}
	if o.Port != 0 || opts.Port == 0 {
		opts.Port = o.Port
		if opts.Port == 0 {
			opts.Port = -1
		}
	}
	if o.ServerName != "" {
		opts.ServerName = o.ServerName
	}
	// The configuration's payload limit (the job's, from graphfed keys)
	// stands unless the options name one.
	if o.MaxPayload != 0 {
		opts.MaxPayload = o.MaxPayload
	}
	if opts.MaxPayload == 0 {
		opts.MaxPayload = DefaultMaxPayload
	}
	// The server refuses a payload limit above its pending limit.
	if opts.MaxPending < 2*int64(opts.MaxPayload) {
		opts.MaxPending = 2 * int64(opts.MaxPayload)
	}
	if o.Cluster != nil {
		if err := setCluster(opts, *o.Cluster); err != nil {
			return nil, fmt.Errorf("bus: start server: cluster: %w", err)
		}
	}
	opts.NoSigs = true
	// NoLog keeps nats-server from installing its own stderr logger, on
	// start or on a configuration reload: the server logs to s.log alone.
	opts.NoLog = true
	s := &Server{}
	if !o.NoJetStream {
		opts.JetStream = true
		opts.SyncAlways = !o.AsyncFsync
		if o.StoreDir != "" {
			opts.StoreDir = o.StoreDir
		}
		if opts.StoreDir == "" && o.DefaultStoreDir != "" {
			if err := os.MkdirAll(o.DefaultStoreDir, 0o700); err != nil {
				return nil, fmt.Errorf("bus: start server: jetstream store: %w", err)
			}
			opts.StoreDir = o.DefaultStoreDir
		}
		if opts.StoreDir == "" {
			dir, err := os.MkdirTemp("", "graphfed-js-")
			if err != nil {
				return nil, fmt.Errorf("bus: start server: jetstream store: %w", err)
			}
			s.tempDir = dir
			opts.StoreDir = dir
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		s.cleanup()
		return nil, fmt.Errorf("bus: start server: %w", err)
	}
	s.ns = ns
	// Before Start, so that the start-up lines and every refusal from the
	// first connection on are seen. Neither debug nor trace: the refusals
	// are Errorf, Warnf and Noticef lines in nats-server v2.15, and trace
	// would log every message.
	s.log = newServerLog(o.Logger, o.LogLimit)
	ns.SetLoggerV2(s.log, false, false, false)
	s.storeDir = opts.StoreDir
	s.payload = opts.MaxPayload
	s.auth = len(opts.Nkeys) > 0 || len(opts.Users) > 0 || opts.Username != "" || opts.Authorization != "" || len(opts.TrustedOperators) > 0
	ns.Start()
	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	if !ns.ReadyForConnections(timeout) {
		ns.Shutdown()
		s.log.close()
		s.cleanup()
		return nil, errors.New("bus: start server: not ready for connections within " + timeout.String())
	}
	return s, nil
}

// MaxPayload is the server's payload limit: the largest message it takes.
func (s *Server) MaxPayload() int { return int(s.payload) }

// ClientURL is the nats:// URL clients connect to.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// StoreDir is the JetStream store directory ("" without JetStream).
func (s *Server) StoreDir() string { return s.storeDir }

// Temporary says the store is removed on Shutdown.
func (s *Server) Temporary() bool { return s.tempDir != "" }

// Authenticated says clients must log in (the configuration lists users,
// NKeys, a token or trusted operators).
func (s *Server) Authenticated() bool { return s.auth }

// Events counts the server's log events by kind and reason (the
// ServerEvent* kinds; every known pair, zeros included), whether or not
// their lines were written. Lines the server itself rate-limits (it logs
// a subscription limit once per account every few seconds, and an
// account's JetStream limit once per message text) count once per line.
func (s *Server) Events() map[ServerEventKey]int64 { return s.log.events() }

// Refusals sums Events over reasons for the refusal kinds:
// permission_violation, authorization_failure, slow_consumer, limit.
func (s *Server) Refusals() map[string]int64 {
	out := map[string]int64{}
	for _, k := range serverRefusalKinds() {
		out[k] = 0
	}
	for k, n := range s.log.events() {
		if _, ok := out[k.Kind]; ok {
			out[k.Kind] += n
		}
	}
	return out
}

// LogSuppressed counts, by kind, the events whose line the LogLimit held
// back (always zero without a Logger: nothing is written at all).
func (s *Server) LogSuppressed() map[string]int64 { return s.log.suppressedByKind() }

// NATS exposes the underlying server for in-process connections and tests.
func (s *Server) NATS() *server.Server { return s.ns }

// Shutdown stops the server and removes a temporary store.
func (s *Server) Shutdown() {
	if s.ns != nil {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
	}
	// After the server stopped: the last interval's suppressed counts
	// are written once nothing more can come.
	s.log.close()
	s.cleanup()
}

func (s *Server) cleanup() {
	if s.tempDir != "" {
		os.RemoveAll(s.tempDir)
		s.tempDir = ""
	}
}

// setCluster applies c to opts: the route listener, the route credentials
// if any, and a route to every other node.
func setCluster(opts *server.Options, c ClusterOptions) error {
	if opts.ServerName == "" {
		return errors.New("a cluster node needs a server name")
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("listen %q: %w", c.Listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("listen %q: port: %w", c.Listen, err)
	}
	opts.Cluster.Name = c.Name
	if opts.Cluster.Name == "" {
		opts.Cluster.Name = "graphfed"
	}
	opts.Cluster.Host, opts.Cluster.Port = host, p
	opts.Cluster.Username, opts.Cluster.Password = c.User, c.Password
	opts.Routes = nil
	for _, r := range c.Routes {
		u := &url.URL{Scheme: "nats-route", Host: r}
		if c.User != "" {
			u.User = url.UserPassword(c.User, c.Password)
		}
		opts.Routes = append(opts.Routes, u)
	}
	return nil
}
