package bus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The security tests run a real embedded server configured by ServerConfig
// from a fresh Deployment, and connect each party with its seed file, as a
// deployment does. Refusals are observed deterministically: a publisher
// sends a probe and then a fence on one connection, so a subscriber that
// holds the fence has seen the probe if it was delivered at all; a client
// learns of its refused operations only asynchronously, so it ends each
// check with a subscription every role is refused (a marker) and reads its
// error log up to that marker's violation.

const secJob = "j1"

var secBanks = []string{"bank-a", "bank-b", "bank-c"}

type secEnv struct {
	dep   *Deployment
	ring  *Keyring
	srv   *Server
	seeds map[string]string // party id -> seed file
}

func startSecureServer(t *testing.T) *secEnv {
	t.Helper()
	dep, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := dep.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	conf, err := ServerConfig(ring, ServerConfigOptions{Listen: "127.0.0.1:4222"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	e := &secEnv{dep: dep, ring: ring, seeds: map[string]string{}}
	for _, c := range dep.Creds {
		p := filepath.Join(dir, c.ID+".nk")
		if err := WriteSeedFile(p, secJob, c); err != nil {
			t.Fatal(err)
		}
		e.seeds[c.ID] = p
	}
	// Port -1: the configuration's 4222 may be taken on a test machine.
	srv, err := StartServer(ServerOptions{ConfigFile: path, Port: -1, StoreDir: filepath.Join(dir, "js")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	e.srv = srv
	return e
}

// party is one party's connection with its asynchronous error log and the
// fence messages it received.
type party struct {
	id    string
	nc    *nats.Conn
	errs  chan error
	fence chan *nats.Msg
	marks int
}

func (e *secEnv) connect(t *testing.T, id string) *party {
	t.Helper()
	return connectParty(t, e.srv.ClientURL(), id, e.seeds[id])
}

// connectParty connects party id to url with its seed file.
func connectParty(t *testing.T, url, id, seed string) *party {
	t.Helper()
	p := &party{id: id, errs: make(chan error, 1024), fence: make(chan *nats.Msg, 1024)}
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
	for _, s := range fenceSubjects(id) {
		if _, err := nc.ChanSubscribe(s, p.fence); err != nil {
			t.Fatal(err)
		}
	}
	p.flush(t)
	if v := p.violations(t); len(v) > 0 {
		t.Fatalf("%s: violations on connecting: %v", id, v)
	}
	return p
}

func (p *party) flush(t *testing.T) {
	t.Helper()
	if err := p.nc.FlushTimeout(5 * time.Second); err != nil {
		t.Fatalf("%s: flush: %v", p.id, err)
	}
}

// violations returns the permission violations the server reported to p
// since the last call: it subscribes to a marker subject no role may read
// and collects errors until the marker's own violation arrives.
func (p *party) violations(t *testing.T) []string {
	t.Helper()
	p.marks++
	marker := fmt.Sprintf("gf.%s.marker.m%d", secJob, p.marks)
	sub, err := p.nc.SubscribeSync(marker)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	var out []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case err := <-p.errs:
			if strings.Contains(err.Error(), `"`+marker+`"`) {
				return out
			}
			out = append(out, err.Error())
		case <-timeout:
			t.Fatalf("%s: no violation for marker %s; saw %v", p.id, marker, out)
		}
	}
}

// refused reports whether one of vs is a permission violation for op
// ("Publish" or "Subscription") on subject.
func refused(vs []string, op, subject string) bool {
	for _, v := range vs {
		if strings.Contains(v, "Permissions Violation for "+op+` to "`+subject+`"`) {
			return true
		}
	}
	return false
}

// fenceSubjects are what party id reads to learn that a publisher's earlier
// messages have all been delivered; fenceFor picks the one pub can publish.
func fenceSubjects(id string) []string {
	switch id {
	case AggregatorID:
		return []string{Subject(secJob, KindUpdate, "*")}
	case AuditorID:
		return []string{Subject(secJob, KindMetrics, "*"), Subject(secJob, KindRound)}
	}
	return []string{Subject(secJob, KindEmb, "*", id), Subject(secJob, KindModel, id)}
}

func fenceFor(who, pub string) string {
	switch {
	case who == AggregatorID:
		return Subject(secJob, KindUpdate, pub)
	case who == AuditorID && pub == AggregatorID:
		return Subject(secJob, KindRound)
	case who == AuditorID:
		return Subject(secJob, KindMetrics, pub)
	case pub == AggregatorID:
		return Subject(secJob, KindModel, who)
	}
	return Subject(secJob, KindEmb, pub, who)
}

// awaitFence waits for the fence with payload tag on p and returns the
// fence-channel messages that came before it, as "subject payload".
func (p *party) awaitFence(t *testing.T, tag string) []string {
	t.Helper()
	var before []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-p.fence:
			if string(m.Data) == tag {
				return before
			}
			before = append(before, m.Subject+" "+string(m.Data))
		case <-timeout:
			t.Fatalf("%s: fence %s not delivered", p.id, tag)
		}
	}
}

func (p *party) publish(t *testing.T, subject, data string) {
	t.Helper()
	if err := p.nc.Publish(subject, []byte(data)); err != nil {
		t.Fatalf("%s: publish %s: %v", p.id, subject, err)
	}
}

// drain returns the payloads queued on ch.
func drain(ch chan *nats.Msg) []string {
	var out []string
	for {
		select {
		case m := <-ch:
			out = append(out, m.Subject+" "+string(m.Data))
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
