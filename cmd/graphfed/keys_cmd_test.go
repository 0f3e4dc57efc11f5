package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"

	"graphfed/bus"
	"graphfed/deploy"
)

// runKeysCLI runs `graphfed <args> --json` with the keys command in this
// process and returns the JSON report printed on stdout.
func runKeysCLI(t *testing.T, args ...string) (Report, error) {
	t.Helper()
	g := &globalFlags{logLevel: "error"}
	root := &cobra.Command{Use: "graphfed", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().BoolVar(&g.json, "json", false, "")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "error", "")
	root.AddCommand(newKeysCmd(g))
	root.SetArgs(append(args, "--json"))
	return executeForReport(t, root)
}

// `graphfed keys` binds its flags into operator.KeysConfig (WriteKeys's
// own tests cover what it writes) and reports what was written under the
// same --json keys; a refused run writes nothing.
func TestKeysCmdReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "keys")
	rep, err := runKeysCLI(t, "keys", "--job", "aml-1", "--banks", "bank-0,bank-1,bank-2", "--out", out,
		"--cluster", "nats-1.example:6222,nats-2.example:6222,nats-3.example:6222", "--cluster-name", "c",
		"--store", "/var/lib/graphfed/js", "--listen", "0.0.0.0:4333", "--links", "bank-0:bank-1",
		"--max-params", "1000", "--max-emb-rows", "0", "--tls", "--tls-hosts", "nats.example.org", "--tls-validity", "48h")
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Metrics
	if rep.Command != "keys" || rep.Clients != 3 || m["cluster_nodes"] != 3.0 || m["out"] != out ||
		m["max_payload"] != float64(1<<20) || len(m["seed_files"].([]any)) != 5 || len(m["server_configs"].([]any)) != 4 {
		t.Fatalf("report %+v", rep)
	}
	for _, k := range []string{"job", "parties", "ledger_admin_seed", "keyring", "largest_message"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report lacks metrics.%s", k)
		}
	}
	tls := m["tls"].(map[string]any)
	if hosts := fmt.Sprint(tls["hosts"]); tls["mode"] != "generated" || !strings.Contains(hosts, "nats.example.org") {
		t.Fatalf("tls %v", tls)
	}
	o, err := server.ProcessConfigFile(filepath.Join(out, "server-2.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if o.ServerName != "c-2" || o.StoreDir != "/var/lib/graphfed/js" || o.Port != 4333 || o.TLSConfig == nil {
		t.Fatalf("server-2.conf: name %q store %q port %d", o.ServerName, o.StoreDir, o.Port)
	}

	dir := filepath.Join(t.TempDir(), "k")
	if _, err := runKeysCLI(t, "keys", "--job", "j", "--out", dir, "--banks", "bank-0", "--cluster", "a:6222,b:6222"); err == nil {
		t.Error("a two-node cluster: accepted")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("a refused run wrote %s", dir)
	}
}

// A whole job under credentials, as docs/DEPLOY.md runs it: the server on
// the generated configuration, the ledger streams created with the
// ledger administrator's seed, the aggregator and three agents as processes each
// with its own seed (the agents keep their JetStream ledgers), then the
// auditor's audit of the ledger.
func TestKeysSecuredProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const job = "proc"
	dirs := writeClients(t, 3)
	banks := make([]string, len(dirs))
	for i := range dirs {
		banks[i] = deploy.ClientID(i)
	}
	keys := filepath.Join(t.TempDir(), "keys")
	if _, err := runKeysCLI(t, "keys", "--job", job, "--banks", strings.Join(banks, ","), "--out", keys); err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerOptions{ConfigFile: filepath.Join(keys, "server.conf"), Port: -1,
		StoreDir: filepath.Join(t.TempDir(), "js")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	seed := func(id string) string { return filepath.Join(keys, id+".nk") }
	// A party's seed is refused: it would make the streams in the party's
	// own account.
	if _, err := runKeysCLI(t, "keys", "ledger", "--nats", url, "--creds", seed("aggregator"), "--keyring", filepath.Join(keys, "keyring.json")); err == nil ||
		!strings.Contains(err.Error(), "a party of the job") {
		t.Fatalf("keys ledger with the aggregator's seed: %v, want a refusal naming the administrator", err)
	}
	if _, err := runKeysCLI(t, "keys", "ledger", "--nats", url, "--creds", seed(bus.LedgerAdminID), "--keyring", filepath.Join(keys, "keyring.json")); err != nil {
		t.Fatalf("creating the ledger: %v", err)
	}

	var aggOut, aggErr bytes.Buffer
	agg := graphfedCmd(t, "aggregator", "--nats", url, "--job", job, "--creds", seed("aggregator"), "--rounds", "3",
		"--min-clients", "3", "--round-timeout", "20s", "--json", "--log-level", "warn")
	agg.Stdout, agg.Stderr = &aggOut, &aggErr
	if err := agg.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agg.Process.Kill() })
	agentErrs := make([]bytes.Buffer, len(dirs))
	var agents []*exec.Cmd
	for i, dir := range dirs {
		a := graphfedCmd(t, "agent", "--nats", url, "--job", job, "--client", banks[i], "--creds", seed(banks[i]),
			"--data", dir, "--local-epochs", "1", "--json", "--log-level", "warn")
		a.Stderr = &agentErrs[i]
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Process.Kill() })
		agents = append(agents, a)
	}
	if err := agg.Wait(); err != nil {
		t.Fatalf("aggregator: %v\n%s", err, aggErr.String())
	}
	for i, a := range agents {
		if err := a.Wait(); err != nil {
			t.Fatalf("agent %s: %v\n%s", banks[i], err, agentErrs[i].String())
		}
	}
	r := lastJSON(t, aggOut.Bytes())
	if r["rounds"].(float64) != 3 || r["metrics"].(map[string]any)["clients_reporting"].(float64) != 3 {
		t.Fatalf("aggregator report %v", r)
	}

	audit := graphfedCmd(t, "audit", "--nats", url, "--job", job, "--creds", seed("auditor"), "--keyring", filepath.Join(keys, "keyring.json"),
		"--json", "--log-level", "warn")
	var auditErr bytes.Buffer
	audit.Stderr = &auditErr
	out, err := audit.Output()
	if err != nil {
		t.Fatalf("audit: %v\n%s", err, auditErr.String())
	}
	if a := lastJSON(t, out); a["command"] != "audit" || a["clients"].(float64) != 3 {
		t.Fatalf("audit report %v", a)
	}
}
