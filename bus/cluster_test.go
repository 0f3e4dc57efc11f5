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
// cluster with authenticated routes: a bank on node 1 receives the
// embeddings a bank on node 3 addresses to it and is still refused another
// bank's; the aggregator on node 2 creates the ledger with three replicas;
// a bank appends on node 1 and the auditor reads it on node 3.
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
	seeds := map[string]string{}
	for _, c := range dep.Creds {
		seeds[c.ID] = filepath.Join(dir, c.ID+".nk")
		if err := WriteSeedFile(seeds[c.ID], secJob, c); err != nil {
			t.Fatal(err)
		}
	}
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
			StoreDir: filepath.Join(dir, fmt.Sprintf("js-%d", i+1)),
			Cluster:  &ClusterOptions{Listen: fmt.Sprintf("127.0.0.1:%d", routePorts[i]), Routes: routes, Password: "route-secret"},
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
	agg := connectParty(t, urls[1], AggregatorID, seeds[AggregatorID])
	b := connectParty(t, urls[2], "bank-b", seeds["bank-b"])
	aud := connectParty(t, urls[2], AuditorID, seeds[AuditorID])

	// Interest crosses the routes asynchronously: ping until bank-a's
	// subscriptions are known on node 3.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; !pinged(t, b, a, fmt.Sprintf("ping-%d", i)); i++ {
		if time.Now().After(deadline) {
			t.Fatal("the cluster never routed bank-b's embeddings to bank-a")
		}
	}
	got := make(chan *nats.Msg, 16)
	forbidden := Subject(secJob, KindEmb, "bank-b", "bank-c")
	sub, err := a.nc.ChanSubscribe(forbidden, got)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	a.flush(t)
	b.publish(t, forbidden, "probe")
	b.publish(t, fenceFor("bank-a", "bank-b"), "fence")
	b.flush(t)
	a.awaitFence(t, "fence")
	if len(got) != 0 || !refused(a.violations(t), "Subscription", forbidden) {
		t.Fatal("bank-a read bank-b's embeddings to bank-c across the cluster")
	}

	ctx := context.Background()
	for {
		_, err := OpenJetStreamLedger(ctx, agg.nc, secJob, JSLedgerOptions{Replicas: 3, Timeout: 2 * time.Second})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("creating the replicated ledger: %v (violations %v)", err, agg.violations(t))
		}
		time.Sleep(250 * time.Millisecond)
	}
	l, err := OpenJetStreamLedger(ctx, a.nc, secJob, JSLedgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, modelEntry(secJob, "bank-a", 1)); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenJetStreamLedger(ctx, aud.nc, secJob, JSLedgerOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if es, err := ro.Entries(ctx); err != nil || len(es) != 1 || es[0].Client != "bank-a" {
		t.Fatalf("auditor on node 3 reads %v, %v", es, err)
	}
}

// pinged reports whether a ping from pub reaches sub's fence within 200ms.
func pinged(t *testing.T, pub, sub *party, tag string) bool {
	pub.publish(t, fenceFor(sub.id, pub.id), tag)
	pub.flush(t)
	timeout := time.After(200 * time.Millisecond)
	for {
		select {
		case m := <-sub.fence:
			if string(m.Data) == tag {
				return true
			}
		case <-timeout:
			return false
		}
	}
}
