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

	"graphfed/bus"
	"graphfed/graph"
	"graphfed/scenarios"
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
		dirs[i] = filepath.Join(t.TempDir(), scenarios.ClientID(i))
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
	p.agg = graphfedCmd(t, "aggregator", "--nats", url, "--job", "proc", "--rounds", fmt.Sprint(rounds),
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
		a := graphfedCmd(t, "agent", "--nats", url, "--job", "proc", "--client", scenarios.ClientID(i), "--data", dir,
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
