package main

import (
	"bufio"
	"bytes"
	"context"
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

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
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
	tls     bool // mutual TLS (graphfed keys --tls), every party on tls://

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
func newPermJob(t *testing.T, job string, clients []string, limit time.Duration, tls bool) *permJob {
	t.Helper()
	dir := t.TempDir()
	j := &permJob{t: t, job: job, keys: filepath.Join(dir, "keys"), clients: clients, tls: tls}
	keys := []string{"keys", "--job", job, "--banks", strings.Join(clients, ","), "--listen", "127.0.0.1:4222",
		"--store", filepath.Join(dir, "js"), "--out", j.keys}
	if tls {
		keys = append(keys, "--tls")
	}
	if out, err := graphfedCmd(t, keys...).CombinedOutput(); err != nil {
		t.Fatalf("graphfed keys: %v\n%s", err, out)
	}
	srv, err := bus.StartServer(bus.ServerOptions{ConfigFile: filepath.Join(j.keys, "server.conf"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	j.url = srv.ClientURL()
	if tls && !strings.HasPrefix(j.url, "tls://") {
		t.Fatalf("the server of a --tls configuration listens on %s, not tls://", j.url)
	}
	if out, err := graphfedCmd(t, append([]string{"keys", "ledger", "--nats", j.url, "--creds", j.seed(bus.LedgerAdminID),
		"--keyring", filepath.Join(j.keys, "keyring.json")}, j.tlsFlags(bus.LedgerAdminID)...)...).CombinedOutput(); err != nil {
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

// tlsFlags are id's mutual TLS flags when the job runs over TLS.
func (j *permJob) tlsFlags(id string) []string {
	if !j.tls {
		return nil
	}
	return []string{"--tls-ca", filepath.Join(j.keys, bus.TLSCACertFile), "--tls-cert", filepath.Join(j.keys, id+".crt"),
		"--tls-key", filepath.Join(j.keys, id+".key")}
}

// signed are the flags every party of the job runs with.
func (j *permJob) signed(id string) []string {
	return append([]string{"--nats", j.url, "--job", j.job, "--creds", j.seed(id), "--keyring", filepath.Join(j.keys, "keyring.json")},
		j.tlsFlags(id)...)
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
// points are its "update applied" lines). Its rounds travel in the
// clear: a restarted aggregator resumes every round's updates from the
// durable log, which a secure round, not snapshotted, cannot do (it
// closes without a model), and these tests compare a killed run's model
// with an uninterrupted one's.
func (j *permJob) aggregator(onLine func(string), extra ...string) *proc {
	args := append([]string{"aggregator"}, j.signed(bus.AggregatorID)...)
	args = append(args, "--clients", strings.Join(j.clients, ","), "--min-clients", fmt.Sprint(len(j.clients)),
		"--durable", "--resume", "--ack-wait", "1s", "--json", "--log-level", "debug", "--secagg", "off")
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
	o := bus.ConnectOptions{Name: "test-auditor", Creds: j.seed(bus.AuditorID)}
	if j.tls {
		o.TLSCA, o.TLSCert, o.TLSKey = filepath.Join(j.keys, bus.TLSCACertFile), filepath.Join(j.keys, bus.AuditorID+".crt"),
			filepath.Join(j.keys, bus.AuditorID+".key")
	}
	nc, err := bus.Connect(j.url, o)
	if err != nil {
		j.t.Fatal(err)
	}
	j.t.Cleanup(nc.Close)
	return nc
}

// onLedger calls fn with every ledger entry client appends from now on.
// The auditor reads the ledger account's streams by message gets (it
// receives no ledger subject live in the accounts layout), so this polls
// client's stream.
func (j *permJob) onLedger(client string, fn func(privacy.Entry)) {
	j.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	j.t.Cleanup(cancel)
	l, err := bus.OpenJetStreamLedger(ctx, j.connect(), j.job, bus.JSLedgerOptions{ReadOnly: true, Parties: []string{client}})
	if err != nil {
		j.t.Fatal(err)
	}
	seen, err := l.EntriesFor(ctx, client)
	if err != nil {
		j.t.Fatal(err)
	}
	go func() {
		last := len(seen)
		for ctx.Err() == nil {
			es, err := l.EntriesFor(ctx, client)
			if err == nil {
				for _, e := range es[min(last, len(es)):] {
					fn(e)
				}
				last = max(last, len(es))
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
}

// entries reads the job's whole ledger stream, read-only, as the auditor.
func (j *permJob) entries() []privacy.Entry {
	j.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ring, err := bus.LoadKeyring(filepath.Join(j.keys, "keyring.json"))
	if err != nil {
		j.t.Fatal(err)
	}
	l, err := deploy.OpenAuditLedger(ctx, j.connect(), j.job, ring)
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
	out, err := graphfedCmd(j.t, append([]string{"audit", "--nats", j.url, "--job", j.job, "--creds", j.seed(bus.AuditorID),
		"--keyring", filepath.Join(j.keys, "keyring.json"), "--json"}, j.tlsFlags(bus.AuditorID)...)...).Output()
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

// checkReleasedOnce fails the test if any client released a channel more
// often in one round than perRound allows (default once; LPSFed releases
// two scalars, ρ and its margin, on the margin channel), or one node's
// embedding twice in one round, and returns the releases counted by client
// and channel.
func checkReleasedOnce(t *testing.T, es []privacy.Entry, perRound map[privacy.Channel]int) map[string]map[privacy.Channel]int {
	t.Helper()
	seen := map[releaseKey]int{}
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
		seen[k]++
		if n := seen[k]; n > max(perRound[e.Channel], 1) {
			t.Errorf("%s released %s of round %d %d times (ledger seq %d)", e.Client, e.Channel, e.Round, n, e.Seq)
		}
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

// jobSpec is what a job's processes run beyond the permJob's flags.
type jobSpec struct {
	rounds    int
	killRound uint64                  // the round in which the kill tests strike
	aggArgs   []string                // the aggregator's algorithm and task flags
	agentArgs func(i int) []string    // client i's task and data flags
	perRound  map[privacy.Channel]int // releases per round and channel beyond one (checkReleasedOnce)
	tls       bool                    // every party over mutual TLS
}

// jobRun is one job of a spec: the aggregator and one agent per client.
type jobRun struct {
	j       *permJob
	spec    jobSpec
	timeout string
	agg     *proc
	agents  []*proc
	schema  string // the banks' model schema, the aggregator's --schema
}

func startJobRun(t *testing.T, job string, ids []string, spec jobSpec, timeout string, onAggLine func(string)) *jobRun {
	t.Helper()
	r := &jobRun{j: newPermJob(t, job, ids, 80*time.Second, spec.tls), spec: spec, timeout: timeout}
	r.agg = r.aggregator(onAggLine)
	for i := range ids {
		r.agents = append(r.agents, r.agent(i))
	}
	return r
}

func (r *jobRun) aggregator(onLine func(string)) *proc {
	if r.schema == "" {
		r.schema = bankSchema(r.j.t, append([]string{"--job", r.j.job, "--client", r.j.clients[0]}, r.spec.agentArgs(0)...)...)
	}
	return r.j.aggregator(onLine, append([]string{"--rounds", fmt.Sprint(r.spec.rounds), "--round-timeout", r.timeout,
		"--schema", r.schema}, r.spec.aggArgs...)...)
}

func (r *jobRun) agent(i int) *proc { return r.j.agent(i, r.spec.agentArgs(i)...) }

// finish waits for every party and returns the aggregator's metrics, after
// checking that every round ran and every client sent its final scores.
func (r *jobRun) finish(t *testing.T) map[string]any {
	t.Helper()
	r.j.wait(r.agg)
	for _, a := range r.agents {
		r.j.wait(a)
	}
	rep := r.j.report(r.agg)
	m := rep["metrics"].(map[string]any)
	if rep["rounds"].(float64) != float64(r.spec.rounds) || m["clients_reporting"].(float64) != float64(len(r.agents)) {
		t.Fatalf("the job did not finish with every client's final report: %v\n%s", rep, r.j.logs())
	}
	return m
}

// testKillAndRecover is the done-when of issue 12 for one algorithm, as
// three runs of the job on fresh servers: uninterrupted (then check sees
// the run and its ledger, and the model digest is kept), one client
// SIGKILLed right after its first ledger entry of spec.killRound and
// started again (no round released twice, the job finishes), and the
// aggregator SIGKILLed once two updates of spec.killRound were applied and
// started again (the final model is the uninterrupted run's, bit for bit).
func testKillAndRecover(t *testing.T, job string, ids []string, spec jobSpec, check func(t *testing.T, r *jobRun, es []privacy.Entry)) {
	var want string
	t.Run("uninterrupted", func(t *testing.T) {
		began := time.Now()
		r := startJobRun(t, job+"-ref", ids, spec, "60s", nil)
		m := r.finish(t)
		if m["rounds_closed_at_deadline"].(float64) != 0 {
			t.Fatalf("a round closed at its deadline in an uninterrupted run: %v", m)
		}
		want = m["model_sha256"].(string)
		if want == aggregator.ModelDigest(nil) {
			t.Fatalf("the job reports the digest of no model: %v", m)
		}
		es := r.j.entries()
		count := checkReleasedOnce(t, es, spec.perRound)
		check(t, r, es)
		a := r.j.audit()["metrics"].(map[string]any)
		t.Logf("uninterrupted: %d rounds in %v, model %s; ledger releases %v; audit: %v entries, %v releases, %v nodes",
			spec.rounds, time.Since(began).Round(time.Millisecond), want[:16], count, a["entries"], a["releases"], a["nodes"])
	})

	t.Run("client killed", func(t *testing.T) {
		began := time.Now()
		// A short deadline: the killed client's round may have to close
		// without it (its release is in the ledger, its update lost).
		r := startJobRun(t, job+"-cli", ids, spec, "10s", nil)
		victim := 1
		hit := make(chan privacy.Entry, 1)
		r.j.onLedger(ids[victim], func(e privacy.Entry) {
			if e.Round == spec.killRound && e.Channel != privacy.ChannelCalibration {
				select {
				case hit <- e:
				default:
				}
			}
		})
		var e privacy.Entry
		select {
		case e = <-hit:
		case <-r.agg.done:
			t.Fatalf("the job ended before %s released in round %d\n%s", ids[victim], spec.killRound, r.j.logs())
		}
		r.j.kill(r.agents[victim])
		killedAt := time.Since(began)
		r.agents[victim] = r.agent(victim)
		m := r.finish(t)
		es := r.j.entries()
		count := checkReleasedOnce(t, es, spec.perRound)
		r.j.audit()
		t.Logf("%s SIGKILLed at %v right after its ledger entry %s of round %d, restarted; job finished in %v "+
			"(%v rounds at their deadline); its model releases in rounds %v; ledger releases %v",
			ids[victim], killedAt.Round(time.Millisecond), e.Channel, e.Round, time.Since(began).Round(time.Millisecond),
			m["rounds_closed_at_deadline"], roundsOf(es, ids[victim], privacy.ChannelModel), count)
	})

	t.Run("aggregator killed", func(t *testing.T) {
		if want == "" {
			t.Skip("no reference model")
		}
		began := time.Now()
		applied := make(chan struct{}, len(ids))
		mark := fmt.Sprintf("round=%d", spec.killRound)
		r := startJobRun(t, job+"-agg", ids, spec, "60s", func(line string) {
			if strings.Contains(line, "update applied") && strings.Contains(line, mark) {
				select {
				case applied <- struct{}{}:
				default:
				}
			}
		})
		for range 2 {
			select {
			case <-applied:
			case <-r.agg.done:
				t.Fatalf("the aggregator ended before round %d had two updates\n%s", spec.killRound, r.j.logs())
			}
		}
		r.j.kill(r.agg)
		killedAt := time.Since(began)
		r.agg = r.aggregator(nil)
		m := r.finish(t)
		if m["resumed"] != true || m["resumed_round"].(float64) < float64(spec.killRound) {
			t.Fatalf("the restarted aggregator did not resume in round %d or later: %v", spec.killRound, m)
		}
		if got := m["model_sha256"].(string); got != want {
			t.Fatalf("final model %s after the aggregator's SIGKILL, want %s as uninterrupted", got, want)
		}
		checkReleasedOnce(t, r.j.entries(), spec.perRound)
		t.Logf("aggregator SIGKILLed at %v with two updates of round %d applied; resumed in round %v; finished in %v; "+
			"model %s in both runs", killedAt.Round(time.Millisecond), spec.killRound, m["resumed_round"],
			time.Since(began).Round(time.Millisecond), want[:16])
	})
}
