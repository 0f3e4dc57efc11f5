package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/bus"
	"graphfed/privacy"
)

// permJob is one job run as separate OS processes on the server
// configuration `graphfed keys` writes: permissions on, every party
// logging in with its own seed and signing, the ledger stream created with
// the aggregator's key before anyone else starts (docs/DEPLOY.md).
type permJob struct {
	t       *testing.T
	job     string
	url     string
	keys    string // the directory graphfed keys wrote
	clients []string

	mu       sync.Mutex
	procs    []*proc
	timedOut bool
	watchdog *time.Timer
}

// proc is one party's process: its stdout (the JSON report) and its log.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  bytes.Buffer
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{}
	err  error
}

func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// newPermJob runs `graphfed keys` for clients, starts a server on the
// configuration it wrote (store in a temporary directory) and creates the
// ledger stream with `graphfed keys ledger`. Every process the job starts
// is killed after limit, and the test then fails with their logs.
func newPermJob(t *testing.T, job string, clients []string, limit time.Duration) *permJob {
	t.Helper()
	dir := t.TempDir()
	j := &permJob{t: t, job: job, keys: filepath.Join(dir, "keys"), clients: clients}
	if out, err := graphfedCmd(t, "keys", "--job", job, "--banks", strings.Join(clients, ","), "--listen", "127.0.0.1:4222",
		"--store", filepath.Join(dir, "js"), "--out", j.keys).CombinedOutput(); err != nil {
		t.Fatalf("graphfed keys: %v\n%s", err, out)
	}
	srv, err := bus.StartServer(bus.ServerOptions{ConfigFile: filepath.Join(j.keys, "server.conf"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	j.url = srv.ClientURL()
	if out, err := graphfedCmd(t, "keys", "ledger", "--nats", j.url, "--job", job, "--creds", j.seed(bus.AggregatorID)).CombinedOutput(); err != nil {
		t.Fatalf("graphfed keys ledger: %v\n%s", err, out)
	}
	j.watchdog = time.AfterFunc(limit, func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.timedOut = true
		for _, p := range j.procs {
			p.cmd.Process.Kill()
		}
	})
	t.Cleanup(func() { j.watchdog.Stop() })
	return j
}

func (j *permJob) seed(id string) string { return filepath.Join(j.keys, id+".nk") }

// signed are the flags every party of the job runs with.
func (j *permJob) signed(id string) []string {
	return []string{"--nats", j.url, "--job", j.job, "--creds", j.seed(id), "--keyring", filepath.Join(j.keys, "keyring.json")}
}

// start runs graphfed with args as party name; onLine, when set, sees each
// line of its log as it comes.
func (j *permJob) start(name string, onLine func(string), args ...string) *proc {
	j.t.Helper()
	p := &proc{name: name, done: make(chan struct{})}
	p.cmd = graphfedCmd(j.t, args...)
	p.cmd.Stdout = &p.out
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		j.t.Fatal(err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.timedOut {
		j.t.Fatalf("%s: the job's watchdog already fired", name)
	}
	if err := p.cmd.Start(); err != nil {
		j.t.Fatal(err)
	}
	j.procs = append(j.procs, p)
	j.t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

// aggregator starts the job's durable aggregator (debug log: the kill
// points are its "update applied" lines).
func (j *permJob) aggregator(onLine func(string), extra ...string) *proc {
	args := append([]string{"aggregator"}, j.signed(bus.AggregatorID)...)
	args = append(args, "--clients", strings.Join(j.clients, ","), "--min-clients", fmt.Sprint(len(j.clients)),
		"--durable", "--ack-wait", "1s", "--json", "--log-level", "debug")
	return j.start(bus.AggregatorID, onLine, append(args, extra...)...)
}

// agent starts client id's durable agent with seeded noise, so that a run
// is a function of its seeds.
func (j *permJob) agent(i int, extra ...string) *proc {
	id := j.clients[i]
	args := append([]string{"agent"}, j.signed(id)...)
	args = append(args, "--client", id, "--durable", "--seed", fmt.Sprint(i+1), "--noise-seed", fmt.Sprint(100+i),
		"--json", "--log-level", "info")
	return j.start(id, nil, append(args, extra...)...)
}

// wait waits for p to exit and fails the test, with every log of the job,
// if it failed or the watchdog fired.
func (j *permJob) wait(p *proc) {
	j.t.Helper()
	<-p.done
	j.mu.Lock()
	timedOut := j.timedOut
	j.mu.Unlock()
	if p.err != nil || timedOut {
		j.t.Fatalf("%s: %v (watchdog fired: %v)\n%s", p.name, p.err, timedOut, j.logs())
	}
}

// kill sends SIGKILL to p and waits until it is gone.
func (j *permJob) kill(p *proc) {
	j.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		j.t.Fatalf("kill %s: %v", p.name, err)
	}
	<-p.done
}

func (j *permJob) logs() string {
	var b strings.Builder
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range j.procs {
		fmt.Fprintf(&b, "--- %s (%s)\n%s", p.name, strings.Join(p.cmd.Args[1:min(3, len(p.cmd.Args))], " "), p.logText())
	}
	return b.String()
}

// report is p's JSON report (the last stdout line).
func (j *permJob) report(p *proc) map[string]any {
	j.t.Helper()
	return lastJSON(j.t, p.out.Bytes())
}

// connect opens a connection as the auditor, who may read the ledger and
// subscribe to the ledger subjects.
func (j *permJob) connect() *nats.Conn {
	j.t.Helper()
	nc, err := bus.Connect(j.url, bus.ConnectOptions{Name: "test-auditor", Creds: j.seed(bus.AuditorID)})
	if err != nil {
		j.t.Fatal(err)
	}
	j.t.Cleanup(nc.Close)
	return nc
}

// onLedger calls fn with every ledger entry client appends from now on
// (the auditor's subscription to gf.<job>.ledger.<client>).
func (j *permJob) onLedger(client string, fn func(privacy.Entry)) {
	j.t.Helper()
	nc := j.connect()
	if _, err := nc.Subscribe(bus.LedgerSubject(j.job, client), func(m *nats.Msg) {
		var e privacy.Entry
		if json.Unmarshal(m.Data, &e) == nil {
			fn(e)
		}
	}); err != nil {
		j.t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		j.t.Fatal(err)
	}
}

// entries reads the job's whole ledger stream, read-only, as the auditor.
func (j *permJob) entries() []privacy.Entry {
	j.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := bus.OpenJetStreamLedger(ctx, j.connect(), j.job, bus.JSLedgerOptions{ReadOnly: true})
	if err != nil {
		j.t.Fatal(err)
	}
	es, err := l.Entries(ctx)
	if err != nil {
		j.t.Fatal(err)
	}
	return es
}

// audit runs `graphfed audit` on the job's ledger with the auditor's key
// and returns its report.
func (j *permJob) audit() map[string]any {
	j.t.Helper()
	out, err := graphfedCmd(j.t, "audit", "--nats", j.url, "--job", j.job, "--creds", j.seed(bus.AuditorID), "--json").Output()
	if err != nil {
		j.t.Fatalf("graphfed audit: %v\n%s", err, out)
	}
	return lastJSON(j.t, out)
}

// releaseKey identifies one release: a client's channel in a round.
type releaseKey struct {
	client  string
	channel privacy.Channel
	round   uint64
}

// checkReleasedOnce fails the test if any client released a channel twice
// in one round, or one node's embedding twice in one round, and returns the
// releases counted by client and channel.
func checkReleasedOnce(t *testing.T, es []privacy.Entry) map[string]map[privacy.Channel]int {
	t.Helper()
	seen := map[releaseKey]uint64{}
	type nodeKey struct {
		releaseKey
		node int64
	}
	nodes := map[nodeKey]bool{}
	count := map[string]map[privacy.Channel]int{}
	for _, e := range es {
		if e.Channel == privacy.ChannelCalibration {
			continue
		}
		k := releaseKey{e.Client, e.Channel, e.Round}
		if s, dup := seen[k]; dup {
			t.Errorf("%s released %s of round %d twice (ledger seq %d and %d)", e.Client, e.Channel, e.Round, s, e.Seq)
		}
		seen[k] = e.Seq
		for _, id := range e.NodeIDs {
			nk := nodeKey{k, id}
			if nodes[nk] {
				t.Errorf("%s released node %d's %s twice in round %d", e.Client, id, e.Channel, e.Round)
			}
			nodes[nk] = true
		}
		if count[e.Client] == nil {
			count[e.Client] = map[privacy.Channel]int{}
		}
		count[e.Client][e.Channel]++
	}
	return count
}

// roundsOf lists the rounds in which client released on channel.
func roundsOf(es []privacy.Entry, client string, ch privacy.Channel) []uint64 {
	var rs []uint64
	for _, e := range es {
		if e.Client == client && e.Channel == ch {
			rs = append(rs, e.Round)
		}
	}
	slices.Sort(rs)
	return rs
}

// requireProcessTests skips process tests under -short.
func requireProcessTests(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if _, err := os.Stat(os.Args[0]); err != nil {
		t.Skipf("test binary %s not found: %v", os.Args[0], err)
	}
}
