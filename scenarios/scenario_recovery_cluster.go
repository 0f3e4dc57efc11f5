package scenarios

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/bus"
)

// loopbackCluster is a NATS cluster of embedded servers on 127.0.0.1, each
// with JetStream in its own store: the smallest setup in which a stream
// replicated three times survives the loss of a node.
type loopbackCluster struct {
	dir string

	mu    sync.Mutex
	nodes []*bus.Server // nil once killed
	url   []string
}

// startLoopbackCluster starts n nodes routed to each other.
func startLoopbackCluster(n int) (*loopbackCluster, error) {
	dir, err := os.MkdirTemp("", "graphfed-cluster-")
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c := &loopbackCluster{dir: dir}
	ports, err := freeLoopbackPorts(n)
	if err != nil {
		c.shutdown()
		return nil, fmt.Errorf("cluster: %w", err)
	}
	for i := range n {
		var routes []string
		for k, p := range ports {
			if k != i {
				routes = append(routes, "127.0.0.1:"+strconv.Itoa(p))
			}
		}
		srv, err := bus.StartServer(bus.ServerOptions{
			ServerName: nodeName(i), StoreDir: filepath.Join(dir, nodeName(i)),
			Cluster: &bus.ClusterOptions{Name: "graphfed", Listen: "127.0.0.1:" + strconv.Itoa(ports[i]), Routes: routes},
		})
		if err != nil {
			c.shutdown()
			return nil, fmt.Errorf("cluster: node %d: %w", i+1, err)
		}
		c.nodes, c.url = append(c.nodes, srv), append(c.url, srv.ClientURL())
	}
	return c, nil
}

func nodeName(i int) string { return "gf-" + strconv.Itoa(i+1) }

// freeLoopbackPorts finds n free ports for route listeners, which every
// node's configuration must name before any starts.
func freeLoopbackPorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// urls lists every node's client URL, comma-separated, as clients dial a
// cluster: they fail over to the next when theirs goes.
func (c *loopbackCluster) urls() string { return strings.Join(c.url, ",") }

// streamLeader returns the index of the node that leads stream.
func (c *loopbackCluster) streamLeader(ctx context.Context, stream string) (int, error) {
	nc, err := bus.Connect(c.urls(), bus.ConnectOptions{Name: "cluster-probe"})
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("cluster: stream %s: %w", stream, err)
	}
	info := st.CachedInfo()
	if info.Cluster == nil {
		return 0, fmt.Errorf("cluster: stream %s is not clustered", stream)
	}
	for i := range c.url {
		if nodeName(i) == info.Cluster.Leader {
			return i, nil
		}
	}
	return 0, fmt.Errorf("cluster: stream %s is led by %q, not a node of this cluster", stream, info.Cluster.Leader)
}

// kill shuts node i down.
func (c *loopbackCluster) kill(i int) {
	c.mu.Lock()
	srv := c.nodes[i]
	c.nodes[i] = nil
	c.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
	}
}

// alive counts the nodes running.
func (c *loopbackCluster) alive() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.nodes {
		if s != nil {
			n++
		}
	}
	return n
}

// shutdown stops every node and removes the stores.
func (c *loopbackCluster) shutdown() {
	for i := range c.nodes {
		c.kill(i)
	}
	os.RemoveAll(c.dir)
}

// scratchDir is a temporary directory that a scenario removes when done.
type scratchDir struct{ path string }

func tempDir(pattern string) (scratchDir, error) {
	d, err := os.MkdirTemp("", pattern)
	if err != nil {
		return scratchDir{}, fmt.Errorf("scenarios: %w", err)
	}
	return scratchDir{path: d}, nil
}

func (d scratchDir) remove() { os.RemoveAll(d.path) }

// urlPort is the port of a nats:// URL, to restart a server on it.
func urlPort(u string) (int, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return 0, fmt.Errorf("scenarios: %w", err)
	}
	p, err := strconv.Atoi(pu.Port())
	if err != nil {
		return 0, fmt.Errorf("scenarios: url %s: port: %w", u, err)
	}
	return p, nil
}
