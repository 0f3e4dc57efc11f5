package bus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"
)

// jsonLog is a log sink the server writes to from many goroutines.
type jsonLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *jsonLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines are the JSON lines written so far.
func (b *jsonLog) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	data := append([]byte(nil), b.buf.Bytes()...)
	b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// matching are the lines whose fields include want (a value "*" only
// asks for the field to be there).
func matching(lines []map[string]any, want map[string]string) []map[string]any {
	var out []map[string]any
next:
	for _, l := range lines {
		for k, v := range want {
			got, ok := l[k]
			if !ok || (v != "*" && fmt.Sprint(got) != v) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// eventually polls cond until it holds, failing after a deadline: the
// server logs a refusal on its own goroutine, after the client's call
// returned.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The server's lines as nats-server v2.15 calls its logger (client.go's
// prefix, then the message; the formats and values as the server passes
// them) parse into the event, and the connection's account and user.
func TestServerLogClassify(t *testing.T) {
	const (
		bank   = `127.0.0.1:52110 - cid:7 - "v1.55.0:go:bank-1" - "BANK/nkey:UBANK"`
		noName = `127.0.0.1:52110 - cid:8 - "$G/user:raw"`
		anon   = `127.0.0.1:52111 - cid:9`
	)
	for _, tc := range []struct {
		name   string
		level  serverLevel
		format string
		args   []any
		want   serverLine
	}{
		{"publish", levelError, bank + ` - Publish Violation - Subject "gf.j.ledger.bank-2"`, nil,
			serverLine{kind: ServerEventPermission, reason: "publish", subject: "gf.j.ledger.bank-2", account: "BANK", user: "UBANK", auth: "nkey",
				client: "v1.55.0:go:bank-1", conn: "127.0.0.1:52110", connID: "cid:7"}},
		{"subject with a percent", levelError, bank + ` - Publish Violation - Subject "a.%s.b"`, nil,
			serverLine{kind: ServerEventPermission, reason: "publish", subject: "a.%s.b", account: "BANK", user: "UBANK", auth: "nkey"}},
		{"reply", levelError, bank + ` - Publish Violation - Reply "_R_.x"`, nil,
			serverLine{kind: ServerEventPermission, reason: "reply", subject: "_R_.x", account: "BANK", user: "UBANK"}},
		{"subscribe", levelError, bank + ` - Subscription Violation - Subject "gf.>", SID 3`, nil,
			serverLine{kind: ServerEventPermission, reason: "subscribe", subject: "gf.>", account: "BANK", user: "UBANK"}},
		{"queue subscribe", levelError, noName + ` - Subscription Violation - Subject "gf.>", Queue: "q1", SID 3`, nil,
			serverLine{kind: ServerEventPermission, reason: "subscribe", subject: "gf.>", queue: "q1", account: "$G", user: "raw", auth: "user"}},
		{"too many tokens", levelError, bank + ` - Subscription Violation Too Many Tokens - Subject "a.b.c", SID 3`, nil,
			serverLine{kind: ServerEventLimit, reason: "max_subject_tokens", subject: "a.b.c", user: "UBANK"}},
		{"revoked on reload", levelNotice, `Removed sub %q (sid %q) for %s - not authorized`, []any{"gf.j.emb.>", "4", `Nkey "UBANK"`},
			serverLine{kind: ServerEventPermission, reason: "subscription_removed", subject: "gf.j.emb.>", user: "UBANK", auth: "nkey"}},
		{"bad nkey", levelError, anon + ` - %v - %s`, []any{"authentication error", `Nkey "UFORGED"`},
			serverLine{kind: ServerEventAuthorization, reason: "authentication", user: "UFORGED", auth: "nkey", connID: "cid:9"}},
		{"bad password", levelError, anon + ` - %v - %s`, []any{"authentication error", `User "raw"`},
			serverLine{kind: ServerEventAuthorization, reason: "authentication", user: "raw", auth: "user"}},
		{"no credentials", levelError, anon + ` - authentication error`, nil,
			serverLine{kind: ServerEventAuthorization, reason: "authentication"}},
		{"token", levelError, anon + ` - %v - %s`, []any{"authentication error", `Token "[REDACTED]"`},
			serverLine{kind: ServerEventAuthorization, reason: "authentication", auth: "token"}},
		{"account lookup", levelError, `authentication of user %q failed, unable to lookup account %q: %v`, []any{"UBANK", "GONE", "account missing"},
			serverLine{kind: ServerEventAuthorization, reason: "account_lookup", user: "UBANK", account: "GONE"}},
		{"slow consumer pending", levelNotice, bank + ` - Slow Consumer Detected: MaxPending of %d Exceeded`, []any{16384},
			serverLine{kind: ServerEventSlowConsumer, reason: "max_pending", account: "BANK", user: "UBANK"}},
		{"slow consumer deadline", levelNotice, bank + ` - Slow Consumer %s: WriteDeadline of %v exceeded with %d chunks of %d total bytes.`, []any{"Detected", time.Second, 3, 9000},
			serverLine{kind: ServerEventSlowConsumer, reason: "write_deadline", user: "UBANK"}},
		{"slow consumer recovered", levelNotice, bank + ` - Slow Consumer Recovered: Flush took %.3fs with %d chunks of %d total bytes.`, []any{0.5, 1, 10},
			serverLine{}},
		{"max connections", levelError, anon + ` - maximum connections exceeded`, nil, serverLine{kind: ServerEventLimit, reason: "max_connections"}},
		{"max account connections", levelError, anon + ` - maximum account active connections exceeded`, nil,
			serverLine{kind: ServerEventLimit, reason: "max_account_connections"}},
		{"max subscriptions", levelError, bank + ` - maximum subscriptions exceeded`, nil,
			serverLine{kind: ServerEventLimit, reason: "max_subscriptions", account: "BANK", user: "UBANK"}},
		{"max payload", levelError, noName + ` - %s: %d vs %d`, []any{"maximum payload exceeded", 5000, 1024},
			serverLine{kind: ServerEventLimit, reason: "max_payload", account: "$G", user: "raw"}},
		{"jetstream account store", levelWarn, "%s", []any{`JetStream file resource limits exceeded for account: "BANK"`},
			serverLine{kind: ServerEventLimit, reason: "jetstream_account", account: "BANK"}},
		{"jetstream account api", levelWarn, "%s", []any{`JetStream account limits exceeded for 'BANK': insufficient storage resources available`},
			serverLine{kind: ServerEventLimit, reason: "jetstream_account", account: "BANK"}},
		{"jetstream server", levelError, `JetStream %s resource limits exceeded for server`, []any{"file"},
			serverLine{kind: ServerEventLimit, reason: "jetstream_server"}},
		{"jetstream api queue", levelWarn, "%s", []any{"JetStream API queue limit reached, dropping 42 requests"},
			serverLine{kind: ServerEventLimit, reason: "jetstream_api_queue"}},
		// The rate-limited client variants pass the prefix as a value.
		{"prefix as a value", levelError, "%s - %s%s", []any{"127.0.0.1:1 - cid:2 - \"ACC/user:u\"", "maximum subscriptions exceeded", " - user:u"},
			serverLine{kind: ServerEventLimit, reason: "max_subscriptions", account: "ACC", user: "u"}},
		// A client name is the client's: quotes and % verbs in it do not
		// forge fields nor consume the message's values.
		{"hostile client name", levelError, `127.0.0.1:3 - cid:4 - "x\" - \"EVIL/nkey:UEVIL %s" - "BANK/nkey:UBANK" - %s: %d vs %d`, []any{"maximum payload exceeded", 5000, 1024},
			serverLine{kind: ServerEventLimit, reason: "max_payload", account: "BANK", user: "UBANK", client: `x" - "EVIL/nkey:UEVIL %s`}},
		{"internal client", levelWarn, `JETSTREAM - stream %q lost quorum`, []any{"S"},
			serverLine{kind: ServerEventWarning, conn: "JETSTREAM"}},
		{"other error", levelError, `Error listening on port: %s, %q`, []any{"0.0.0.0:4222", "in use"}, serverLine{kind: ServerEventError}},
		{"fatal", levelFatal, `Can't start JetStream: %v`, []any{"no space"}, serverLine{kind: ServerEventError}},
		{"notice", levelNotice, `Listening for client connections on %s`, []any{"127.0.0.1:4222"}, serverLine{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parseServerLine(tc.format, tc.args)
			p.level = tc.level
			p.classify()
			w := tc.want
			for _, f := range [...][3]string{{"kind", w.kind, p.kind}, {"reason", w.reason, p.reason}, {"subject", w.subject, p.subject},
				{"queue", w.queue, p.queue}} {
				if f[1] != f[2] {
					t.Errorf("%s = %q, want %q (line %+v)", f[0], f[2], f[1], p)
				}
			}
			// Where the case names them.
			for _, f := range [...][3]string{{"account", w.account, p.account}, {"user", w.user, p.user}, {"auth", w.auth, p.auth}, {"client", w.client, p.client}, {"conn", w.conn, p.conn}, {"conn_id", w.connID, p.connID}} {
				if f[1] != "" && f[1] != f[2] {
					t.Errorf("%s = %q, want %q (line %+v)", f[0], f[2], f[1], p)
				}
			}
			if strings.Contains(p.text, "%!") {
				t.Errorf("text %q: values and verbs out of step", p.text)
			}
		})
	}
}

// The limit writes the first Burst lines of a key per interval and counts
// the rest, which the interval's end reports in one line; past Keys
// distinct keys the rest of a kind share one. Every event is counted.
func TestServerLogLimit(t *testing.T) {
	var buf jsonLog
	zl := zerolog.New(&buf)
	l := newServerLog(&zl, LogLimit{Burst: 2, Interval: time.Hour, Keys: 3})
	violation := func(user, subject string) {
		l.Errorf(`127.0.0.1:1 - cid:1 - "BANK/nkey:` + user + `" - Publish Violation - Subject "` + subject + `"`)
	}
	for range 10 {
		violation("U1", "a")
	}
	violation("U2", "a") // another user: its own key
	for i := range 20 {  // distinct subjects: the third key, then the overflow
		violation("U1", fmt.Sprintf("s%d", i))
	}
	l.Errorf(`%s - authentication error`, "127.0.0.1:2 - cid:2") // another kind: its own overflow
	l.Errorf(`%s - authentication error`, "127.0.0.1:3 - cid:3")
	l.Errorf(`%s - authentication error`, "127.0.0.1:4 - cid:4")
	l.close()
	l.close() // idempotent

	if got := l.events()[ServerEventKey{ServerEventPermission, "publish"}]; got != 31 {
		t.Errorf("counted %d publish violations, want 31", got)
	}
	if got := l.events()[ServerEventKey{ServerEventAuthorization, "authentication"}]; got != 3 {
		t.Errorf("counted %d failed logins, want 3", got)
	}
	lines := buf.lines(t)
	events := matching(lines, map[string]string{"event": ServerEventPermission, "level": "warn"})
	var written, summarized int
	summaries := map[string]float64{}
	for _, e := range events {
		if n, ok := e["suppressed"]; ok {
			summarized += int(n.(float64))
			summaries[fmt.Sprint(e["user"], "/", e["subject"], "/", e["overflow"])] = n.(float64)
			continue
		}
		written++
	}
	// U1/a: 2 of 10; U2/a: 1; U1/s0: 2 of 1 (only one); then the
	// overflow: 2 of the remaining 19.
	if written != 2+1+1+2 {
		t.Errorf("%d publish lines written, want 6:\n%v", written, events)
	}
	if summarized != 31-written {
		t.Errorf("summaries count %d suppressed, want %d", summarized, 31-written)
	}
	want := map[string]float64{"U1/a/<nil>": 8, "<nil>/<nil>/true": 17}
	for k, n := range want {
		if summaries[k] != n {
			t.Errorf("summary %s = %v, want %v (all: %v)", k, summaries[k], n, summaries)
		}
	}
	if got := l.suppressedByKind()[ServerEventPermission]; got != int64(31-written) {
		t.Errorf("suppressed %d, want %d", got, 31-written)
	}
	// Three failed logins of no user share one key (the window was full):
	// two written.
	if got := len(matching(lines, map[string]string{"event": ServerEventAuthorization})); got != 3 {
		t.Errorf("%d authorization lines (2 written, 1 summary), want 3", got)
	}
}

// logEnv is a real embedded server whose configuration restricts its
// users, logging to a buffer.
type logEnv struct {
	srv   *Server
	buf   *jsonLog
	url   string
	bank  nkeys.KeyPair // the BANK account's NKey user
	pub   string
	other string // an NKey the server does not know
}

// serverLogConfig: account BANK with an NKey user and a password user
// ("raw", for the raw-protocol cases), each allowed bank.> only (and the
// JetStream API and inboxes for the NKey user), a JetStream store limit
// of 4 KiB, 1 KiB payloads and 16 KiB pending per connection; extra is
// added at the top level.
func serverLogConfig(pub, extra string) string {
	return fmt.Sprintf(`max_payload: 1024
max_pending: 16384
%s
accounts {
  BANK {
    jetstream { max_file: 4096, max_mem: 4096 }
    users = [
      { nkey: %q, permissions: { publish: { allow: ["bank.>", "$JS.API.>"] }, subscribe: { allow: ["bank.>", "_INBOX.>"] } } }
      { user: "raw", password: "pw", permissions: { publish: { allow: ["bank.>"] }, subscribe: { allow: ["bank.>"] } } }
    ]
  }
}
`, extra, pub)
}

func startLogEnv(t *testing.T, extra string, limit LogLimit) *logEnv {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	ok, _ := nkeys.CreateUser()
	other, _ := ok.PublicKey()
	dir := t.TempDir()
	conf := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(conf, []byte(serverLogConfig(pub, extra)), 0o600); err != nil {
		t.Fatal(err)
	}
	buf := &jsonLog{}
	zl := zerolog.New(buf).Level(zerolog.DebugLevel)
	srv, err := StartServer(ServerOptions{ConfigFile: conf, StoreDir: filepath.Join(dir, "js"), Logger: &zl, LogLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return &logEnv{srv: srv, buf: buf, url: srv.ClientURL(), bank: kp, pub: pub, other: other}
}

// connectBank connects the NKey user.
func (e *logEnv) connectBank(t *testing.T) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(e.url, nats.Name("log-test"), nats.Nkey(e.pub, e.bank.Sign), nats.NoReconnect(),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// raw is a connection speaking the NATS protocol by hand, as user raw:
// it can send what nats.go refuses to (an oversized payload) and fail
// to read (a slow consumer).
func (e *logEnv) raw(t *testing.T, then string) net.Conn {
	t.Helper()
	u, err := url.Parse(e.url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("raw: want INFO, got %q, %v", line, err)
	}
	fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"pedantic\":false,\"user\":\"raw\",\"pass\":\"pw\",\"protocol\":1}\r\n%sPING\r\n", then)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("raw: waiting for PONG: %v", err)
		}
		if strings.HasPrefix(line, "PONG") {
			break
		}
		if strings.HasPrefix(line, "-ERR") {
			t.Fatalf("raw: %s", line)
		}
	}
	c.SetDeadline(time.Time{})
	return c
}

// The server logs, as one structured line each and counted, a user's
// publish and subscribe where its permissions do not reach, logins with a
// bad NKey signature, an unknown NKey and a wrong password, an oversized
// payload, a connection and a subscription past their limits, a slow
// consumer, and an account past its JetStream store.
func TestServerLogEvents(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra string
		act   func(t *testing.T, e *logEnv)
		kind  string
		// reason "" takes any; in fields, $BANK and $OTHER stand for the
		// NKeys.
		reason string
		fields map[string]string
	}{
		{name: "publish violation", kind: ServerEventPermission, reason: "publish",
			act: func(t *testing.T, e *logEnv) {
				nc := e.connectBank(t)
				nc.Publish("secret.ledger", []byte("x"))
				nc.Flush()
			},
			fields: map[string]string{"subject": "secret.ledger", "account": "BANK", "user": "$BANK", "auth": "nkey", "client": "*", "conn_id": "*"}},
		{name: "subscribe violation", kind: ServerEventPermission, reason: "subscribe",
			act: func(t *testing.T, e *logEnv) {
				nc := e.connectBank(t)
				nc.Subscribe("secret.>", func(*nats.Msg) {})
				nc.Flush()
			},
			fields: map[string]string{"subject": "secret.>", "account": "BANK", "user": "$BANK"}},
		{name: "queue subscribe violation", kind: ServerEventPermission, reason: "subscribe",
			act: func(t *testing.T, e *logEnv) {
				nc := e.connectBank(t)
				nc.QueueSubscribe("secret.q", "workers", func(*nats.Msg) {})
				nc.Flush()
			},
			fields: map[string]string{"subject": "secret.q", "queue": "workers", "account": "BANK"}},
		{name: "bad nkey signature", kind: ServerEventAuthorization, reason: "authentication",
			act: func(t *testing.T, e *logEnv) {
				forger, _ := nkeys.CreateUser()
				if _, err := nats.Connect(e.url, nats.Nkey(e.pub, forger.Sign), nats.NoReconnect()); err == nil {
					t.Fatal("a forged signature logged in")
				}
			},
			fields: map[string]string{"user": "$BANK", "auth": "nkey"}},
		{name: "unknown nkey", kind: ServerEventAuthorization, reason: "authentication",
			act: func(t *testing.T, e *logEnv) {
				stranger, _ := nkeys.CreateUser()
				pub, _ := stranger.PublicKey()
				e.other = pub
				if _, err := nats.Connect(e.url, nats.Nkey(pub, stranger.Sign), nats.NoReconnect()); err == nil {
					t.Fatal("an unknown NKey logged in")
				}
			},
			fields: map[string]string{"user": "$OTHER", "auth": "nkey"}},
		{name: "wrong password", kind: ServerEventAuthorization, reason: "authentication",
			act: func(t *testing.T, e *logEnv) {
				if _, err := nats.Connect(e.url, nats.UserInfo("raw", "guess"), nats.NoReconnect()); err == nil {
					t.Fatal("a wrong password logged in")
				}
			},
			fields: map[string]string{"user": "raw", "auth": "user"}},
		{name: "max payload", kind: ServerEventLimit, reason: "max_payload",
			act: func(t *testing.T, e *logEnv) {
				c := e.raw(t, "")
				fmt.Fprintf(c, "PUB bank.big 5000\r\n%s\r\n", strings.Repeat("x", 5000))
			},
			fields: map[string]string{"account": "BANK", "user": "raw", "auth": "user"}},
		{name: "max connections", extra: "max_connections: 1", kind: ServerEventLimit, reason: "max_connections",
			act: func(t *testing.T, e *logEnv) {
				e.connectBank(t)
				if _, err := nats.Connect(e.url, nats.Nkey(e.pub, e.bank.Sign), nats.NoReconnect()); err == nil {
					t.Fatal("a second connection was let in past max_connections 1")
				}
			},
			fields: map[string]string{"conn_id": "*"}},
		{name: "max subscriptions", extra: "max_subscriptions: 2", kind: ServerEventLimit, reason: "max_subscriptions",
			act: func(t *testing.T, e *logEnv) {
				nc := e.connectBank(t)
				for _, s := range []string{"bank.a", "bank.b", "bank.c"} {
					nc.Subscribe(s, func(*nats.Msg) {})
				}
				nc.Flush()
			},
			fields: map[string]string{"account": "BANK", "user": "$BANK"}},
		{name: "slow consumer", kind: ServerEventSlowConsumer,
			act: func(t *testing.T, e *logEnv) {
				e.raw(t, "SUB bank.slow 1\r\n") // subscribes, then never reads
				nc := e.connectBank(t)
				msg := bytes.Repeat([]byte{1}, 1000)
				eventually(t, "slow consumer cut", func() bool {
					for range 100 {
						nc.Publish("bank.slow", msg)
					}
					nc.Flush()
					return e.srv.Refusals()[ServerEventSlowConsumer] > 0
				})
			},
			fields: map[string]string{"account": "BANK", "user": "raw"}},
		{name: "jetstream account limit", kind: ServerEventLimit, reason: "jetstream_account",
			act: func(t *testing.T, e *logEnv) {
				js, err := e.connectBank(t).JetStream()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := js.AddStream(&nats.StreamConfig{Name: "S", Subjects: []string{"bank.js.>"}, Storage: nats.FileStorage}); err != nil {
					t.Fatalf("add stream: %v", err)
				}
				msg := bytes.Repeat([]byte{1}, 900)
				for i := 0; ; i++ {
					if _, err := js.Publish("bank.js.x", msg); err != nil {
						break
					}
					if i > 100 {
						t.Fatal("100 KB stored under a 4 KiB account limit")
					}
				}
			},
			fields: map[string]string{"account": "BANK"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startLogEnv(t, tc.extra, LogLimit{})
			tc.act(t, e)
			want := map[string]string{"event": tc.kind, "level": "warn", "component": "nats-server"}
			if tc.reason != "" {
				want["reason"] = tc.reason
			}
			for k, v := range tc.fields {
				want[k] = strings.NewReplacer("$BANK", e.pub, "$OTHER", e.other).Replace(v)
			}
			counted := func() int64 {
				var n int64
				for k, c := range e.srv.Events() {
					if k.Kind == tc.kind && (tc.reason == "" || k.Reason == tc.reason) {
						n += c
					}
				}
				return n
			}
			eventually(t, "the line and its count", func() bool {
				return len(matching(e.buf.lines(t), want)) > 0 && counted() > 0
			})
			if e.srv.Refusals()[tc.kind] < 1 {
				t.Errorf("Refusals()[%s] = %d", tc.kind, e.srv.Refusals()[tc.kind])
			}
			// Nothing else is taken for this refusal: no other refusal kind
			// was counted.
			for kind, n := range e.srv.Refusals() {
				if kind != tc.kind && n != 0 {
					t.Errorf("%s counted %d times as well", kind, n)
				}
			}
		})
	}
}

// A flood of violations is counted in full and written within the limit:
// the first Burst per subject, then one line with the rest's count when
// the server shuts down.
func TestServerLogFlood(t *testing.T) {
	e := startLogEnv(t, "", LogLimit{Burst: 3, Interval: time.Hour})
	nc := e.connectBank(t)
	for range 200 {
		nc.Publish("secret.a", nil)
	}
	for range 5 {
		nc.Publish("secret.b", nil)
	}
	nc.Flush()
	key := ServerEventKey{ServerEventPermission, "publish"}
	eventually(t, "205 violations counted", func() bool { return e.srv.Events()[key] == 205 })
	nc.Close()
	e.srv.Shutdown()
	lines := e.buf.lines(t)
	for subject, suppressed := range map[string]string{"secret.a": "197", "secret.b": "2"} {
		base := map[string]string{"event": ServerEventPermission, "subject": subject, "user": e.pub}
		all := matching(lines, base)
		base["suppressed"] = suppressed
		if s := matching(lines, base); len(all) != 4 || len(s) != 1 {
			t.Errorf("%s: %d lines, %d summaries suppressing %s; want 3 lines and one summary: %v", subject, len(all), len(s), suppressed, all)
		}
	}
	if got := e.srv.LogSuppressed()[ServerEventPermission]; got != 199 {
		t.Errorf("LogSuppressed = %d, want 199", got)
	}
	if got := e.srv.Events()[key]; got != 205 {
		t.Errorf("counted %d after shutdown, want 205", got)
	}
}

// Without a logger the server writes nothing but still counts.
func TestServerLogSilent(t *testing.T) {
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	dir := t.TempDir()
	conf := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(conf, []byte(serverLogConfig(pub, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := StartServer(ServerOptions{ConfigFile: conf, StoreDir: filepath.Join(dir, "js")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL(), nats.Nkey(pub, kp.Sign), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Publish("secret.x", nil)
	nc.Flush()
	eventually(t, "the violation counted", func() bool { return srv.Refusals()[ServerEventPermission] == 1 })
	if n := srv.LogSuppressed()[ServerEventPermission]; n != 0 {
		t.Errorf("suppressed %d lines with no log at all", n)
	}
}
