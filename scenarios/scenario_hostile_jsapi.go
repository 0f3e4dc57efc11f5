package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"graphfed/bus"
	"graphfed/deploy"
)

// hostileJSAPIScenario: after a durable secure job on the configuration
// `graphfed keys` writes (one NATS account per party), bank client-0 and
// the auditor, each with its own key, try what the outside test did on the
// single-account layout: every JetStream API verb on every stream of the
// job, through every API prefix they hold (their own account's $JS.API,
// the ledger's, the blob buckets'), directly and bounced by reply subject
// off every subject they may publish on; the auditor also writes on every
// party's ledger subject. Meanwhile the honest parties publish a probe on
// every subject of the job. It passes when no stream of another party
// changed (messages, bytes, consumers, configuration), no read of another
// party's stream succeeded beyond what the layout grants (a bank its own
// ledger stream and the aggregator's blob bucket; the auditor every
// ledger stream), and no probe reached the attacker unless it was
// addressed to it.
func hostileJSAPIScenario() Scenario {
	const name = "hostile-js-api"
	return Scenario{
		Name: name,
		Doc:  "a bank and the auditor bounce every JetStream API verb by reply subject and probe every subject: nothing of another party is changed or read",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			lj, err := runLedgerJobWith(ctx, "hostile-js-api", o, true)
			if err != nil {
				return fail(name, InvNoProgress, "job: %v", err), nil
			}
			defer lj.job.Close()
			return hostileJSAPI(ctx, name, lj)
		},
	}
}

// InvCrossAccount: a party changed or read another party's JetStream
// state, or received a message not addressed to it.
const InvCrossAccount = "cross-account"

// InvNotCounted: the server refused something without counting it.
const InvNotCounted = "not-counted"

// jsTarget is one stream of the job, the account that holds it, and the
// party whose credentials can see it there.
type jsTarget struct {
	stream, owner string // owner: the party id (bus.LedgerAdminID for ledger streams)
}

func jobTargets(job string, parties []string) []jsTarget {
	var out []jsTarget
	for _, p := range parties {
		out = append(out, jsTarget{bus.LedgerPartyStreamName(job, p), bus.LedgerAdminID})
		out = append(out, jsTarget{"OBJ_" + bus.BlobBucketName(job, p), p})
	}
	return append(out,
		jsTarget{bus.UpdateStreamName(job), bus.AggregatorID},
		jsTarget{"KV_" + bus.CheckpointBucketName(job), bus.AggregatorID},
		jsTarget{"OBJ_" + bus.ModelBucketName(job), bus.AggregatorID})
}

// apiAttempts are the verbs tried on stream st, as (subject suffix, body).
func apiAttempts(job, st, inbox string) [][2]string {
	spy := func(name string) string {
		b, _ := json.Marshal(map[string]any{"name": name, "subjects": []string{"gf." + job + ".>"}})
		return string(b)
	}
	push := func(durable string) string {
		cfg := map[string]any{"deliver_subject": inbox, "deliver_policy": "all", "ack_policy": "none"}
		if durable != "" {
			cfg["durable_name"] = durable
		}
		b, _ := json.Marshal(map[string]any{"stream_name": st, "config": cfg})
		return string(b)
	}
	return [][2]string{
		{"STREAM.INFO." + st, ""},
		{"STREAM.MSG.GET." + st, `{"seq":1}`},
		{"DIRECT.GET." + st, `{"seq":1}`},
		{"STREAM.CREATE." + st, spy(st)},
		{"STREAM.UPDATE." + st, spy(st)},
		{"STREAM.PURGE." + st, ""},
		{"STREAM.DELETE." + st, ""},
		{"STREAM.MSG.DELETE." + st, `{"seq":1}`},
		{"CONSUMER.CREATE." + st, push("")},
		{"CONSUMER.CREATE." + st + ".spy", push("")},
		{"CONSUMER.DURABLE.CREATE." + st + ".spy", push("spy")},
		{"STREAM.CREATE.SPY", spy("SPY")},
	}
}

// granted says whether prefix+verb on target may succeed for attacker: the
// reads the layout grants.
func granted(attacker, prefix string, t jsTarget, verb string, job string) bool {
	read := strings.HasPrefix(verb, "STREAM.INFO.") || strings.HasPrefix(verb, "STREAM.MSG.GET.") || strings.HasPrefix(verb, "DIRECT.GET.")
	switch {
	case prefix == bus.LedgerAPIPrefix && t.owner == bus.LedgerAdminID:
		return read && (attacker == bus.AuditorID || t.stream == bus.LedgerPartyStreamName(job, attacker))
	case prefix == bus.BlobAPIPrefix(bus.AggregatorID) && t.stream == "OBJ_"+bus.BlobBucketName(job, bus.AggregatorID):
		return read && attacker != bus.AuditorID
	case prefix == "$JS.API":
		// The attacker's own account: whatever it creates or reads there
		// is its own, a stream of the same name as another party's
		// included; it holds only what reaches the account anyway (the
		// probes check that) and leaves the real one alone (the
		// snapshots check that).
		return true
	}
	return false
}

func hostileJSAPI(ctx context.Context, name string, lj *ledgerJob) (Outcome, error) {
	local := lj.job.Local()
	job := local.Job()
	banks := local.Keyring().Banks()
	parties := append([]string{bus.AggregatorID}, banks...)
	targets := jobTargets(job, parties)
	// The attacking bank's own subjects take its junk (its ledger and
	// update subjects, which it may write; the bounded-inputs issue bounds
	// them): the snapshots leave them out, and everything else must not
	// move.
	own := []string{bus.LedgerSubject(job, deploy.ClientID(0)), bus.Subject(job, bus.KindUpdate, deploy.ClientID(0))}
	before, err := jsSnapshot(ctx, local, targets, own)
	if err != nil {
		return Outcome{}, err
	}
	accounts, err := bus.JobAccounts(local.Keyring(), bus.AccountOptions{})
	if err != nil {
		return Outcome{}, err
	}
	var granted_, tried, bounced, denied int
	violations := func() int64 {
		return local.Server().Events()[bus.ServerEventKey{Kind: bus.ServerEventPermission, Reason: "publish"}]
	}
	for _, attacker := range []string{deploy.ClientID(0), bus.AuditorID} {
		allow := publishAllowList(accounts, attacker)
		refusedByList := func(subj string) bool {
			if allow == nil {
				return false
			}
			for _, a := range allow {
				if bus.SubjectMatches(a, subj) {
					return false
				}
			}
			return true
		}
		nc, _, err := lj.bankConn(attacker)
		if err != nil {
			return Outcome{}, err
		}
		inbox := bus.InboxPrefix(attacker) + ".spy"
		replies := make(chan *nats.Msg, 1<<16)
		if _, err := nc.ChanSubscribe(inbox+".>", replies); err != nil {
			nc.Close()
			return Outcome{}, err
		}
		prefixes := []string{"$JS.API", bus.LedgerAPIPrefix}
		for _, p := range parties {
			prefixes = append(prefixes, bus.BlobAPIPrefix(p))
		}
		// Everything the attacker may publish on, and some it may not, for
		// the bounces.
		own := []string{bus.LedgerSubject(job, attacker), "gf." + job + ".junk"}
		if attacker != bus.AuditorID {
			for _, k := range []bus.Kind{bus.KindHello, bus.KindUpdate, bus.KindMetrics, bus.KindBye} {
				own = append(own, bus.Subject(job, k, attacker))
			}
			for _, b := range banks {
				own = append(own, bus.Subject(job, bus.KindEmb, attacker, b))
			}
		} else {
			// The auditor writes nothing: a bounce off every ledger
			// subject.
			for _, p := range parties {
				own = append(own, bus.LedgerSubject(job, p))
			}
		}
		// Every request at once, each with its own reply subject; a final
		// request the layout answers marks the end of the server's
		// processing of this connection's publishes.
		type attempt struct {
			subj    string
			allowed bool
			target  jsTarget
		}
		var attempts []attempt
		before := violations()
		expect := 0
		for _, t := range targets {
			for _, prefix := range prefixes {
				for _, a := range apiAttempts(job, t.stream, inbox+".push") {
					subj := prefix + "." + a[0]
					reply := fmt.Sprintf("%s.r.%d", inbox, len(attempts))
					attempts = append(attempts, attempt{subj, granted(attacker, prefix, t, a[0], job), t})
					if refusedByList(subj) {
						expect++
					}
					if err := nc.PublishMsg(&nats.Msg{Subject: subj, Reply: reply, Data: []byte(a[1])}); err != nil {
						nc.Close()
						return Outcome{}, err
					}
					for _, from := range own {
						if refusedByList(from) {
							expect++
						}
						if err := nc.PublishMsg(&nats.Msg{Subject: from, Reply: subj, Data: []byte(a[1])}); err != nil {
							nc.Close()
							return Outcome{}, err
						}
						bounced++
					}
				}
			}
		}
		tried += len(attempts)
		mark := bus.LedgerAPIPrefix + ".STREAM.INFO." + bus.LedgerPartyStreamName(job, attacker)
		if attacker == bus.AuditorID {
			mark = bus.LedgerAPIPrefix + ".STREAM.INFO." + bus.LedgerPartyStreamName(job, bus.AggregatorID)
		}
		if !jsRequestOK(ctx, nc, mark, "") {
			nc.Close()
			return fail(name, InvNotExercised, "%s's own ledger read %s went unanswered", attacker, mark), nil
		}
		// The JetStream API answers from its own goroutines: give the
		// stragglers a moment after the mark.
		time.Sleep(300 * time.Millisecond)
		nc.Close()
		for done := false; !done; {
			select {
			case m := <-replies:
				var n int
				if _, err := fmt.Sscanf(m.Subject[len(inbox+".r."):], "%d", &n); err != nil || n >= len(attempts) || !answeredOK(m) {
					continue
				}
				a := attempts[n]
				if !a.allowed {
					return fail(name, InvCrossAccount, "%s: %s succeeded on %s's stream %s", attacker, a.subj, a.target.owner, a.target.stream), nil
				}
				granted_++
			default:
				done = true
			}
		}
		// Every publish outside the attacker's allow-list is a violation
		// the server counted (and logged, with a logger).
		if got := violations() - before; got < int64(expect) {
			return fail(name, InvNotCounted, "%s: %d publishes outside its allow-list, the server counted %d permission violations", attacker, expect, got), nil
		}
		denied += expect
	}
	spies, err := removeSpies(ctx, local, deploy.ClientID(0))
	if err != nil {
		return Outcome{}, err
	}
	after, err := jsSnapshot(ctx, local, targets, own)
	if err != nil {
		return Outcome{}, err
	}
	for _, t := range targets {
		if before[t.stream] != after[t.stream] {
			return fail(name, InvCrossAccount, "%s's stream %s changed under attack: %s → %s", t.owner, t.stream, before[t.stream], after[t.stream]), nil
		}
	}
	probes := 0
	for _, attacker := range []string{deploy.ClientID(0), bus.AuditorID} {
		leaks, missing, n, err := probeSubjects(ctx, lj, attacker, banks)
		if err != nil {
			return Outcome{}, err
		}
		probes += n
		if len(leaks) > 0 {
			return fail(name, InvCrossAccount, "%s received what was not addressed to it: %v", attacker, leaks), nil
		}
		if len(missing) > 0 {
			return fail(name, InvNotExercised, "%s did not receive what is addressed to it, so the probe proves nothing: %v", attacker, missing), nil
		}
	}
	return Outcome{Metrics: map[string]float64{"api_requests": float64(tried), "granted_reads": float64(granted_), "violations_counted": float64(denied),
		"bounces": float64(bounced), "probes": float64(probes), "streams_checked": float64(len(targets)),
		"own_account_streams": float64(spies)}}, nil
}

// publishAllowList is party's publish allow-list in the layout (nil:
// unrestricted).
func publishAllowList(accounts []bus.Account, party string) []string {
	for _, a := range accounts {
		for _, u := range a.Users {
			if u.ID == party {
				return u.Publish
			}
		}
	}
	return nil
}

// jsRequestOK sends one JetStream API request and reports whether it was
// answered without an API error. No responder, a timeout or an error
// response are refusals.
func jsRequestOK(ctx context.Context, nc *nats.Conn, subj, body string) bool {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(rctx, subj, []byte(body))
	return err == nil && answeredOK(m)
}

// answeredOK reports whether m answers a JetStream API request without an
// error (a status header or an error object).
func answeredOK(m *nats.Msg) bool {
	if m.Header.Get("Status") != "" && m.Header.Get("Status") != "200" {
		return false
	}
	var resp struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(m.Data, &resp) == nil && resp.Error != nil {
		return false
	}
	return true
}

// jsSnapshot describes each target as its owner sees it: messages per
// subject (but those on skip), consumers and configuration, or "absent".
func jsSnapshot(ctx context.Context, local *deploy.Local, targets []jsTarget, skip []string) (map[string]string, error) {
	out := map[string]string{}
	conns := map[string]jetstream.JetStream{}
	defer func() {
		for _, js := range conns {
			js.Conn().Close()
		}
	}()
	for _, t := range targets {
		js, ok := conns[t.owner]
		if !ok {
			nc, err := bus.Connect(local.URL(), bus.ConnectOptions{Name: "snapshot-" + t.owner, Creds: local.Creds(t.owner)})
			if err != nil {
				return nil, fmt.Errorf("snapshot as %s: %w", t.owner, err)
			}
			if js, err = jetstream.New(nc); err != nil {
				nc.Close()
				return nil, err
			}
			conns[t.owner] = js
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := js.Stream(sctx, t.stream)
		if err != nil {
			cancel()
			out[t.stream] = "absent"
			continue
		}
		info, err := st.Info(sctx, jetstream.WithSubjectFilter(">"))
		cancel()
		if err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", t.stream, err)
		}
		var subjects []string
		for subj, n := range info.State.Subjects {
			if !slices.Contains(skip, subj) {
				subjects = append(subjects, fmt.Sprintf("%s=%d", subj, n))
			}
		}
		sort.Strings(subjects)
		cfg, _ := json.Marshal(info.Config)
		out[t.stream] = fmt.Sprintf("subjects=%v consumers=%d config=%x", subjects, info.State.Consumers, cfg)
	}
	return out, nil
}

// removeSpies deletes the streams the attacking bank created in its own
// account (all but its blob bucket), so that a snapshot of its bucket
// compares like with like, and returns how many there were.
func removeSpies(ctx context.Context, local *deploy.Local, bank string) (int, error) {
	nc, err := bus.Connect(local.URL(), bus.ConnectOptions{Name: "cleanup", Creds: local.Creds(bank)})
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, err
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	keep := "OBJ_" + bus.BlobBucketName(local.Job(), bank)
	var spies []string
	names := js.StreamNames(dctx)
	for n := range names.Name() {
		if n != keep {
			spies = append(spies, n)
		}
	}
	if err := names.Err(); err != nil {
		return 0, fmt.Errorf("listing %s's own streams: %w", bank, err)
	}
	for _, n := range spies {
		if err := js.DeleteStream(dctx, n); err != nil {
			return 0, fmt.Errorf("deleting %s's own stream %s: %w", bank, n, err)
		}
	}
	return len(spies), nil
}

// probeSubjects has every other party publish one probe on every subject
// of the job, while attacker subscribes to everything its account
// receives ('>'). It returns what reached the attacker that was not
// addressed to it, what was addressed to it and did not arrive, and the
// number of probes.
func probeSubjects(ctx context.Context, lj *ledgerJob, attacker string, banks []string) (leaks, missing []string, probes int, err error) {
	local := lj.job.Local()
	job := local.Job()
	spy, _, err := lj.bankConn(attacker)
	if err != nil {
		return nil, nil, 0, err
	}
	defer spy.Close()
	got := make(chan *nats.Msg, 1<<14)
	if _, err := spy.ChanSubscribe(">", got); err != nil {
		return nil, nil, 0, err
	}
	if err := spy.FlushTimeout(5 * time.Second); err != nil {
		return nil, nil, 0, err
	}
	s := func(kind bus.Kind, parts ...string) string { return bus.Subject(job, kind, parts...) }
	var all []string
	for _, k := range []bus.Kind{bus.KindRound, bus.KindDone} {
		all = append(all, s(k))
	}
	for _, p := range append([]string{"all"}, banks...) {
		all = append(all, s(bus.KindModel, p))
	}
	for _, b := range banks {
		for _, k := range []bus.Kind{bus.KindHello, bus.KindUpdate, bus.KindMetrics, bus.KindBye} {
			all = append(all, s(k, b))
		}
		for _, c := range banks {
			if b != c {
				all = append(all, s(bus.KindEmb, b, c))
			}
		}
	}
	for _, p := range append([]string{bus.AggregatorID, bus.AuditorID}, banks...) {
		if p == attacker {
			continue
		}
		nc, _, err := lj.bankConn(p)
		if err != nil {
			return nil, nil, 0, err
		}
		for _, subj := range all {
			if err := nc.Publish(subj, []byte("probe from "+p)); err != nil {
				nc.Close()
				return nil, nil, 0, err
			}
			probes++
		}
		err = nc.FlushTimeout(5 * time.Second)
		nc.Close()
		if err != nil {
			return nil, nil, 0, err
		}
	}
	if err := spy.FlushTimeout(5 * time.Second); err != nil {
		return nil, nil, 0, err
	}
	// What the layout addresses to the attacker, and from whom.
	mine := map[string]string{s(bus.KindRound): bus.AggregatorID, s(bus.KindDone): bus.AggregatorID,
		s(bus.KindModel, "all"): bus.AggregatorID}
	if attacker != bus.AuditorID {
		mine[s(bus.KindModel, attacker)] = bus.AggregatorID
		for _, b := range banks {
			if b != attacker {
				mine[s(bus.KindEmb, b, attacker)] = b
			}
		}
	}
	seen := map[string]bool{}
	for done := false; !done; {
		select {
		case m := <-got:
			from, ok := strings.CutPrefix(string(m.Data), "probe from ")
			if !ok || strings.HasPrefix(m.Subject, "_INBOX.") {
				continue
			}
			if mine[m.Subject] != from {
				leaks = append(leaks, m.Subject+" from "+from)
			}
			seen[m.Subject] = true
		default:
			done = true
		}
	}
	for subj := range mine {
		if !seen[subj] {
			missing = append(missing, subj)
		}
	}
	sort.Strings(leaks)
	sort.Strings(missing)
	return slices.Compact(leaks), missing, probes, nil
}
