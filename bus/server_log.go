package bus

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Kinds of the embedded server's log events (ServerEventKey.Kind): what
// the server refused, and its other warnings and errors.
const (
	// ServerEventPermission: a client published, replied or subscribed
	// where its permissions do not let it (reasons publish, reply,
	// subscribe; subscription_removed when a reload revoked a
	// subscription).
	ServerEventPermission = "permission_violation"
	// ServerEventAuthorization: a login the server refused (reason
	// authentication: unknown user or NKey, bad signature or password;
	// account_lookup).
	ServerEventAuthorization = "authorization_failure"
	// ServerEventSlowConsumer: the server cut a connection that did not
	// read fast enough (reasons max_pending, write_deadline).
	ServerEventSlowConsumer = "slow_consumer"
	// ServerEventLimit: a configured limit was hit (reasons
	// max_connections, max_account_connections, max_subscriptions,
	// max_payload, max_control_line, max_subject_tokens,
	// jetstream_account, jetstream_server, jetstream_api_queue).
	ServerEventLimit = "limit"
	// ServerEventWarning and ServerEventError: the server's other warnings
	// and errors (no reason).
	ServerEventWarning = "warning"
	ServerEventError   = "error"
)

// ServerEventKey is a kind of server log event and its reason.
type ServerEventKey struct{ Kind, Reason string }

// serverEventKeys is the closed set of events the server's log is
// classified into. A function, not a variable: no package-level state.
func serverEventKeys() []ServerEventKey {
	var keys []ServerEventKey
	add := func(kind string, reasons ...string) {
		for _, r := range reasons {
			keys = append(keys, ServerEventKey{kind, r})
		}
	}
	add(ServerEventPermission, "publish", "reply", "subscribe", "subscription_removed")
	add(ServerEventAuthorization, "authentication", "account_lookup")
	add(ServerEventSlowConsumer, "max_pending", "write_deadline")
	add(ServerEventLimit, "max_connections", "max_account_connections", "max_subscriptions", "max_payload",
		"max_control_line", "max_subject_tokens", "jetstream_account", "jetstream_server", "jetstream_api_queue")
	add(ServerEventWarning, "")
	add(ServerEventError, "")
	return keys
}

// serverRefusalKinds are the kinds that are refusals (Server.Refusals).
func serverRefusalKinds() []string {
	return []string{ServerEventPermission, ServerEventAuthorization, ServerEventSlowConsumer, ServerEventLimit}
}

// LogLimit bounds what the server's log writes, so that a flood of
// refusals (a client publishing where it may not in a loop) costs a
// bounded number of lines: at most Burst lines per key (kind, reason,
// account, user, subject) per Interval, for at most Keys distinct keys per
// Interval (further keys share one key per kind and reason). Every event
// is counted all the same; at the end of each interval one line per key
// says how many were suppressed. The zero value takes the defaults.
type LogLimit struct {
	Burst    int           // default 5
	Interval time.Duration // default 1 minute
	Keys     int           // default 256
}

func (l LogLimit) withDefaults() LogLimit {
	if l.Burst <= 0 {
		l.Burst = 5
	}
	if l.Interval <= 0 {
		l.Interval = time.Minute
	}
	if l.Keys <= 0 {
		l.Keys = 256
	}
	return l
}

// serverLevel is the nats-server logger method a line came through.
type serverLevel int

const (
	levelTrace serverLevel = iota
	levelDebug
	levelNotice
	levelWarn
	levelError
	levelFatal
)

// serverLog is the embedded server's server.Logger: it classifies the
// server's lines into events, counts them, and writes them as structured
// zerolog lines within its LogLimit. Safe for concurrent use: the server
// logs from every connection's goroutine.
type serverLog struct {
	log     zerolog.Logger
	enabled bool // false: count only (no logger given)
	limit   LogLimit

	// Built once, then only read: the atomics are the mutable part.
	counts     map[ServerEventKey]*atomic.Int64
	suppressed map[string]*atomic.Int64 // by kind

	mu     sync.Mutex
	window map[lineKey]*lineState // this interval's keys

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// lineKey is what the rate limit tells apart. overflow is the shared key
// of a kind and reason once Keys distinct keys are in use.
type lineKey struct {
	kind, reason, account, user, subject, template string
	overflow                                       bool
}

type lineState struct{ logged, suppressed int64 }

// newServerLog returns the server's logger: writing to log within limit,
// or counting only when log is nil. A non-nil log runs a goroutine that
// writes the suppressed counts at the end of each interval, until close.
func newServerLog(log *zerolog.Logger, limit LogLimit) *serverLog {
	l := &serverLog{limit: limit.withDefaults(), counts: map[ServerEventKey]*atomic.Int64{},
		suppressed: map[string]*atomic.Int64{}, window: map[lineKey]*lineState{}}
	for _, k := range serverEventKeys() {
		l.counts[k] = new(atomic.Int64)
		if l.suppressed[k.Kind] == nil {
			l.suppressed[k.Kind] = new(atomic.Int64)
		}
	}
	if log == nil {
		return l
	}
	l.log = log.With().Str("component", "nats-server").Logger()
	l.enabled = true
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.flushEvery(l.limit.Interval)
	return l
}

// Noticef, Warnf, Fatalf, Errorf, Debugf and Tracef implement
// server.Logger.
func (l *serverLog) Noticef(format string, v ...any) { l.line(levelNotice, format, v) }
func (l *serverLog) Warnf(format string, v ...any)   { l.line(levelWarn, format, v) }
func (l *serverLog) Fatalf(format string, v ...any)  { l.line(levelFatal, format, v) }
func (l *serverLog) Errorf(format string, v ...any)  { l.line(levelError, format, v) }
func (l *serverLog) Debugf(format string, v ...any)  { l.line(levelDebug, format, v) }
func (l *serverLog) Tracef(format string, v ...any)  { l.line(levelTrace, format, v) }

// line classifies, counts and (within the limit) writes one server line.
// A Fatalf is written as an error: the embedded server does not own the
// process, and the caller learns of the failure from StartServer.
func (l *serverLog) line(level serverLevel, format string, v []any) {
	if !l.enabled && level <= levelDebug {
		return
	}
	p := parseServerLine(format, v)
	p.level = level
	p.classify()
	if p.kind == "" {
		// Informational: the start-up banner, listeners, JetStream's
		// state. Debug level, so an operator's info log shows only
		// graphfed's own lines and the events.
		if !l.enabled {
			return
		}
		e := l.log.Debug()
		if level == levelTrace {
			e = l.log.Trace()
		}
		l.fields(e, &p).Msg(p.text)
		return
	}
	l.counts[ServerEventKey{p.kind, p.reason}].Add(1)
	if !l.enabled {
		return
	}
	if !l.admit(&p) {
		l.suppressed[p.kind].Add(1)
		return
	}
	e := l.log.Warn()
	if p.kind == ServerEventError {
		e = l.log.Error()
	}
	e = l.fields(e.Str("event", p.kind), &p)
	if level == levelFatal {
		e = e.Bool("fatal", true)
	}
	e.Msg(p.text)
}

// fields adds the line's non-empty fields to e.
func (l *serverLog) fields(e *zerolog.Event, p *serverLine) *zerolog.Event {
	for _, f := range [...][2]string{{"reason", p.reason}, {"account", p.account}, {"user", p.user}, {"auth", p.auth},
		{"subject", p.subject}, {"queue", p.queue}, {"client", p.client}, {"conn", p.conn}, {"conn_id", p.connID}} {
		if f[1] != "" {
			e = e.Str(f[0], f[1])
		}
	}
	return e
}

// admit says whether p's line is written: the first Burst of its key in
// this interval are.
func (l *serverLog) admit(p *serverLine) bool {
	k := lineKey{kind: p.kind, reason: p.reason, account: p.account, user: p.user, subject: p.subject}
	if p.kind == ServerEventWarning || p.kind == ServerEventError {
		// Their lines carry no subject: the format tells one warning
		// from another, its values (ids, sizes, times) do not.
		k.template = p.template
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.window[k]
	if st == nil && len(l.window) >= l.limit.Keys {
		k = lineKey{kind: p.kind, reason: p.reason, overflow: true}
		st = l.window[k]
	}
	if st == nil {
		st = &lineState{}
		l.window[k] = st
	}
	if st.logged < int64(l.limit.Burst) {
		st.logged++
		return true
	}
	st.suppressed++
	return false
}

// flushEvery ends an interval every d until close.
func (l *serverLog) flushEvery(d time.Duration) {
	defer close(l.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.flush()
		case <-l.stop:
			return
		}
	}
}

// flush ends the interval: one line per key that had lines suppressed,
// then every key starts afresh.
func (l *serverLog) flush() {
	l.mu.Lock()
	type held struct {
		k lineKey
		n int64
	}
	var out []held
	for k, st := range l.window {
		if st.suppressed > 0 {
			out = append(out, held{k, st.suppressed})
		}
	}
	l.window = map[lineKey]*lineState{}
	l.mu.Unlock()
	// In a stable order, so that an operator reads the same summary the
	// same way.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].k, out[j].k
		return fmt.Sprint(a) < fmt.Sprint(b)
	})
	for _, h := range out {
		e := l.log.Warn().Str("event", h.k.kind)
		for _, f := range [...][2]string{{"reason", h.k.reason}, {"account", h.k.account}, {"user", h.k.user}, {"subject", h.k.subject},
			{"template", h.k.template}} {
			if f[1] != "" {
				e = e.Str(f[0], f[1])
			}
		}
		if h.k.overflow {
			e = e.Bool("overflow", true)
		}
		e.Int64("suppressed", h.n).Dur("interval", l.limit.Interval).Int("burst", l.limit.Burst).
			Msg("nats-server: similar lines suppressed (counted in the metrics)")
	}
}

// close stops the interval goroutine and writes what the last interval
// suppressed. Idempotent.
func (l *serverLog) close() {
	if l == nil || !l.enabled {
		return
	}
	l.closeOnce.Do(func() {
		close(l.stop)
		<-l.done
		l.flush()
	})
}

// events is a snapshot of the counts: every known event, zeros included.
func (l *serverLog) events() map[ServerEventKey]int64 {
	out := make(map[ServerEventKey]int64, len(l.counts))
	for k, n := range l.counts {
		out[k] = n.Load()
	}
	return out
}

// suppressedByKind is a snapshot of the lines held back, by kind.
func (l *serverLog) suppressedByKind() map[string]int64 {
	out := make(map[string]int64, len(l.suppressed))
	for k, n := range l.suppressed {
		out[k] = n.Load()
	}
	return out
}

// serverLine is one server log line, parsed.
type serverLine struct {
	level serverLevel
	// template is the server's format after the connection prefix: the
	// line's shape without its values.
	template string
	text     string // the server's message after the connection prefix

	// The connection the line is about, from nats-server's prefix
	// ("127.0.0.1:52110 - cid:7 - "v1.45.0:go:bank-1" - "BANK/nkey:U…"").
	conn    string // remote address; or SYSTEM, JETSTREAM, ACCOUNT for internal clients
	connID  string // cid:N (rid, gid, lid, wid, mid for other connection kinds)
	client  string // what the client declared: version:language:name (not authenticated)
	account string
	user    string
	auth    string // nkey, user, jwt, token

	kind, reason, subject, queue string
}

// parseServerLine splits the server's connection prefix from its message.
// The prefix is read from format itself where it stands there literally
// (the client-scoped Errorf, Noticef, ...), and only the message part is
// formatted with v: a client name is the client's to choose and may hold
// % verbs, which must not consume the message's own values. A line whose
// prefix came as an argument (the rate-limited variants) is formatted
// first and then split.
//
// A format without values is taken as it stands: nats-server formats the
// permission violations itself and logs the result as the format, and a
// subject may hold a % (NATS allows it) that must not turn into
// "%!s(MISSING)".
func parseServerLine(format string, v []any) serverLine {
	sprintf := func(f string) string {
		if len(v) == 0 {
			return f
		}
		return fmt.Sprintf(f, v...)
	}
	if p, rest, ok := splitPrefix(format, true); ok {
		p.template = rest
		p.text = sprintf(rest)
		return p
	}
	msg := sprintf(format)
	if p, rest, ok := splitPrefix(msg, false); ok {
		p.template, p.text = rest, rest
		return p
	}
	return serverLine{template: format, text: msg}
}

// splitPrefix parses nats-server's connection prefix (client.go's
// initClient and processConnect): "ADDR - cid:N", then optionally the
// quoted client description and the quoted "ACCOUNT/userlabel", each
// followed by " - ". literal says s is a format string, whose address has
// its % doubled.
func splitPrefix(s string, literal bool) (p serverLine, rest string, ok bool) {
	for _, internal := range []string{"SYSTEM", "JETSTREAM", "ACCOUNT"} {
		if r, found := strings.CutPrefix(s, internal+" - "); found {
			return serverLine{conn: internal}, r, true
		}
	}
	addr, r, found := strings.Cut(s, " - ")
	if !found || strings.ContainsAny(addr, " \"") {
		return p, "", false
	}
	id, r, found := strings.Cut(r, " - ")
	if !found || !isConnID(id) {
		return p, "", false
	}
	if literal {
		addr = strings.ReplaceAll(addr, "%%", "%")
	}
	p.conn, p.connID = addr, id
	var quoted []string
	for len(quoted) < 2 && strings.HasPrefix(r, `"`) {
		q, err := strconv.QuotedPrefix(r)
		if err != nil {
			break
		}
		after, found := strings.CutPrefix(r[len(q):], " - ")
		if !found {
			break
		}
		u, err := strconv.Unquote(q)
		if err != nil {
			break
		}
		quoted = append(quoted, u)
		r = after
	}
	switch {
	case len(quoted) == 2:
		p.client = quoted[0]
		p.setAccountUser(quoted[1])
	// One quoted part is the account and user when it reads as one: on a
	// server with logins every connection past CONNECT has it, and the
	// client's description comes first. Only on a server without logins
	// could a client's own description pose as an account and user.
	case len(quoted) == 1 && isAccountUser(quoted[0]):
		p.setAccountUser(quoted[0])
	case len(quoted) == 1:
		p.client = quoted[0]
	}
	return p, r, true
}

// isConnID says whether s is a connection id of the prefix: cid:7,
// rid:2, lid_ws:3, ...
func isConnID(s string) bool {
	kind, n, ok := strings.Cut(s, ":")
	if !ok || kind == "" || n == "" {
		return false
	}
	for _, c := range kind {
		if (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	_, err := strconv.ParseUint(n, 10, 64)
	return err == nil
}

// userLabels are the prefixes of nats-server's user labels
// (getAuthUserLabel), as they follow the account name.
func userLabels() []string { return []string{"/nkey:", "/user:", "/jwt:", "/token"} }

func isAccountUser(s string) bool {
	for _, l := range userLabels() {
		if i := strings.Index(s, l); i > 0 {
			return true
		}
	}
	return false
}

// setAccountUser reads "ACCOUNT/nkey:U…" (or user:, jwt:, token). The
// account may carry a JWT name tag ("ACC/tag/nkey:U…"): the label is the
// last of them.
func (p *serverLine) setAccountUser(s string) {
	best := -1
	for _, l := range userLabels() {
		if i := strings.LastIndex(s, l); i > best {
			best = i
		}
	}
	if best <= 0 {
		return
	}
	p.account = s[:best]
	label := s[best+1:]
	auth, user, _ := strings.Cut(label, ":")
	p.auth, p.user = auth, user
}

// classify sets p's kind, reason and the subject and user its message
// names, from nats-server v2.15's wording (client.go, auth.go,
// jetstream.go, stream.go). Lines it does not know: warnings and errors
// by level, notices and below nothing.
func (p *serverLine) classify() {
	t := p.text
	set := func(kind, reason string) { p.kind, p.reason = kind, reason }
	switch {
	// client.go pubPermissionViolation, replySubjectViolation
	case strings.HasPrefix(t, "Publish Violation - Subject "):
		set(ServerEventPermission, "publish")
		p.subject = quotedAfter(t, "Subject ")
	case strings.HasPrefix(t, "Publish Violation - Reply "):
		set(ServerEventPermission, "reply")
		p.subject = quotedAfter(t, "Reply ")
	// client.go maxTokensViolation (before the general subscription case)
	case strings.HasPrefix(t, "Subscription Violation Too Many Tokens"):
		set(ServerEventLimit, "max_subject_tokens")
		p.subject = quotedAfter(t, "Subject ")
	// client.go subPermissionViolation
	case strings.HasPrefix(t, "Subscription Violation - Subject "):
		set(ServerEventPermission, "subscribe")
		p.subject = quotedAfter(t, "Subject ")
		p.queue = quotedAfter(t, "Queue: ")
	// client.go: a reload took a subscription's permission away
	case strings.HasPrefix(t, "Removed sub ") && strings.Contains(t, " - not authorized"):
		set(ServerEventPermission, "subscription_removed")
		p.subject = quotedAfter(t, "Removed sub ")
		p.queue = quotedAfter(t, "using queue ")
		if p.user == "" {
			_, who, _ := strings.Cut(t, ") for ")
			p.setAuthUser(strings.TrimSuffix(who, " - not authorized"))
		}
	// client.go authViolation: "authentication error - Nkey "U…"" or bare
	case t == "authentication error" || strings.HasPrefix(t, "authentication error - "):
		set(ServerEventAuthorization, "authentication")
		if who, ok := strings.CutPrefix(t, "authentication error - "); ok {
			p.setAuthUser(who)
		}
	// auth.go: the user's account is not there
	case strings.HasPrefix(t, "authentication of user ") && strings.Contains(t, "unable to lookup account"):
		set(ServerEventAuthorization, "account_lookup")
		p.user = quotedAfter(t, "authentication of user ")
		p.account = quotedAfter(t, "lookup account ")
	// client.go queueOutbound and flushOutbound
	case strings.HasPrefix(t, "Slow Consumer Detected: MaxPending"):
		set(ServerEventSlowConsumer, "max_pending")
	case strings.HasPrefix(t, "Slow Consumer Detected: WriteDeadline") || strings.HasPrefix(t, "Slow Consumer State: WriteDeadline"):
		set(ServerEventSlowConsumer, "write_deadline")
	// errors.go: ErrTooManyAccountConnections, ErrTooManyConnections,
	// ErrTooManySubs, ErrMaxPayload, ErrMaxControlLine
	case strings.HasPrefix(t, "maximum account active connections exceeded"):
		set(ServerEventLimit, "max_account_connections")
	case strings.HasPrefix(t, "maximum connections exceeded"):
		set(ServerEventLimit, "max_connections")
	case strings.HasPrefix(t, "maximum subscriptions exceeded"):
		set(ServerEventLimit, "max_subscriptions")
	case strings.HasPrefix(t, "maximum payload exceeded"):
		set(ServerEventLimit, "max_payload")
	case strings.HasPrefix(t, "maximum control line exceeded"):
		set(ServerEventLimit, "max_control_line")
	// stream.go, jetstream_cluster.go: an account's JetStream limits
	case strings.HasPrefix(t, "JetStream account limits exceeded for "):
		set(ServerEventLimit, "jetstream_account")
		if p.account == "" {
			if a, _, ok := strings.Cut(strings.TrimPrefix(t, "JetStream account limits exceeded for '"), "':"); ok {
				p.account = a
			}
		}
	case strings.HasPrefix(t, "JetStream ") && strings.Contains(t, " resource limits exceeded for account: "):
		set(ServerEventLimit, "jetstream_account")
		if p.account == "" {
			p.account = quotedAfter(t, "for account: ")
		}
	// jetstream.go resourcesExceededError: the server's own store
	case strings.HasPrefix(t, "JetStream ") && strings.HasSuffix(t, " resource limits exceeded for server"):
		set(ServerEventLimit, "jetstream_server")
	// jetstream_api.go: the JetStream API queue dropped requests
	case strings.Contains(t, " limit reached, dropping ") && strings.HasSuffix(t, " requests"):
		set(ServerEventLimit, "jetstream_api_queue")
	case p.level >= levelError:
		set(ServerEventError, "")
	case p.level == levelWarn:
		set(ServerEventWarning, "")
	}
}

// setAuthUser reads nats-server's getAuthUser: Nkey "U…", User "alice",
// JWT User "U…", Token "[REDACTED]".
func (p *serverLine) setAuthUser(s string) {
	for _, f := range [...][2]string{{"JWT User ", "jwt"}, {"Nkey ", "nkey"}, {"User ", "user"}, {"Token ", "token"}} {
		if q, ok := strings.CutPrefix(s, f[0]); ok {
			p.auth = f[1]
			if f[1] != "token" {
				if u, err := strconv.Unquote(q); err == nil && u != "N/A" {
					p.user = u
				}
			}
			return
		}
	}
}

// quotedAfter is the Go-quoted string that follows marker in s ("" if
// none).
func quotedAfter(s, marker string) string {
	_, r, ok := strings.Cut(s, marker)
	if !ok {
		return ""
	}
	q, err := strconv.QuotedPrefix(r)
	if err != nil {
		return ""
	}
	u, err := strconv.Unquote(q)
	if err != nil {
		return ""
	}
	return u
}
