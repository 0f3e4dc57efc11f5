package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/bus"
	"graphfed/deploy"
)

// secureJob is a job of separate processes on a server configured as
// `graphfed keys` configures one, every party with its own key.
type secureJob struct {
	job, url, keyring string
	seeds             map[string]string
	dirs              []string
	agents            []*exec.Cmd
	agentErrs         []bytes.Buffer
}

func newSecureJob(t *testing.T, job string, dirs []string) *secureJob {
	t.Helper()
	dep, seeds, keyring := writeDeployment(t, job, len(dirs))
	ring, err := bus.LoadKeyring(keyring)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf, err := bus.ServerConfig(ring, bus.ServerConfigOptions{Listen: "127.0.0.1:4222", StoreDir: filepath.Join(dir, "js"),
		LedgerAdmin: dep.LedgerAdmin.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerOptions{ConfigFile: confPath, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	j := &secureJob{job: job, url: srv.ClientURL(), keyring: keyring, seeds: seeds, dirs: dirs, agentErrs: make([]bytes.Buffer, len(dirs))}
	if err := graphfedCmd(t, "keys", "ledger", "--nats", j.url, "--creds", seeds[bus.LedgerAdminID], "--keyring", keyring).Run(); err != nil {
		t.Fatalf("keys ledger: %v", err)
	}
	return j
}

// aggregator starts `graphfed aggregator --durable --resume` with the
// aggregator's key; its log is returned as a pipe that ends with it. Its
// rounds travel in the clear: a taken-over job resumes its updates from
// the durable log, which a secure round (not snapshotted) cannot.
func (j *secureJob) aggregator(t *testing.T, rounds int) (*exec.Cmd, *bytes.Buffer, *io.PipeReader) {
	t.Helper()
	cmd := graphfedCmd(t, "aggregator", "--nats", j.url, "--job", j.job, "--rounds", fmt.Sprint(rounds), "--min-clients", fmt.Sprint(len(j.dirs)),
		"--round-timeout", "60s", "--durable", "--resume", "--ack-wait", "1s", "--lease-ttl", "2s",
		"--creds", j.seeds[bus.AggregatorID], "--keyring", j.keyring, "--json", "--log-level", "debug", "--secagg", "off",
		"--schema", bankSchema(t, "--job", j.job, "--data", j.dirs[0]))
	out := &bytes.Buffer{}
	cmd.Stdout = out
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	go func() {
		cmd.Wait()
		pw.Close()
	}()
	return cmd, out, pr
}

func (j *secureJob) startAgents(t *testing.T) {
	t.Helper()
	for i, dir := range j.dirs {
		id := deploy.ClientID(i)
		a := graphfedCmd(t, "agent", "--nats", j.url, "--job", j.job, "--client", id, "--data", dir, "--local-epochs", "2",
			"--durable", "--seed", fmt.Sprint(i+1), "--noise-seed", fmt.Sprint(100+i),
			"--creds", j.seeds[id], "--keyring", j.keyring, "--json", "--log-level", "warn")
		a.Stderr = &j.agentErrs[i]
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		j.agents = append(j.agents, a)
		t.Cleanup(func() { a.Process.Kill() })
	}
}

func (j *secureJob) signalAgents(t *testing.T, sig syscall.Signal) {
	t.Helper()
	for _, a := range j.agents {
		if err := a.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
}

func (j *secureJob) waitAgents(t *testing.T) {
	t.Helper()
	for i, a := range j.agents {
		if err := a.Wait(); err != nil {
			t.Fatalf("agent %d: %v\n%s", i, err, j.agentErrs[i].String())
		}
	}
}

// runOfLog is the run id an aggregator's "aggregator ready" line names.
var runOfLog = regexp.MustCompile(`run=([0-9a-f]{16}-[0-9a-f]{16})`)

// tapRuns subscribes to gf.<job>.> in the aggregator's account and
// collects the runs of every round and done the aggregator sends.
type tapRuns struct {
	mu   sync.Mutex
	runs []string
}

func (tr *tapRuns) start(t *testing.T, j *secureJob) {
	t.Helper()
	nc, err := bus.Connect(j.url, bus.ConnectOptions{Name: "tap", Creds: j.seeds[bus.AggregatorID]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	_, err = nc.Subscribe("gf."+j.job+".>", func(m *nats.Msg) {
		env, err := bus.Open(m.Data)
		if err != nil || env.From != bus.AggregatorID {
			return
		}
		var run string
		switch env.Kind {
		case bus.KindRound:
			var b bus.RoundOpen
			if env.UnmarshalBody(&b) == nil {
				run = b.Run
			}
		case bus.KindDone:
			var b bus.Done
			if env.UnmarshalBody(&b) == nil {
				run = b.Run
			}
		default:
			return
		}
		tr.mu.Lock()
		tr.runs = append(tr.runs, run)
		tr.mu.Unlock()
	})
	if err := errors.Join(err, nc.Flush()); err != nil {
		t.Fatal(err)
	}
}

func (tr *tapRuns) seen() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.runs)
}

// The fencing of issue 28, item 4, in separate processes with every
// party's own key: a second `aggregator --resume` started while the job
// runs exits non-zero with the refusal before it announced anything (no
// round or done of its run goes out, the agents see no other run), and
// once the first one is killed with SIGKILL a third one takes the job over
// after its lease lapsed. The job finishes with the final model of an
// undisturbed run, bit for bit.
func TestProcessSecondAggregatorRefusedThenTakeover(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const rounds = 8
	dirs := writeClients(t, 3)

	ref := newSecureJob(t, "proc-ref", dirs)
	_, refOut, refLog := ref.aggregator(t, rounds)
	ref.startAgents(t)
	io.Copy(io.Discard, refLog)
	ref.waitAgents(t)
	want := lastJSON(t, refOut.Bytes())["metrics"].(map[string]any)["model_sha256"].(string)

	j := newSecureJob(t, "proc", dirs)
	var tap tapRuns
	tap.start(t, j)
	first, _, firstLog := j.aggregator(t, rounds)
	j.startAgents(t)
	watchdog := time.AfterFunc(3*time.Minute, func() {
		first.Process.Kill()
		for _, a := range j.agents {
			a.Process.Kill()
		}
	})
	defer watchdog.Stop()

	// The first one's log is read on as it comes: a pipe left unread would
	// hold it still.
	lines := make(chan string, 1<<16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(firstLog)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, firstLog)
	}()
	// Once round 2 closed, the same command again. The agents are held
	// still meanwhile (SIGSTOP), so that the job is running, not over,
	// however fast its rounds are: its aggregator waits for their updates
	// and renews its lease.
	var firstRun string
	var seen []string
	for line := range lines {
		seen = append(seen, line)
		if m := runOfLog.FindStringSubmatch(line); firstRun == "" && m != nil && strings.Contains(line, "aggregator ready") {
			firstRun = m[1]
		}
		if strings.Contains(line, "round closed") && strings.Contains(line, " round=2 ") {
			break
		}
	}
	if firstRun == "" {
		t.Fatalf("the first aggregator never said it was ready, or closed no round 2:\n%s", strings.Join(seen, "\n"))
	}
	j.signalAgents(t, syscall.SIGSTOP)
	second, secondOut, secondLog := j.aggregator(t, rounds)
	secondErr, _ := io.ReadAll(secondLog) // to its end: the process has exited
	if code := second.ProcessState.ExitCode(); code == 0 {
		t.Fatalf("the second aggregator exited with %d, want a non-zero exit\n%s", code, secondErr)
	}
	refusal := fmt.Sprintf("job %s is being run by run %s since ", j.job, firstRun)
	if !bytes.Contains(secondErr, []byte(refusal)) || !bytes.Contains(secondErr, []byte("refusing to start a second aggregator")) {
		t.Fatalf("the second aggregator's log does not say %q:\n%s", refusal, secondErr)
	}
	if bytes.Contains(secondErr, []byte("aggregator ready")) || secondOut.Len() > 0 {
		t.Fatalf("the refused aggregator started:\n%s\n%s", secondErr, secondOut.String())
	}
	j.signalAgents(t, syscall.SIGCONT)

	// Then SIGKILL the first one in round 5, with updates in.
	applied := 0
	for line := range lines {
		if strings.Contains(line, "update applied") && strings.Contains(line, " round=5 ") {
			if applied++; applied == 2 {
				break
			}
		}
	}
	if applied < 2 {
		t.Fatal("round 5 never received two updates")
	}
	// The agents held still again, so that the kill lands in round 5.
	j.signalAgents(t, syscall.SIGSTOP)
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	third, thirdOut, thirdLog := j.aggregator(t, rounds)
	j.signalAgents(t, syscall.SIGCONT)
	var thirdRun string
	lapsed := false
	sc := bufio.NewScanner(thirdLog)
	for sc.Scan() {
		line := sc.Text()
		lapsed = lapsed || strings.Contains(line, "the job's lease lapsed")
		if m := runOfLog.FindStringSubmatch(line); thirdRun == "" && m != nil && strings.Contains(line, "aggregator ready") {
			thirdRun = m[1]
		}
	}
	if code := third.ProcessState.ExitCode(); code != 0 || thirdRun == "" || !lapsed {
		t.Fatalf("the --resume aggregator after the kill exited with %d, run %q, lease lapsed %v", code, thirdRun, lapsed)
	}
	j.waitAgents(t)
	r := lastJSON(t, thirdOut.Bytes())
	m := r["metrics"].(map[string]any)
	if r["rounds"].(float64) != rounds || m["resumed"] != true || m["resumed_round"].(float64) < 5 {
		t.Fatalf("the takeover did not resume the job in round 5 or later: %v", r)
	}
	if got := m["model_sha256"].(string); got != want {
		t.Fatalf("final model %s after the second aggregator and the kill, %s undisturbed", got, want)
	}
	for _, run := range tap.seen() {
		if run != firstRun && run != thirdRun {
			t.Fatalf("a round or done of run %q went out; the job's runs are %s and %s", run, firstRun, thirdRun)
		}
	}
	for i := range j.agents {
		if log := j.agentErrs[i].String(); strings.Contains(log, bus.ReasonOtherRun) {
			t.Fatalf("%s saw a message of another run:\n%s", deploy.ClientID(i), log)
		}
	}
}
