package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"graphfed/privacy"
)

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

// The issue-12 process test of AML: the aggregator and three bank agents
// as separate OS processes on the server configuration `graphfed keys`
// writes (permissions on, signed, durable), the banks training CE-FedGNN
// from `graphfed split aml` directories and exchanging boundary embeddings
// bank to bank. Uninterrupted, every bank releases embeddings every round
// and every embedding message a bank takes is a release in its sender's
// ledger; then a bank and the aggregator are killed (testKillAndRecover).
// About 45 s on 2 cores.
func TestProcessAMLBanksPermissionedDurable(t *testing.T) { testProcessAMLBanks(t, false) }

// The same over mutual TLS: `graphfed keys --tls`, every party on tls://
// with its own certificate.
func TestProcessAMLBanksPermissionedDurableTLS(t *testing.T) { testProcessAMLBanks(t, true) }

func testProcessAMLBanks(t *testing.T, tls bool) {
	requireProcessTests(t)
	dirs, ids := amlBankDirs(t)
	spec := jobSpec{rounds: 4, killRound: 2, aggArgs: []string{"--algo", "cefedgnn", "--task", "aml"}, tls: tls,
		// --emb-every 1: a release every round (layer 0 alone is released
		// 3 times a job by default), so that the kill lands between two.
		agentArgs: func(i int) []string {
			return []string{"--task", "aml", "--data", dirs[i], "--local-epochs", "2", "--emb-every", "1"}
		}}
	testKillAndRecover(t, "aml", ids, spec, func(t *testing.T, r *jobRun, es []privacy.Entry) {
		var all []uint64
		for i := range spec.rounds {
			all = append(all, uint64(i+1))
		}
		for i, id := range ids {
			if got := roundsOf(es, id, privacy.ChannelEmb); !slices.Equal(got, all) {
				t.Errorf("%s's embedding releases in the ledger are of rounds %v, want %v", id, got, all)
			}
			rep := r.j.report(r.agents[i])["metrics"].(map[string]any)
			from, _ := rep["emb_received_from"].(map[string]any)
			for _, peer := range ids {
				// Every release of a neighbour reached this bank, and
				// nothing reached it that its sender's ledger lacks.
				if got, logged := from[peer], len(roundsOf(es, peer, privacy.ChannelEmb)); peer != id && got != float64(logged) {
					t.Errorf("%s took %v embedding messages from %s, whose ledger shows %d releases", id, got, peer, logged)
				}
			}
			t.Logf("%s took %v embedding messages (%v rows) from %v", id, rep["emb_received_messages"], rep["emb_received_rows"], fmt.Sprint(from))
		}
	})
}
