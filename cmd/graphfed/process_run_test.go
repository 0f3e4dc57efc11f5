package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"graphfed/bus"
)

// `graphfed run JOB.yaml --json` and the `graphfed sim` command line it
// stands for give the same report: the AML demo's job file with the flags
// that shrink it (a tiny three-bank world, 2 rounds of 2 local steps; the
// full demo takes minutes) given on the run command line, as overrides of
// the file. About 15 s on 2 cores.
func TestProcessRunJobFileMatchesSim(t *testing.T) {
	requireProcessTests(t)
	small := []string{"--size", "tiny", "--banks", "3", "--rounds", "2", "--local-epochs", "2", "--json"}
	job := filepath.Join("..", "..", "examples", "aml-demo.yaml")
	dir := t.TempDir()
	runOut, simOut := filepath.Join(dir, "run"), filepath.Join(dir, "sim")
	// The file's out is runs/demo; the command line moves it.
	runArgs := append([]string{"run", job, "--out", runOut}, small...)
	simArgs := append([]string{"sim", "--scenario", "aml", "--seed", "1", "--log-level", "warn", "--out", simOut}, small...)
	reports := make([]map[string]any, 2)
	for i, args := range [][]string{runArgs, simArgs} {
		out, err := graphfedCmd(t, args...).Output()
		if err != nil {
			t.Fatalf("graphfed %v: %v", args, err)
		}
		reports[i] = lastJSON(t, out)
	}
	for _, r := range reports {
		delete(r, "seconds")
		delete(r["metrics"].(map[string]any), "peak_rss_mib")
		delete(r["metrics"].(map[string]any), "job_seconds")
		delete(r["privacy"].(map[string]any), "ledger")
		if sa, ok := r["privacy"].(map[string]any)["secagg"].(map[string]any); ok {
			for _, k := range []string{"aggregator_seconds", "bank_seconds_mean", "round_seconds", "crypto_share_of_round_time"} {
				delete(sa, k) // timings
			}
		}
	}
	if !reflect.DeepEqual(reports[0], reports[1]) {
		a, _ := json.MarshalIndent(reports[0], "", " ")
		b, _ := json.MarshalIndent(reports[1], "", " ")
		t.Fatalf("graphfed run's report\n%s\ndiffers from graphfed sim's\n%s", a, b)
	}
	m, p := reports[0]["metrics"].(map[string]any), reports[0]["privacy"].(map[string]any)
	if reports[0]["algo"] != "cefedgnn" || p["seeded_noise"] != true {
		t.Errorf("algo %v, seeded noise %v: want the demo's cefedgnn with noise seeded by the file's seed", reports[0]["algo"], p["seeded_noise"])
	}
	for _, d := range []string{runOut, simOut} {
		if _, err := os.Stat(filepath.Join(d, "summary.json")); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	t.Logf("test_f1_illicit %v, epsilon_p90 %v", m["test_f1_illicit"], p["epsilon_p90"])
}

// The three-bank deployment's job files run as written but for what names
// this machine (server address, keys, bank directories and ids, one
// replica) and a shorter job, given as flags after each file: the
// aggregator and three agents as separate processes on a permissioned
// server, signed and durable. About 20 s on 2 cores.
func TestProcessDeployExampleRuns(t *testing.T) {
	requireProcessTests(t)
	dirs, ids := amlBankDirs(t)
	j := newPermJob(t, "aml-1", ids, 3*time.Minute, false)
	example := filepath.Join("..", "..", "examples", "deploy-3banks")
	agg := j.start(bus.AggregatorID, nil, append([]string{"run", filepath.Join(example, "aggregator.yaml")},
		append(j.signed(bus.AggregatorID), "--clients", strings.Join(ids, ","), "--replicas", "1", "--rounds", "2", "--json",
			"--schema", bankSchema(t, "--job", "aml-1", "--task", "aml", "--data", dirs[0]))...)...)
	var agents []*proc
	for i, id := range ids {
		args := append([]string{"run", filepath.Join(example, fmt.Sprintf("bank-%d.yaml", i))}, j.signed(id)...)
		agents = append(agents, j.start(id, nil, append(args, "--client", id, "--data", dirs[i], "--local-epochs", "2", "--json")...))
	}
	j.wait(agg)
	rep := j.report(agg)
	m := rep["metrics"].(map[string]any)
	if rep["rounds"] != 2.0 || rep["algo"] != "cefedgnn" || m["task"] != "aml" || m["clients_reporting"] != 3.0 {
		t.Errorf("aggregator report: rounds %v algo %v task %v clients %v, want 2 rounds of cefedgnn on aml with 3 banks",
			rep["rounds"], rep["algo"], m["task"], m["clients_reporting"])
	}
	for i, a := range agents {
		j.wait(a)
		if am := j.report(a)["metrics"].(map[string]any); am["client"] != ids[i] || am["rounds_trained"] != 2.0 {
			t.Errorf("%s: client %v trained %v rounds", ids[i], am["client"], am["rounds_trained"])
		}
	}
}
