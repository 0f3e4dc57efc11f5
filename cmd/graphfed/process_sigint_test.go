package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGINT on a real aggregator process: it writes its report so far (the
// JSON line, with "stopped"), exits non-zero with the reason, and every
// agent process exits within 5 s saying that the aggregator stopped the
// job. Started again with --resume it finishes the job.
func TestProcessSigintAggregator(t *testing.T) {
	requireProcessTests(t)
	dirs := writeClients(t, 3)
	run := newDurableRun(t, dirs)
	agg, out, stderr := run.aggregator(t)
	run.startAgents(t, nil)
	sc := bufio.NewScanner(stderr)
	var signalled time.Time
	for sc.Scan() {
		if strings.Contains(sc.Text(), "round closed") && strings.Contains(sc.Text(), "round=2") {
			if err := agg.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			signalled = time.Now()
			break
		}
	}
	if signalled.IsZero() {
		t.Fatal("round 2 never closed")
	}
	var log strings.Builder
	io.Copy(&log, stderr)
	for agg.ProcessState == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if agg.ProcessState.Success() || !strings.Contains(log.String(), "received SIGINT") {
		t.Fatalf("aggregator exited %v; log:\n%s", agg.ProcessState, log.String())
	}
	rep := lastJSON(t, out.Bytes())
	if m := rep["metrics"].(map[string]any); m["stopped"] != "received SIGINT" || rep["rounds"].(float64) < 2 {
		t.Fatalf("report so far %v", rep)
	}
	for i, a := range run.agents {
		done := make(chan error, 1)
		go func() { done <- a.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !strings.Contains(run.agentErrs[i].String(), "the aggregator stopped the job after") {
				t.Fatalf("agent %d exited with %v:\n%s", i, err, run.agentErrs[i].String())
			}
		case <-time.After(5*time.Second - time.Since(signalled)):
			t.Fatalf("agent %d still running 5 s after SIGINT to the aggregator:\n%s", i, run.agentErrs[i].String())
		}
	}

	// --resume (on in durableRun.aggregator) continues the job to its end.
	run.agents, run.agentErrs, run.agentOut = nil, make([]bytes.Buffer, len(dirs)), make([]bytes.Buffer, len(dirs))
	_, out, stderr = run.aggregator(t)
	run.startAgents(t, nil)
	io.Copy(io.Discard, stderr)
	run.waitAgents(t)
	if m := report(t, out.Bytes()); m["resumed"] != true {
		t.Fatalf("the restarted aggregator did not resume: %v", m)
	}
}
