package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// `graphfed server` logs a refused publish and a refused login as
// structured lines and counts them at --metrics-addr; its last line sums
// what it refused.
func TestServerCmdLogsRefusals(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	dir := t.TempDir()
	conf := filepath.Join(dir, "server.conf")
	// A login of its own, not graphfed keys's layout: what is under test
	// is the server's log, whatever the permissions say.
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`authorization { users = [
  { nkey: %q, permissions: { publish: { allow: ["bank.>"] }, subscribe: { allow: ["bank.>", "_INBOX.>"] } } }
] }
`, pub)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := graphfedCmd(t, "server", "--config", conf, "--port", "-1", "--store", filepath.Join(dir, "js"), "--metrics-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var (
		mu   sync.Mutex
		logs strings.Builder
	)
	found := make(chan struct{})
	go func() {
		defer close(found)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	logged := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	// find waits for re in the log and returns its first group.
	find := func(re *regexp.Regexp) string {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			if m := re.FindStringSubmatch(logged()); m != nil {
				return m[len(m)-1]
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s in the server's log:\n%s", re, logged())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	url := find(regexp.MustCompile(`server ready .*url=(nats://\S+)`))
	addr := find(servingAddr)

	nc, err := nats.Connect(url, nats.Nkey(pub, kp.Sign), nats.Name("bank-x"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Publish("gf.job.ledger.bank-y", []byte("forged"))
	nc.Flush()
	stranger, _ := nkeys.CreateUser()
	spub, _ := stranger.PublicKey()
	if _, err := nats.Connect(url, nats.Nkey(spub, stranger.Sign), nats.NoReconnect()); err == nil {
		t.Fatal("an unknown NKey logged in")
	}

	find(regexp.MustCompile(`WRN Publish Violation - Subject "gf.job.ledger.bank-y".*event=permission_violation`))
	line := find(regexp.MustCompile(`(WRN authentication error .*)`))
	for _, want := range []string{"event=authorization_failure", "reason=authentication", "user=" + spub, "auth=nkey", "component=nats-server"} {
		if !strings.Contains(line, want) {
			t.Errorf("login refusal %q: no %s", line, want)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		fams := scrape(t, addr)
		pubs := sumOf(fams, "graphfed_server_events_total", "kind", "permission_violation", "reason", "publish")
		logins := sumOf(fams, "graphfed_server_events_total", "kind", "authorization_failure", "reason", "authentication")
		if pubs == 1 && logins == 1 {
			if _, ok := fams["graphfed_server_log_suppressed_total"]; !ok {
				t.Error("no graphfed_server_log_suppressed_total")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics count %v publish refusals and %v login refusals, want 1 and 1", pubs, logins)
		}
		time.Sleep(10 * time.Millisecond)
	}
	nc.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-found
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v\n%s", err, logged())
	}
	stop := regexp.MustCompile(`server stopping .*refusals=(\{[^}]*\})`).FindStringSubmatch(logged())
	if stop == nil || !strings.Contains(stop[1], `"permission_violation":1`) || !strings.Contains(stop[1], `"authorization_failure":1`) {
		t.Errorf("the stopping line does not sum the refusals: %v\n%s", stop, logged())
	}
}
