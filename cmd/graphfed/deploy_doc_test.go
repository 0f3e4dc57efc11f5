package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// walkthroughMark precedes each shell block of docs/DEPLOY.md that the
// walkthrough test runs.
const walkthroughMark = "<!-- walkthrough -->"

// walkthroughBlocks extracts, in order, the ```sh blocks that follow a
// walkthroughMark line in a Markdown document.
func walkthroughBlocks(doc string) ([]string, error) {
	var blocks []string
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != walkthroughMark {
			continue
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```sh" {
			return nil, fmt.Errorf("line %d: %s is not followed by a ```sh block", i+1, walkthroughMark)
		}
		var b []string
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			b = append(b, lines[j])
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: unterminated walkthrough block", i+2)
		}
		blocks = append(blocks, strings.Join(b, "\n"))
		i = j
	}
	return blocks, nil
}

func TestWalkthroughBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
		err       bool
	}{
		{"two blocks", "x\n<!-- walkthrough -->\n```sh\na\nb\n```\n```sh\nskipped\n```\n<!-- walkthrough -->\n```sh\nc\n```\n",
			[]string{"a\nb", "c"}, false},
		{"unmarked only", "```sh\na\n```\n", nil, false},
		{"mark without block", "<!-- walkthrough -->\ntext\n", nil, true},
		{"unterminated", "<!-- walkthrough -->\n```sh\na\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := walkthroughBlocks(tc.doc)
			if (err != nil) != tc.err || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("blocks %q, error %v; want %q, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// docs/DEPLOY.md's AML walkthrough runs as written: its marked blocks run
// as one bash script on loopback, with graphfed on the PATH, PORT a free
// port, and an empty working directory; the job must finish with every
// bank's final report and embeddings received from both neighbours. About
// 15 s on 2 cores.
func TestDeployWalkthrough(t *testing.T) {
	requireProcessTests(t)
	runWalkthrough(t, deployWalkthrough(t))
}

// The same walkthrough over mutual TLS, changed as DEPLOY.md's "Add TLS"
// says: `graphfed keys --tls`, a tls:// URL, and every party's
// certificate next to its --creds. The server must listen on tls://, and
// the job must finish as in the clear.
func TestDeployWalkthroughTLS(t *testing.T) {
	requireProcessTests(t)
	script, err := walkthroughOverTLS(deployWalkthrough(t))
	if err != nil {
		t.Fatal(err)
	}
	work := runWalkthrough(t, script)
	if log := mustRead(t, filepath.Join(work, "server.log")); !strings.Contains(string(log), "listening on tls://127.0.0.1:") {
		t.Fatalf("the server does not listen on tls://:\n%s", log)
	}
	conf := mustRead(t, filepath.Join(work, "keys-aml-1", "server.conf"))
	if !strings.Contains(string(conf), "verify: true") {
		t.Fatalf("server.conf does not require client certificates:\n%s", conf)
	}
}

// deployWalkthrough is the script of docs/DEPLOY.md's walkthrough, checked
// to hold every step of a deployment: a doc that lost a step would still
// run.
func deployWalkthrough(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "DEPLOY.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := walkthroughBlocks(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Join(blocks, "\n")
	for _, step := range []string{"graphfed gen aml", "graphfed split aml", "graphfed keys --job", "graphfed server --config",
		"graphfed keys ledger", "graphfed aggregator", "graphfed agent", "--task aml", "--creds", "--keyring", "--durable",
		"graphfed audit"} {
		if !strings.Contains(script, step) {
			t.Fatalf("the walkthrough of docs/DEPLOY.md lacks %q", step)
		}
	}
	return script
}

// credsFlag is a --creds flag of the walkthrough: the directory of the
// keys and the credential's id.
var credsFlag = regexp.MustCompile(`--creds (\S+)/([a-z0-9$-]+)\.nk\b`)

// walkthroughOverTLS changes the walkthrough's script as DEPLOY.md's "Add
// TLS" section says: --tls on `graphfed keys --job`, tls:// for the
// server's URL, and --tls-ca, --tls-cert and --tls-key beside every
// --creds (from the same directory, named after the credential). It
// fails if any change found nothing to change, so that a walkthrough
// rewritten some other way cannot pass as run over TLS.
func walkthroughOverTLS(script string) (string, error) {
	lines := strings.Split(script, "\n")
	keys, urls := 0, 0
	for i, l := range lines {
		if strings.Contains(l, "graphfed keys --job") {
			lines[i] = strings.Replace(l, "graphfed keys --job", "graphfed keys --tls --job", 1)
			keys++
		}
		if strings.Contains(l, "nats://127.0.0.1") {
			lines[i] = strings.ReplaceAll(lines[i], "nats://127.0.0.1", "tls://127.0.0.1")
			urls++
		}
	}
	out := strings.Join(lines, "\n")
	creds := len(credsFlag.FindAllString(out, -1))
	out = credsFlag.ReplaceAllString(out, "--creds $1/$2.nk --tls-ca $1/ca.crt --tls-cert $1/$2.crt --tls-key $1/$2.key")
	if keys != 1 || urls == 0 || creds == 0 || creds != strings.Count(script, "--creds") {
		return "", fmt.Errorf("walkthrough over TLS: %d `graphfed keys --job` lines (want 1), %d nats://127.0.0.1 URLs, "+
			"%d of %d --creds flags naming DIR/ID.nk", keys, urls, creds, strings.Count(script, "--creds"))
	}
	return out, nil
}

func TestWalkthroughOverTLS(t *testing.T) {
	got, err := walkthroughOverTLS("NATS=nats://127.0.0.1:$PORT\ngraphfed keys --job j --out k\n" +
		"graphfed agent --creds k/$bank.nk --keyring k/keyring.json\ngraphfed audit --creds k/auditor.nk")
	if err != nil {
		t.Fatal(err)
	}
	want := "NATS=tls://127.0.0.1:$PORT\ngraphfed keys --tls --job j --out k\n" +
		"graphfed agent --creds k/$bank.nk --tls-ca k/ca.crt --tls-cert k/$bank.crt --tls-key k/$bank.key --keyring k/keyring.json\n" +
		"graphfed audit --creds k/auditor.nk --tls-ca k/ca.crt --tls-cert k/auditor.crt --tls-key k/auditor.key"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{
		"NATS=nats://127.0.0.1:1\ngraphfed agent --creds k/a.nk",                   // no keys line
		"graphfed keys --job j\ngraphfed agent --creds k/a.nk",                     // no loopback URL
		"NATS=nats://127.0.0.1:1\ngraphfed keys --job j\ngraphfed agent --creds a", // --creds not DIR/ID.nk
	} {
		if _, err := walkthroughOverTLS(bad); err == nil {
			t.Errorf("%q rewritten", bad)
		}
	}
}

// runWalkthrough runs script as the walkthrough runs (see
// TestDeployWalkthrough), checks that the job finished, and returns its
// working directory.
func runWalkthrough(t *testing.T, script string) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	exe, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nGRAPHFED_MAIN=1 exec %q \"$@\"\n", exe)
	if err := os.WriteFile(filepath.Join(bin, "graphfed"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", "set -euo pipefail\n"+script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		fmt.Sprintf("PORT=%d", freeTCPPorts(t, 1)[0]))
	// The script's background processes share its process group: a
	// failing or stuck walkthrough leaves none of them behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	began := time.Now()
	out, err := cmd.CombinedOutput()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	logs := func() string {
		var b strings.Builder
		for _, f := range []string{"server.log", "aggregator.log"} {
			data, _ := os.ReadFile(filepath.Join(work, f))
			fmt.Fprintf(&b, "--- %s\n%s", f, data)
		}
		return b.String()
	}
	if err != nil {
		t.Fatalf("the walkthrough failed after %v: %v\n%s\n%s", time.Since(began).Round(time.Millisecond), err, out, logs())
	}
	agg := lastJSON(t, mustRead(t, filepath.Join(work, "aggregator.json")))
	m := agg["metrics"].(map[string]any)
	if agg["rounds"].(float64) != 3 || m["clients_reporting"].(float64) != 3 || m["rounds_closed_at_deadline"].(float64) != 0 {
		t.Fatalf("the walkthrough's job did not finish by quorum with three banks: %v\n%s", agg, logs())
	}
	banks, err := filepath.Glob(filepath.Join(work, "bank-*.json"))
	if err != nil || len(banks) != 3 {
		t.Fatalf("bank reports %v: %v", banks, err)
	}
	for _, b := range banks {
		from := lastJSON(t, mustRead(t, b))["metrics"].(map[string]any)["emb_received_from"].(map[string]any)
		if len(from) != 2 {
			t.Fatalf("%s took embeddings from %v, want both neighbours", filepath.Base(b), from)
		}
	}
	// The audit finds the ledger whole: every chain against the
	// aggregator's records and against the final heads of its report.
	for _, want := range []string{"the ledger is complete as far as the aggregator's records and the banks' anchors show",
		"expected heads given to the audit match"} {
		if !strings.Contains(string(out), want) || strings.Contains(string(out), "NOT INTACT") {
			t.Fatalf("the walkthrough's audit does not say %q:\n%s", want, out)
		}
	}
	t.Logf("the walkthrough ran in %v; model %s", time.Since(began).Round(time.Millisecond), m["model_sha256"])
	return work
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
