package bus

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// freePorts finds n free loopback ports for route listeners, which a
// configuration must name before the servers start.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// The per-node configurations of docs/DEPLOY.md form a 3-node JetStream
// cluster with authenticated routes, and the accounts work across them: a
// bank on node 1 receives the embeddings a bank on node 3 addresses to it
// and not those it addresses to another bank (which that bank, also on
// node 1, receives); a hello from node 1 is answered by the aggregator on
// node 2 through the service import; the ledger administrator on node 2
// creates the ledger streams with three replicas; a bank appends on node 1
// and the auditor reads it on node 3.
func TestServerConfigCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node JetStream cluster")
	}
	dep, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := dep.Keyring()
	dir := t.TempDir()
	seeds := writeSeeds(t, dir, dep)
	routePorts := freePorts(t, 3)
	urls := make([]string, 3)
	for i := range 3 {
		var routes []string
		for j, p := range routePorts {
			if j != i {
				routes = append(routes, fmt.Sprintf("127.0.0.1:%d", p))
			}
		}
		conf, err := ServerConfig(ring, ServerConfigOptions{
			ServerName: fmt.Sprintf("gf-%d", i+1), Listen: "127.0.0.1:4222",
			StoreDir:    filepath.Join(dir, fmt.Sprintf("js-%d", i+1)),
			LedgerAdmin: dep.LedgerAdmin.PublicKey,
			Links:       [][2]string{{"bank-b", "bank-a"}, {"bank-b", "bank-c"}},
			Cluster:     &ClusterOptions{Listen: fmt.Sprintf("127.0.0.1:%d", routePorts[i]), Routes: routes, Password: "route-secret"},
		})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("server-%d.conf", i+1))
		if err := os.WriteFile(path, conf, 0o600); err != nil {
			t.Fatal(err)
		}
		srv, err := StartServer(ServerOptions{ConfigFile: path, Port: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Shutdown)
		urls[i] = srv.ClientURL()
	}
	a := connectParty(t, urls[0], "bank-a", seeds["bank-a"])
	c := connectParty(t, urls[0], "bank-c", seeds["bank-c"])
	agg := connectParty(t, urls[1], AggregatorID, seeds[AggregatorID])
	admin := connectParty(t, urls[1], LedgerAdminID, seeds[LedgerAdminID])
	b := connectParty(t, urls[2], "bank-b", seeds["bank-b"])
	aud := connectParty(t, urls[2], AuditorID, seeds[AuditorID])
	heardA, heardC := a.listen(t), c.listen(t)
	toA, toC := Subject(secJob, KindEmb, "bank-b", "bank-a"), Subject(secJob, KindEmb, "bank-b", "bank-c")

	// Interest crosses the routes asynchronously: ping until bank-a's and
	// bank-c's subscriptions are known on node 3.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		tag := fmt.Sprintf("ping-%d", i)
		b.publish(t, toA, tag)
		b.publish(t, toC, tag)
		b.flush(t)
		if awaitPayload(heardA, toA, tag, 200*time.Millisecond) && awaitPayload(heardC, toC, tag, 200*time.Millisecond) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cluster never routed bank-b's embeddings to bank-a and bank-c")
		}
	}
	drain(heardA, "")
	drain(heardC, "")
	// bank-b's embeddings to bank-c, then a fence to bank-a on the same
	// route: bank-c gets the probe, bank-a the fence and nothing before it.
	b.publish(t, toC, "probe")
	b.publish(t, toA, "fence")
	b.flush(t)
	if !awaitPayload(heardC, toC, "probe", 10*time.Second) {
		t.Fatal("bank-c did not receive bank-b's embeddings across the cluster")
	}
	var before []string
	fenced := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case m := <-heardA:
			if m.Subject == toA && string(m.Data) == "fence" {
				done = true
			} else {
				before = append(before, m.Subject+" "+string(m.Data))
			}
		case <-fenced:
			t.Fatal("bank-a never received the fence")
		}
	}
	if len(before) > 0 {
		t.Fatalf("bank-a received across the cluster: %v", before)
	}

	// Hello from node 1, answered on node 2.
	hsub, err := agg.nc.Subscribe(Subject(secJob, KindHello, "*"), func(m *nats.Msg) { m.Respond([]byte("welcome")) })
	if err != nil {
		t.Fatal(err)
	}
	defer hsub.Unsubscribe()
	agg.flush(t)
	for {
		reply, err := a.nc.Request(Subject(secJob, KindHello, "bank-a"), []byte("hi"), time.Second)
		if err == nil && string(reply.Data) == "welcome" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bank-a's hello across the cluster: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx := context.Background()
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := CreateLedgerStreams(cctx, admin.nc, secJob, secWriters, JSLedgerOptions{Replicas: 3, Timeout: 2 * time.Second})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ledger administrator creating the replicated ledger streams: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	l, err := OpenJetStreamLedger(ctx, a.nc, secJob, JSLedgerOptions{Parties: []string{"bank-a"}, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, modelEntry(secJob, "bank-a", 1)); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenJetStreamLedger(ctx, aud.nc, secJob, JSLedgerOptions{ReadOnly: true, Parties: secWriters})
	if err != nil {
		t.Fatal(err)
	}
	if es, err := ro.Entries(ctx); err != nil || len(es) != 1 || es[0].Client != "bank-a" {
		t.Fatalf("auditor on node 3 reads %v, %v", es, err)
	}
	for _, p := range []*party{a, c, agg, admin, b, aud} {
		if errs := p.asyncErrors(t); len(errs) > 0 {
			t.Errorf("%s: asynchronous errors: %v", p.id, errs)
		}
	}
}

// awaitPayload waits up to d for a message on subject with payload data
// on ch, dropping others.
func awaitPayload(ch chan *nats.Msg, subject, data string, d time.Duration) bool {
	timeout := time.After(d)
	for {
		select {
		case m := <-ch:
			if m.Subject == subject && string(m.Data) == data {
				return true
			}
		case <-timeout:
			return false
		}
	}
}
