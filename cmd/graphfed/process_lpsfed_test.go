package main

import (
	"os"
	"path/filepath"
	"testing"

	"graphfed/privacy"
)

// recClientDirs splits a Gowalla slice with the CLI into n LightGCN
// client directories, or skips the test without the shared datasets.
func recClientDirs(t *testing.T, n, maxUsers string) (dirs, ids []string) {
	t.Helper()
	src := filepath.Join("..", "..", "..", "shared", "datasets", "gowalla")
	if _, err := os.Stat(filepath.Join(src, "train.txt")); err != nil {
		t.Skipf("Gowalla not found at %s (../shared/datasets/gowalla beside the repository): %v", src, err)
	}
	out := t.TempDir()
	if b, err := graphfedCmd(t, "split", "rec", "--lightgcn", src, "--clients", n, "--max-users", maxUsers, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("graphfed split rec: %v\n%s", err, b)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			dirs, ids = append(dirs, filepath.Join(out, e.Name())), append(ids, e.Name())
		}
	}
	return dirs, ids
}

// The issue-12 process test of LPSFed: four clients of a Gowalla slice as
// separate processes, signed, under permissions and durable, as for AML
// (testKillAndRecover): the kills strike in round 3, the first after the
// frozen rounds, when references, ρ and margins are released and
// personalized models go out. The model compared bit for bit is every
// client's personalized model. About 45 s on 2 cores.
func TestProcessLPSFedPermissionedDurable(t *testing.T) { testProcessLPSFed(t, false) }

// The same over mutual TLS.
func TestProcessLPSFedPermissionedDurableTLS(t *testing.T) { testProcessLPSFed(t, true) }

func testProcessLPSFed(t *testing.T, tls bool) {
	requireProcessTests(t)
	dirs, ids := recClientDirs(t, "4", "600")
	if len(ids) != 4 {
		t.Fatalf("split rec wrote %v, want four client directories", ids)
	}
	spec := jobSpec{rounds: 4, killRound: 3, tls: tls,
		aggArgs: []string{"--algo", "lpsfed", "--task", "rec", "--phi", "32", "--final-wait", "30s"},
		agentArgs: func(i int) []string {
			return []string{"--task", "rec", "--data", dirs[i], "--phi", "32", "--local-epochs", "1", "--rec-lr", "5e-3"}
		},
		perRound: map[privacy.Channel]int{privacy.ChannelMargin: 2}}
	testKillAndRecover(t, "rec", ids, spec, func(t *testing.T, r *jobRun, es []privacy.Entry) {
		for _, id := range ids {
			if got := roundsOf(es, id, privacy.ChannelModel); len(got) != spec.rounds {
				t.Errorf("%s's model releases are of rounds %v, want one per round", id, got)
			}
			if got := roundsOf(es, id, privacy.ChannelMargin); len(got) == 0 {
				t.Errorf("%s released no ρ or margin", id)
			}
		}
		if m := r.j.report(r.agg)["metrics"].(map[string]any); m["recall_at_20"] == nil {
			t.Errorf("no recall@20 in the aggregator's report: %v", m)
		}
	})
}
