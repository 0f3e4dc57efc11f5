package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"graphfed/privacy"
)

const amlProcRounds = 4

// amlBankDirs generates a tiny three-bank world and splits it with the
// CLI, as a user would: one directory per bank, named after it.
func amlBankDirs(t *testing.T) (dirs, ids []string) {
	t.Helper()
	dir := t.TempDir()
	if out, err := graphfedCmd(t, "gen", "aml", "--banks", "3", "--size", "tiny", "--seed", "1", "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("graphfed gen aml: %v\n%s", err, out)
	}
	banks := filepath.Join(dir, "banks")
	if out, err := graphfedCmd(t, "split", "aml", "--trans", filepath.Join(dir, "HI-Tiny_Trans.csv"), "--out", banks).CombinedOutput(); err != nil {
		t.Fatalf("graphfed split aml: %v\n%s", err, out)
	}
	ents, err := os.ReadDir(banks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "bank-") {
			dirs, ids = append(dirs, filepath.Join(banks, e.Name())), append(ids, e.Name())
		}
	}
	if len(ids) != 3 {
		t.Fatalf("split aml wrote %v, want three bank directories", ids)
	}
	return dirs, ids
}

// amlJob runs one AML CE-FedGNN job of three bank processes; kill, when
// set, runs alongside it and may kill and restart parties. It returns the
// aggregator's report, the banks' reports (of their last lives) and the
// job's ledger.
type amlJobRun struct {
	j       *permJob
	agg     *proc
	banks   []*proc
	dirs    []string
	timeout string
}

func startAMLJob(t *testing.T, job string, dirs, ids []string, timeout string, onAggLine func(string)) *amlJobRun {
	t.Helper()
	r := &amlJobRun{j: newPermJob(t, job, ids, 80*time.Second), dirs: dirs, timeout: timeout}
	r.agg = r.aggregator(onAggLine)
	for i := range ids {
		r.banks = append(r.banks, r.bank(i))
	}
	return r
}

func (r *amlJobRun) aggregator(onLine func(string)) *proc {
	return r.j.aggregator(onLine, "--algo", "cefedgnn", "--task", "aml", "--rounds", fmt.Sprint(amlProcRounds),
		"--round-timeout", r.timeout)
}

func (r *amlJobRun) bank(i int) *proc {
	return r.j.agent(i, "--task", "aml", "--data", r.dirs[i], "--local-epochs", "2")
}

// finish waits for every party and returns the aggregator's report.
func (r *amlJobRun) finish(t *testing.T) map[string]any {
	t.Helper()
	r.j.wait(r.agg)
	for _, b := range r.banks {
		r.j.wait(b)
	}
	rep := r.j.report(r.agg)
	if rep["rounds"].(float64) != amlProcRounds || rep["metrics"].(map[string]any)["clients_reporting"].(float64) != 3 {
		t.Fatalf("the job did not finish with every bank's final report: %v\n%s", rep, r.j.logs())
	}
	return rep["metrics"].(map[string]any)
}

// The issue-12 process test of AML: the aggregator and three bank agents
// as separate OS processes on the server configuration `graphfed keys`
// writes (permissions on, signed, durable), the banks training CE-FedGNN
// from `graphfed split aml` directories and exchanging boundary embeddings
// bank to bank. Uninterrupted, every embedding message a bank receives is
// a release in its sender's ledger; a bank killed with SIGKILL mid-round
// and restarted releases no round twice and the job finishes; the
// aggregator killed with SIGKILL gives the uninterrupted run's final model
// bit for bit (seeded noise).
func TestProcessAMLBanksPermissionedDurable(t *testing.T) {
	requireProcessTests(t)
	dirs, ids := amlBankDirs(t)
	var want string

	t.Run("uninterrupted", func(t *testing.T) {
		began := time.Now()
		r := startAMLJob(t, "aml-ref", dirs, ids, "60s", nil)
		m := r.finish(t)
		if m["rounds_closed_at_deadline"].(float64) != 0 {
			t.Fatalf("a round closed at its deadline in an uninterrupted run: %v", m)
		}
		want = m["model_sha256"].(string)
		es := r.j.entries()
		count := checkReleasedOnce(t, es)
		all := make([]uint64, amlProcRounds)
		for i := range all {
			all[i] = uint64(i + 1)
		}
		for i, id := range ids {
			if got := roundsOf(es, id, privacy.ChannelEmb); !slices.Equal(got, all) {
				t.Errorf("%s's embedding releases in the ledger are of rounds %v, want %v", id, got, all)
			}
			rep := r.j.report(r.banks[i])["metrics"].(map[string]any)
			from, _ := rep["emb_received_from"].(map[string]any)
			for _, peer := range ids {
				if peer == id {
					continue
				}
				// Every release of a neighbour reached this bank, and
				// nothing reached it that its sender's ledger lacks.
				if got, logged := from[peer], len(roundsOf(es, peer, privacy.ChannelEmb)); got != float64(logged) {
					t.Errorf("%s took %v embedding messages from %s, whose ledger shows %d releases", id, got, peer, logged)
				}
			}
			t.Logf("%s: received %v embedding messages (%v rows) from %v; ledger %v", id, rep["emb_received_messages"],
				rep["emb_received_rows"], from, count[id])
		}
		a := r.j.audit()
		t.Logf("uninterrupted: %d rounds in %v, model %s, audit: %v entries, %v releases, %v nodes",
			amlProcRounds, time.Since(began).Round(time.Millisecond), want[:16], a["metrics"].(map[string]any)["entries"],
			a["metrics"].(map[string]any)["releases"], a["metrics"].(map[string]any)["nodes"])
	})

	t.Run("bank killed", func(t *testing.T) {
		began := time.Now()
		// A short deadline: the killed bank's round may have to close
		// without it (its release is in the ledger, its update is lost).
		r := startAMLJob(t, "aml-bank", dirs, ids, "10s", nil)
		victim := 1
		hit := make(chan privacy.Entry, 1)
		r.j.onLedger(ids[victim], func(e privacy.Entry) {
			if e.Round == 2 && e.Channel != privacy.ChannelCalibration {
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
			t.Fatalf("the job ended before %s released in round 2\n%s", ids[victim], r.j.logs())
		}
		r.j.kill(r.banks[victim])
		killedAt := time.Since(began)
		r.banks[victim] = r.bank(victim)
		m := r.finish(t)
		es := r.j.entries()
		count := checkReleasedOnce(t, es)
		t.Logf("bank killed: %s SIGKILLed at %v right after its ledger entry %s of round %d; restarted; job finished in %v "+
			"(%v rounds at their deadline); ledger of %s: model rounds %v, emb rounds %v; releases %v",
			ids[victim], killedAt.Round(time.Millisecond), e.Channel, e.Round, time.Since(began).Round(time.Millisecond),
			m["rounds_closed_at_deadline"], ids[victim], roundsOf(es, ids[victim], privacy.ChannelModel),
			roundsOf(es, ids[victim], privacy.ChannelEmb), count)
		r.j.audit()
	})

	t.Run("aggregator killed", func(t *testing.T) {
		if want == "" {
			t.Skip("no reference model")
		}
		began := time.Now()
		applied := make(chan struct{}, 8)
		r := startAMLJob(t, "aml-agg", dirs, ids, "60s", func(line string) {
			if strings.Contains(line, "update applied") && strings.Contains(line, "round=2") {
				applied <- struct{}{}
			}
		})
		for range 2 {
			select {
			case <-applied:
			case <-r.agg.done:
				t.Fatalf("the aggregator ended before round 2 had two updates\n%s", r.j.logs())
			}
		}
		r.j.kill(r.agg)
		killedAt := time.Since(began)
		r.agg = r.aggregator(nil)
		m := r.finish(t)
		if m["resumed"] != true || m["resumed_round"].(float64) < 2 {
			t.Fatalf("the restarted aggregator did not resume in round 2 or later: %v", m)
		}
		if got := m["model_sha256"].(string); got != want {
			t.Fatalf("final model %s after the aggregator's SIGKILL, want %s as uninterrupted", got, want)
		}
		checkReleasedOnce(t, r.j.entries())
		t.Logf("aggregator killed at %v with two updates of round 2 applied; resumed in round %v; finished in %v; model %s in both runs",
			killedAt.Round(time.Millisecond), m["resumed_round"], time.Since(began).Round(time.Millisecond), want[:16])
	})
}
