package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"graphfed/bus"
	"graphfed/deploy"
)

// A durable job runs end to end on a server configured by `graphfed keys`:
// every party logs in with its own key and holds only its role's subject
// and JetStream permissions, messages are signed, and the aggregator keeps
// its checkpoints in JetStream. No process may see a permissions
// violation, so the durable mode needs nothing beyond the role's grants.
func TestProcessDurableUnderPermissions(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const job, rounds = "proc", 3
	dirs := writeClients(t, 3)
	dep, seeds, keyring := writeDeployment(t, job, 3)
	ring, err := bus.LoadKeyring(keyring)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf, err := bus.ServerConfig(ring, bus.ServerConfigOptions{Listen: "127.0.0.1:4222", StoreDir: filepath.Join(dir, "js"),
		LedgerAdmin: dep.LedgerAdmin.PublicKey, SecAgg: true}) // as graphfed keys lays it out
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
	url := srv.ClientURL()
	// As in docs/DEPLOY.md step 4: the ledger administrator's key creates
	// the ledger streams before any party starts (no party may).
	if err := graphfedCmd(t, "keys", "ledger", "--nats", url, "--creds", seeds[bus.LedgerAdminID], "--keyring", keyring).Run(); err != nil {
		t.Fatalf("keys ledger: %v", err)
	}

	agg := graphfedCmd(t, "aggregator", "--nats", url, "--job", job, "--rounds", fmt.Sprint(rounds), "--min-clients", "3",
		"--round-timeout", "20s", "--durable", "--ack-wait", "1s", "--creds", seeds[bus.AggregatorID], "--keyring", keyring,
		"--schema", bankSchema(t, "--job", job, "--data", dirs[0]),
		"--json", "--log-level", "info")
	var aggOut, aggErr bytes.Buffer
	agg.Stdout, agg.Stderr = &aggOut, &aggErr
	if err := agg.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agg.Process.Kill() })
	agents := make([]*exec.Cmd, len(dirs))
	errs := make([]bytes.Buffer, len(dirs))
	for i, d := range dirs {
		id := deploy.ClientID(i)
		agents[i] = graphfedCmd(t, "agent", "--nats", url, "--job", job, "--client", id, "--data", d, "--local-epochs", "2",
			"--durable", "--creds", seeds[id], "--keyring", keyring, "--json", "--log-level", "info")
		agents[i].Stderr = &errs[i]
		if err := agents[i].Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agents[i].Process.Kill() })
	}
	// A job stuck on a refused JetStream call would wait forever: stop it
	// and show the logs instead.
	watchdog := time.AfterFunc(90*time.Second, func() {
		agg.Process.Kill()
		for _, a := range agents {
			a.Process.Kill()
		}
	})
	defer watchdog.Stop()
	if err := agg.Wait(); err != nil {
		var logs strings.Builder
		for i := range errs {
			fmt.Fprintf(&logs, "--- %s\n%s", deploy.ClientID(i), errs[i].String())
		}
		t.Fatalf("aggregator: %v\n%s\n%s", err, aggErr.String(), logs.String())
	}
	r := lastJSON(t, aggOut.Bytes())
	m := r["metrics"].(map[string]any)
	if r["rounds"].(float64) != rounds || m["clients_reporting"].(float64) != 3 || m["rounds_closed_at_deadline"].(float64) != 0 {
		t.Fatalf("the durable run did not complete by quorum: %v\n%s", r, aggErr.String())
	}
	for i, a := range agents {
		if err := a.Wait(); err != nil {
			t.Fatalf("agent %d: %v\n%s", i, err, errs[i].String())
		}
	}
	logs := map[string]string{"aggregator": aggErr.String()}
	for i := range errs {
		logs[deploy.ClientID(i)] = errs[i].String()
	}
	for who, log := range logs {
		if strings.Contains(strings.ToLower(log), "permissions violation") {
			t.Errorf("%s saw a permissions violation:\n%s", who, log)
		}
	}
}
