package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/graph"
)

// TestMain lets the test binary stand in for the graphfed binary: with
// GRAPHFED_MAIN=1 it runs main, so process tests need no separate build.
func TestMain(m *testing.M) {
	if os.Getenv("GRAPHFED_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func graphfedCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GRAPHFED_MAIN=1")
	return cmd
}

// writeClients generates a small CSBM graph, partitions it and writes one
// TSV directory per client.
func writeClients(t *testing.T, n int) []string {
	t.Helper()
	cfg := graph.DefaultCSBM()
	cfg.Nodes = 600
	d, err := graph.GenerateCSBM(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	owner, err := graph.PartitionLouvain(d.Adj, n, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	cgs, err := graph.SplitByOwner(d, owner, n)
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, n)
	for i, cg := range cgs {
		dirs[i] = filepath.Join(t.TempDir(), deploy.ClientID(i))
		if err := graph.WriteTSV(dirs[i], cg.Data); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// lastJSON parses the last line of stdout as the CLI contract's report.
func lastJSON(t *testing.T, out []byte) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("last stdout line is not JSON: %q: %v", lines[len(lines)-1], err)
	}
	return r
}

type procRun struct {
	agg       *exec.Cmd
	aggOut    bytes.Buffer
	aggErr    *io.PipeReader
	agents    []*exec.Cmd
	agentErrs []bytes.Buffer
}

func startJob(t *testing.T, rounds int, timeout string, dirs []string) *procRun {
	t.Helper()
	srv, err := bus.StartServer(bus.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	p := &procRun{agentErrs: make([]bytes.Buffer, len(dirs))}
	p.agg = graphfedCmd(t, "aggregator", "--insecure", "--nats", url, "--job", "proc", "--rounds", fmt.Sprint(rounds),
		"--min-clients", fmt.Sprint(len(dirs)), "--round-timeout", timeout, "--json", "--log-level", "info")
	p.agg.Stdout = &p.aggOut
	pr, pw := io.Pipe()
	p.aggErr = pr
	p.agg.Stderr = pw
	if err := p.agg.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.agg.Process.Kill(); pw.Close() })
	for i, dir := range dirs {
		a := graphfedCmd(t, "agent", "--insecure", "--nats", url, "--job", "proc", "--client", deploy.ClientID(i), "--data", dir,
			"--local-epochs", "2", "--json", "--log-level", "warn")
		a.Stderr = &p.agentErrs[i]
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		p.agents = append(p.agents, a)
		t.Cleanup(func() { a.Process.Kill() })
	}
	go func() {
		p.agg.Wait()
		pw.Close()
	}()
	return p
}

func TestProcessesCompleteARun(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dirs := writeClients(t, 3)
	p := startJob(t, 5, "20s", dirs)
	io.Copy(io.Discard, p.aggErr) // until the aggregator exits
	for i, a := range p.agents {
		if err := a.Wait(); err != nil {
			t.Fatalf("agent %d: %v\n%s", i, err, p.agentErrs[i].String())
		}
	}
	r := lastJSON(t, p.aggOut.Bytes())
	m := r["metrics"].(map[string]any)
	if r["rounds"].(float64) != 5 || m["clients_reporting"].(float64) != 3 {
		t.Fatalf("report %v", r)
	}
	if acc := m["test_acc"].(float64); acc < 0.3 {
		t.Fatalf("mean test accuracy %.3f: nothing was learned", acc)
	}
}

func TestProcessKilledAgentRoundsCloseAtDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dirs := writeClients(t, 3)
	p := startJob(t, 8, "1500ms", dirs)
	killed := false
	sc := bufio.NewScanner(p.aggErr)
	for sc.Scan() {
		line := sc.Text()
		if !killed && strings.Contains(line, "round closed") && strings.Contains(line, "round=2") {
			if err := p.agents[2].Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	if !killed {
		t.Fatal("round 2 never closed")
	}
	for i, a := range p.agents[:2] {
		if err := a.Wait(); err != nil {
			t.Fatalf("agent %d: %v\n%s", i, err, p.agentErrs[i].String())
		}
	}
	r := lastJSON(t, p.aggOut.Bytes())
	m := r["metrics"].(map[string]any)
	if r["rounds"].(float64) != 8 {
		t.Fatalf("run did not finish: %v", r)
	}
	if d := m["rounds_closed_at_deadline"].(float64); d < 1 {
		t.Fatalf("no round closed at the deadline after the kill: %v", r)
	}
	if m["clients_reporting"].(float64) != 2 {
		t.Fatalf("want the 2 surviving clients' final reports: %v", r)
	}
	_ = time.Second
}

// writeDeployment writes the keys of job for n clients as graphfed keys
// does: one seed file per party and keyring.json. It returns the seed
// files by party id and the keyring's path.
func writeDeployment(t *testing.T, job string, n int) (*bus.Deployment, map[string]string, string) {
	t.Helper()
	var banks []string
	for i := range n {
		banks = append(banks, deploy.ClientID(i))
	}
	dep, err := bus.NewDeployment(job, banks)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	seeds := map[string]string{}
	for _, c := range append(dep.Creds, dep.LedgerAdmin) {
		seeds[c.ID] = filepath.Join(dir, c.ID+".nk")
		if err := bus.WriteSeedFile(seeds[c.ID], job, c); err != nil {
			t.Fatal(err)
		}
	}
	ring, err := dep.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := ring.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "keyring.json")
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	return dep, seeds, path
}

// A signed run: every party signs with its seed and verifies with the
// keyring. Envelopes that claim a party but carry another's signature, or
// none, are rejected as "signature" by whoever receives them (an update
// forged as client-1 by client-0's key at the aggregator, a round forged as
// the aggregator's at the agents), and the run completes as if they had
// never been sent.
func TestProcessSignedRunRejectsForgery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const job, rounds = "proc", 4
	dirs := writeClients(t, 3)
	dep, seeds, keyring := writeDeployment(t, job, 3)
	// Every party logs in with its key, but the server has no subject
	// permissions, as if they were misconfigured: signatures alone must
	// stop client-0 from speaking as client-1 or as the aggregator.
	conf := "authorization {\n  users = [\n"
	for _, p := range dep.Parties() {
		conf += fmt.Sprintf("    { nkey: %q }\n", p.PublicKey)
	}
	conf += "  ]\n}\n"
	confPath := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerOptions{ConfigFile: confPath, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()

	// The forger is client-0 itself. It listens for round 1 to open: then
	// every client has joined and its forged update passes the sender
	// checks up to the signature.
	nc, err := bus.Connect(url, bus.ConnectOptions{Name: "forger", Creds: seeds["client-0"]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	opened := watchRoundOpen(t, nc, job)

	agg := graphfedCmd(t, "aggregator", "--insecure", "--nats", url, "--job", job, "--rounds", fmt.Sprint(rounds), "--min-clients", "3",
		"--round-timeout", "60s", "--creds", seeds[bus.AggregatorID], "--keyring", keyring, "--json", "--log-level", "warn",
		"--schema", bankSchema(t, "--job", job, "--data", dirs[0]))
	var aggOut, aggErr bytes.Buffer
	agg.Stdout, agg.Stderr = &aggOut, &aggErr
	if err := agg.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agg.Process.Kill() })
	agents := make([]*exec.Cmd, len(dirs))
	outs, errs := make([]bytes.Buffer, len(dirs)), make([]bytes.Buffer, len(dirs))
	for i, dir := range dirs {
		id := deploy.ClientID(i)
		agents[i] = graphfedCmd(t, "agent", "--insecure", "--nats", url, "--job", job, "--client", id, "--data", dir, "--local-epochs", "2",
			"--creds", seeds[id], "--keyring", keyring, "--json", "--log-level", "warn")
		agents[i].Stdout, agents[i].Stderr = &outs[i], &errs[i]
		if err := agents[i].Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agents[i].Process.Kill() })
	}

	select {
	case <-opened:
	case <-time.After(30 * time.Second):
		t.Fatalf("round 1 never opened\n%s", aggErr.String())
	}
	a, _ := dep.Credential("client-0")
	kp, err := nkeys.FromSeed(a.Seed)
	if err != nil {
		t.Fatal(err)
	}
	asClient1, err := bus.NewSigner("client-1", kp) // client-0's key, client-1's name
	if err != nil {
		t.Fatal(err)
	}
	asAggregator, err := bus.NewSigner(bus.AggregatorID, kp)
	if err != nil {
		t.Fatal(err)
	}
	forgedUpdate, err := asClient1.Seal(bus.Envelope{Job: job, Kind: bus.KindUpdate, From: "client-1", Round: 1, Seq: 1 << 40},
		&bus.Update{Round: 1, Weight: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := bus.Seal(bus.Envelope{Job: job, Kind: bus.KindUpdate, From: "client-2", Round: 1, Seq: 1 << 40},
		&bus.Update{Round: 1, Weight: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	forgedRound, err := asAggregator.Seal(bus.Envelope{Job: job, Kind: bus.KindRound, From: bus.AggregatorID, Round: 2, Seq: 1 << 40},
		&bus.RoundOpen{Round: 2, Deadline: time.Now().Add(time.Minute).UnixNano(), ModelRound: 1})
	if err != nil {
		t.Fatal(err)
	}
	for subj, data := range map[string][]byte{
		bus.Subject(job, bus.KindUpdate, "client-1"): forgedUpdate,
		bus.Subject(job, bus.KindUpdate, "client-2"): unsigned,
		bus.Subject(job, bus.KindRound):              forgedRound,
	} {
		if err := nc.Publish(subj, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	if err := agg.Wait(); err != nil {
		t.Fatalf("aggregator: %v\n%s", err, aggErr.String())
	}
	r := lastJSON(t, aggOut.Bytes())
	m := r["metrics"].(map[string]any)
	rejects := m["rejects"].(map[string]any)
	if r["rounds"].(float64) != rounds || m["clients_reporting"].(float64) != 3 || m["rounds_closed_at_deadline"].(float64) != 0 {
		t.Fatalf("the signed run did not complete: %v", r)
	}
	if rejects["signature"] != 2.0 || len(rejects) != 1 {
		t.Fatalf("aggregator rejects %v, want exactly the forged and the unsigned update as signature", rejects)
	}
	if d := m["dropped"].(map[string]any); len(d) != 0 {
		t.Fatalf("updates dropped %v: a forged update took an honest one's place", d)
	}
	for i, a := range agents {
		if err := a.Wait(); err != nil {
			t.Fatalf("agent %d: %v\n%s", i, err, errs[i].String())
		}
		ar := lastJSON(t, outs[i].Bytes())
		if rj := ar["metrics"].(map[string]any)["rejects"].(map[string]any); rj["signature"] != 1.0 {
			t.Fatalf("agent %d rejects %v, want the forged round as signature", i, rj)
		}
	}
}

// watchRoundOpen signals (without blocking, at most one pending) each round
// opening of job that nc hears, subscribed and flushed before it returns.
func watchRoundOpen(t *testing.T, nc *nats.Conn, job string) <-chan struct{} {
	t.Helper()
	opened := make(chan struct{}, 1)
	sub, err := nc.Subscribe(bus.Subject(job, bus.KindRound), func(*nats.Msg) {
		select {
		case opened <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return opened
}
