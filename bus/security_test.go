package bus

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The security tests run a real embedded server configured by ServerConfig
// from a fresh Deployment, in the accounts layout `graphfed keys` writes
// (one NATS account per party, JobAccounts), and connect each party with
// its seed file, as a deployment does. The ledger administrator creates
// the per-party ledger streams before any party connects, as `graphfed
// keys ledger` does.
//
// The account is the boundary: a message a party may not receive never
// reaches its account, and a JetStream request on another party's stream
// finds no stream or no responder in the requester's account. (The banks'
// and the auditor's users also have publish allow-lists, so that what
// they may not do is refused visibly, as a permissions violation;
// accounts_permissions.go.) Deliveries are observed with a subscriber on
// ">" in each account, made deterministic on one server by flushing the
// publisher (the server has routed everything it sent) and then the
// subscriber (everything routed to it has been read).

const secJob = "j1"

var secBanks = []string{"bank-a", "bank-b", "bank-c"}

// secWriters are the parties with a ledger stream: the aggregator and the
// banks (the auditor writes none).
var secWriters = append([]string{AggregatorID}, secBanks...)

type secEnv struct {
	dep   *Deployment
	ring  *Keyring
	srv   *Server
	seeds map[string]string // party id, or LedgerAdminID -> seed file
	links [][2]string       // the embedding links of the configuration; nil: every pair
	admin *party            // the ledger administrator, in the ledger account
}

// secOptions shape startSecureServerWith's configuration.
type secOptions struct {
	Links [][2]string // AccountOptions.Links; nil: every ordered pair
	// SecAgg and SecAggPairs: AccountOptions.SecAgg and .SecAggPairs.
	SecAgg      bool
	SecAggPairs [][2]string
}

func startSecureServer(t *testing.T) *secEnv { return startSecureServerWith(t, secOptions{}) }

// startSecureServerWith writes the configuration of a fresh deployment,
// every party's seed file and the ledger administrator's, starts the
// server and creates the ledger streams with the administrator's
// connection.
func startSecureServerWith(t *testing.T, o secOptions) *secEnv {
	t.Helper()
	dep, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := dep.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	conf, err := ServerConfig(ring, ServerConfigOptions{Listen: "127.0.0.1:4222", LedgerAdmin: dep.LedgerAdmin.PublicKey, Links: o.Links,
		SecAgg: o.SecAgg, SecAggPairs: o.SecAggPairs})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	e := &secEnv{dep: dep, ring: ring, seeds: writeSeeds(t, dir, dep), links: o.Links}
	// Port -1: the configuration's 4222 may be taken on a test machine.
	srv, err := StartServer(ServerOptions{ConfigFile: path, Port: -1, StoreDir: filepath.Join(dir, "js")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	e.srv = srv
	e.admin = e.connect(t, LedgerAdminID)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := CreateLedgerStreams(ctx, e.admin.nc, secJob, secWriters, JSLedgerOptions{}); err != nil {
		t.Fatalf("the ledger administrator creating the ledger streams: %v", err)
	}
	return e
}

// writeSeeds writes the seed file of every party of dep and of its ledger
// administrator in dir, and returns their paths by id.
func writeSeeds(t *testing.T, dir string, dep *Deployment) map[string]string {
	t.Helper()
	seeds := map[string]string{}
	for _, c := range append(append([]Credential(nil), dep.Creds...), dep.LedgerAdmin) {
		p := filepath.Join(dir, c.ID+".nk")
		if err := WriteSeedFile(p, dep.Job, c); err != nil {
			t.Fatal(err)
		}
		seeds[c.ID] = p
	}
	return seeds
}

// party is one party's connection with its asynchronous error log.
type party struct {
	id   string
	nc   *nats.Conn
	errs chan error
	// stash holds the asynchronous errors request read past while
	// waiting for its own; asyncErrors returns them.
	stash []string
}

func (e *secEnv) connect(t *testing.T, id string) *party {
	t.Helper()
	return connectParty(t, e.srv.ClientURL(), id, e.seeds[id])
}

// connectParty connects party id to url with its seed file.
func connectParty(t *testing.T, url, id, seed string) *party {
	t.Helper()
	p := &party{id: id, errs: make(chan error, 1<<16)}
	nc, err := Connect(url, ConnectOptions{Name: id, Creds: seed, OnError: func(err error) {
		select {
		case p.errs <- err:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	p.nc = nc
	p.flush(t)
	if errs := p.asyncErrors(t); len(errs) > 0 {
		t.Fatalf("%s: asynchronous errors on connecting: %v", id, errs)
	}
	return p
}

func (p *party) flush(t *testing.T) {
	t.Helper()
	if err := p.nc.FlushTimeout(10 * time.Second); err != nil {
		t.Fatalf("%s: flush: %v", p.id, err)
	}
}

// markerSubject is a fresh subject p may publish on under any
// publish allow-list the layout gives its user, and that stays in its own
// account or leads to no answer: the auditor's read request on the
// aggregator's ledger stream (sent without a reply), an object-store
// subject of a bank's own account that no bucket holds, an inbox of
// anyone else.
func (p *party) markerSubject() string {
	switch {
	case p.id == AuditorID:
		return LedgerAPIPrefix + ".STREAM.INFO." + LedgerPartyStreamName(secJob, AggregatorID)
	case p.id == AggregatorID || p.id == LedgerAdminID:
		return p.nc.NewInbox()
	}
	return "$O.GFMARKER." + strings.TrimPrefix(p.nc.NewInbox(), InboxPrefix(""))
}

// asyncErrors returns the asynchronous errors the server and the client
// library reported to p since the last call (permission violations, a
// payload or subscription limit, a slow consumer), without waiting on a
// clock. nats.go hands them to the error handler in order, on one
// goroutine. After a flush every -ERR the server sent before its PONG has
// been queued there; a deliberate slow consumer (two messages on a
// subscription with a pending limit of one) then queues a marker error
// behind them, so the marker's arrival means that every earlier error has
// been handed over.
func (p *party) asyncErrors(t *testing.T) []string {
	t.Helper()
	p.flush(t)
	marker := p.markerSubject()
	sub, err := p.nc.SubscribeSync(marker)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := sub.SetPendingLimits(1, -1); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		p.publish(t, marker, "marker")
	}
	p.flush(t)
	out := p.stash
	p.stash = nil
	timeout := time.After(30 * time.Second)
	for {
		select {
		case err := <-p.errs:
			if errors.Is(err, nats.ErrSlowConsumer) {
				return out
			}
			out = append(out, err.Error())
		case <-timeout:
			t.Fatalf("%s: the marker error never arrived; saw %v", p.id, out)
		}
	}
}

// request sends a request and returns its answer, or refused when the
// server refused the publish (a permission violation on subject, which it
// reports instead of an answer) or nobody answers it (no responders: the
// subject leads to no service in p's account). It waits for one or the
// other, not on a clock: the 30 s deadline only bounds a hang.
func (p *party) request(t *testing.T, subject, body string) (m *nats.Msg, refused bool) {
	t.Helper()
	ch := make(chan *nats.Msg, 1)
	inbox := p.nc.NewInbox()
	sub, err := p.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := p.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: inbox, Data: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	if err := p.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	violation := "Permissions Violation for Publish to " + strconv.Quote(subject)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m := <-ch:
			if m.Header.Get("Status") == "503" {
				return nil, true
			}
			return m, false
		case err := <-p.errs:
			if strings.Contains(err.Error(), violation) {
				return nil, true
			}
			p.stash = append(p.stash, err.Error())
		case <-timeout:
			t.Fatalf("%s: %s: neither an answer nor a refusal", p.id, subject)
		}
	}
}

// listen subscribes to everything that reaches p's account, on a channel
// large enough for any test here.
func (p *party) listen(t *testing.T) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 1<<16)
	sub, err := p.nc.ChanSubscribe(">", ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	p.flush(t)
	return ch
}

func (p *party) publish(t *testing.T, subject, data string) {
	t.Helper()
	if err := p.nc.Publish(subject, []byte(data)); err != nil {
		t.Fatalf("%s: publish %s: %v", p.id, subject, err)
	}
}

// drain returns the messages queued on ch whose payload starts with one
// of prefixes, as "subject payload", and drops the others.
func drain(ch chan *nats.Msg, prefixes ...string) []string {
	var out []string
	for {
		select {
		case m := <-ch:
			for _, prefix := range prefixes {
				if strings.HasPrefix(string(m.Data), prefix) {
					out = append(out, m.Subject+" "+string(m.Data))
					break
				}
			}
		default:
			return out
		}
	}
}

func contains(got []string, want string) bool {
	for _, g := range got {
		if g == want {
			return true
		}
	}
	return false
}
