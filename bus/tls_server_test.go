package bus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// tlsJob is a job's deployment with TLS, as `graphfed keys --tls` makes
// it: seeds, the server configuration with mutual TLS, certificates.
type tlsJob struct {
	dir   string
	conf  string
	seeds map[string]string
	srv   ServerTLS
}

func writeTLSJob(t *testing.T) tlsJob {
	t.Helper()
	dep, err := NewDeployment("tls-1", []string{"bank-a"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := dep.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	j := tlsJob{dir: t.TempDir(), seeds: map[string]string{}}
	var ids []string
	for _, c := range dep.Creds {
		j.seeds[c.ID] = filepath.Join(j.dir, c.ID+".nk")
		if err := WriteSeedFile(j.seeds[c.ID], "tls-1", c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	set, err := GenerateTLSSet(TLSSetOptions{Job: "tls-1", Hosts: []string{"127.0.0.1", "localhost"}, Parties: ids})
	if err != nil {
		t.Fatal(err)
	}
	j.srv = writeTLSSet(t, j.dir, set)
	conf, err := ServerConfig(ring, ServerConfigOptions{Listen: "127.0.0.1:4222"})
	if err != nil {
		t.Fatal(err)
	}
	if conf, err = AddServerTLS(conf, &j.srv); err != nil {
		t.Fatal(err)
	}
	j.conf = filepath.Join(j.dir, "server.conf")
	if err := os.WriteFile(j.conf, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	return j
}

// tlsRefused connects with o and requires that the connection never comes
// up and that the failed dials were logged with their cause, which it
// returns (the log lines). bus.Connect retries a failed first connection
// in the background, so a refusal shows as a connection that stays down.
func tlsRefused(t *testing.T, url string, o ConnectOptions) string {
	t.Helper()
	var logs syncBuffer
	o.ReconnectWait = 50 * time.Millisecond
	o.Events = NewConnEvents("probe", zerolog.New(&logs))
	nc, err := Connect(url, o)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	deadline := time.Now().Add(600 * time.Millisecond)
	for time.Now().Before(deadline) {
		if nc.IsConnected() {
			t.Fatalf("connected to %s with %+v", url, o)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if o.Events.Counts().DialFailures == 0 || !strings.Contains(logs.String(), "cannot reach the server") {
		t.Fatalf("refused without a logged cause: %s", logs.String())
	}
	return logs.String()
}

// A server on a configuration with mutual TLS takes a party that presents
// its job certificate (over tls:// and over nats://, which nats.go
// upgrades), and refuses a client without a certificate, one with a
// certificate of another CA, and one without TLS at all, before any login.
func TestTLSServerRequiresJobCertificates(t *testing.T) {
	j := writeTLSJob(t)
	s, err := StartServer(ServerOptions{ConfigFile: j.conf, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	url := s.ClientURL()
	if !strings.HasPrefix(url, "tls://127.0.0.1:") {
		t.Fatalf("client URL %s: want tls://", url)
	}
	bank := ConnectOptions{Name: "bank-a", Creds: j.seeds["bank-a"], TLSCA: j.srv.CAFile,
		TLSCert: filepath.Join(j.dir, "bank-a.crt"), TLSKey: filepath.Join(j.dir, "bank-a.key")}
	for _, u := range []string{url, "nats://" + strings.TrimPrefix(url, "tls://")} {
		nc, err := Connect(u, bank)
		if err != nil {
			t.Fatal(err)
		}
		if !nc.IsConnected() || !nc.TLSRequired() {
			t.Fatalf("%s: connected %v, status %v, last error %v", u, nc.IsConnected(), nc.Status(), nc.LastError())
		}
		cs, err := nc.TLSConnectionState()
		if err != nil || len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].Subject.Organization[0] != "graphfed job tls-1" {
			t.Fatalf("%s: TLS state %+v, %v", u, cs, err)
		}
		// The login behind TLS is the party's: it may publish as itself.
		if err := nc.Publish("gf.tls-1.hello.bank-a", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		nc.Close()
	}

	noCert := bank
	noCert.TLSCert, noCert.TLSKey = "", ""
	// TLS 1.3 clients learn of the refusal after their handshake: the
	// server's alert ("certificate required") or the closed connection.
	if l := tlsRefused(t, url, noCert); !strings.Contains(l, "tls") {
		t.Fatalf("without a certificate: %s", l)
	}

	other, err := GenerateTLSSet(TLSSetOptions{Job: "tls-1", Hosts: []string{"127.0.0.1"}, Parties: []string{"bank-a"}})
	if err != nil {
		t.Fatal(err)
	}
	otherDir := t.TempDir()
	writeTLSSet(t, otherDir, other)
	foreign := bank
	foreign.TLSCert, foreign.TLSKey = filepath.Join(otherDir, "bank-a.crt"), filepath.Join(otherDir, "bank-a.key")
	if l := tlsRefused(t, url, foreign); !strings.Contains(l, "tls") {
		t.Fatalf("another CA's certificate: %s", l)
	}

	// The foreign CA does not vouch for the server either.
	wrongCA := bank
	wrongCA.TLSCA = filepath.Join(otherDir, TLSCACertFile)
	if l := tlsRefused(t, url, wrongCA); !strings.Contains(l, "x509: certificate signed by unknown authority") {
		t.Fatalf("the server verified against another CA: %s", l)
	}

	plain := ConnectOptions{Name: "plain", Creds: j.seeds["bank-a"]}
	// nats.go upgrades to TLS as the server requires, and finds no
	// system CA that vouches for the job's server.
	if l := tlsRefused(t, "nats://"+strings.TrimPrefix(url, "tls://"), plain); !strings.Contains(l, "x509: ") {
		t.Fatalf("without TLS options: %s", l)
	}
}

// TLS options make TLS required: a client given them refuses a server
// that offers none instead of sending its login in clear.
func TestTLSOptionsRequireTLS(t *testing.T) {
	j := writeTLSJob(t)
	s, err := StartServer(ServerOptions{NoJetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	if strings.HasPrefix(s.ClientURL(), "tls:") {
		t.Fatalf("plain server at %s", s.ClientURL())
	}
	if l := tlsRefused(t, s.ClientURL(), ConnectOptions{TLSCA: j.srv.CAFile}); !strings.Contains(l, nats.ErrSecureConnWanted.Error()) {
		t.Fatalf("want %q: %s", nats.ErrSecureConnWanted, l)
	}
	for _, o := range []ConnectOptions{
		{TLSCert: filepath.Join(j.dir, "bank-a.crt")},
		{TLSKey: filepath.Join(j.dir, "bank-a.key")},
		{TLSCA: filepath.Join(j.dir, "missing.crt")},
		{TLSCA: j.seeds["bank-a"]}, // not a certificate
	} {
		if nc, err := Connect(s.ClientURL(), o); err == nil {
			nc.Close()
			t.Errorf("%+v: connected", o)
		}
	}
}

// A 3-node cluster whose configurations carry the TLS blocks forms its
// routes over TLS (each node verifying the other's certificate against
// the job CA and the route host): a message published on node 3 reaches a
// subscriber on node 1.
func TestTLSClusterRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	j := writeTLSJob(t)
	dep, err := NewDeployment("tls-1", []string{"bank-a"})
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := dep.Keyring()
	seed := filepath.Join(t.TempDir(), "bank-a.nk")
	for _, c := range dep.Creds {
		if c.ID == "bank-a" {
			if err := WriteSeedFile(seed, "tls-1", c); err != nil {
				t.Fatal(err)
			}
		}
	}
	routePorts := freePorts(t, 3)
	var urls []string
	for i := range 3 {
		var routes []string
		for k, p := range routePorts {
			if k != i {
				routes = append(routes, fmt.Sprintf("127.0.0.1:%d", p))
			}
		}
		conf, err := ServerConfig(ring, ServerConfigOptions{ServerName: fmt.Sprintf("gf-%d", i+1), Listen: "127.0.0.1:4222",
			StoreDir: filepath.Join(j.dir, fmt.Sprintf("js-%d", i+1)),
			Cluster:  &ClusterOptions{Listen: fmt.Sprintf("127.0.0.1:%d", routePorts[i]), Routes: routes, Password: "route-secret"}})
		if err != nil {
			t.Fatal(err)
		}
		if conf, err = AddServerTLS(conf, &j.srv); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(j.dir, fmt.Sprintf("server-%d.conf", i+1))
		if err := os.WriteFile(path, conf, 0o600); err != nil {
			t.Fatal(err)
		}
		srv, err := StartServer(ServerOptions{ConfigFile: path, Port: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
		urls = append(urls, srv.ClientURL())
	}
	bank := ConnectOptions{Creds: seed, TLSCA: j.srv.CAFile,
		TLSCert: filepath.Join(j.dir, "bank-a.crt"), TLSKey: filepath.Join(j.dir, "bank-a.key")}
	sub, err := Connect(urls[0], bank)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := Connect(urls[2], bank)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if !sub.IsConnected() || !pub.IsConnected() {
		t.Fatalf("not connected: %v %v", sub.LastError(), pub.LastError())
	}
	ch := make(chan *nats.Msg, 16)
	s, err := sub.ChanSubscribe("gf.tls-1.hello.bank-a", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unsubscribe()
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	// Routes come up and carry the subscription's interest some time
	// after the nodes start: publish until a message crosses.
	deadline := time.After(10 * time.Second)
	for {
		if err := pub.Publish("gf.tls-1.hello.bank-a", []byte("across")); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-ch:
			if string(m.Data) != "across" {
				t.Fatalf("got %q", m.Data)
			}
			return
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no message crossed the TLS routes in 10 s")
		}
	}
}
