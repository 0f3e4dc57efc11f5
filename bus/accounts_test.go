package bus

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"graphfed/privacy"
)

// The tests of the accounts layout (accounts.go) on a real embedded server
// running the configuration ServerConfig renders. The expectations are
// written from the job's data flow (DESIGN.md), not derived from
// JobAccounts: a change to the layout that lets anything else cross shows
// up as a delivery or a JetStream request that should not have succeeded.

// secRoles are the parties of the job: the aggregator, the banks, the
// auditor.
var secRoles = append(append([]string{AggregatorID}, secBanks...), AuditorID)

// jobSubjects is every subject of job: each bank's hello, update, metrics
// and bye, the round, done, the global and every personalised model, the
// embeddings of every ordered pair of banks, every writer's ledger subject.
func jobSubjects(job string, banks []string) []string {
	s := func(kind Kind, parts ...string) string { return Subject(job, kind, parts...) }
	var out []string
	for _, b := range banks {
		out = append(out, s(KindHello, b), s(KindUpdate, b), s(KindMetrics, b), s(KindBye, b))
	}
	out = append(out, s(KindRound), s(KindDone), s(KindModel, "all"))
	for _, b := range banks {
		out = append(out, s(KindModel, b))
	}
	for _, a := range banks {
		for _, b := range banks {
			if a != b {
				out = append(out, s(KindEmb, a, b))
			}
		}
	}
	for _, w := range append([]string{AggregatorID}, banks...) {
		out = append(out, LedgerSubject(job, w))
	}
	return out
}

// flowReceivers is the data flow: who, besides from itself (its own
// account), receives what from publishes on subject. A bank's hello,
// update, metrics and bye go to the aggregator; the aggregator's round,
// done and global model to every bank and the auditor, a personalised
// model to its bank only; bank A's embeddings to bank B to B alone, when
// the job links A to B; a writer's ledger subject to the ledger account
// (LedgerAdminID observes it). Anything else goes nowhere.
func flowReceivers(from, subject string, banks []string, linked func(a, b string) bool) []string {
	ps, err := ParseSubject(subject)
	if err != nil {
		return nil
	}
	bank := slices.Contains(banks, from)
	everyone := append(slices.Clone(banks), AuditorID)
	switch ps.Kind {
	case KindHello, KindUpdate, KindMetrics, KindBye:
		if bank && ps.From == from && ps.To == "" {
			return []string{AggregatorID}
		}
	case KindRound, KindDone:
		if from == AggregatorID && ps.From == "" {
			return everyone
		}
	case KindModel:
		switch {
		case from != AggregatorID || ps.To != "":
		case ps.From == "all":
			return everyone
		case slices.Contains(banks, ps.From):
			return []string{ps.From}
		}
	case KindEmb:
		if bank && ps.From == from && slices.Contains(banks, ps.To) && linked(ps.From, ps.To) {
			return []string{ps.To}
		}
	case ledgerKind:
		if (bank || from == AggregatorID) && ps.From == from && ps.To == "" {
			return []string{LedgerAdminID}
		}
	}
	return nil
}

// linkedBy is the link relation of links (AccountOptions.Links): nil links
// every ordered pair of distinct banks.
func linkedBy(links [][2]string) func(a, b string) bool {
	return func(a, b string) bool {
		if links == nil {
			return a != b
		}
		return slices.Contains(links, [2]string{a, b})
	}
}

// For each role (and the ledger administrator), every subject of the job:
// a probe on it reaches exactly the accounts of the data flow, observed by
// a subscriber on ">" in every account. Embeddings follow the links: a
// pair the configuration does not link is not delivered. A bank's or the
// auditor's probe outside the flow is also refused visibly, by its user's
// publish allow-list (accounts_permissions.go): the publisher hears of a
// permissions violation for exactly those subjects; the aggregator and
// the administrator, whose users have no list, of none.
func TestAccountsDelivery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links [][2]string
	}{
		{"every pair linked", nil},
		{"some pairs linked", [][2]string{{"bank-a", "bank-b"}, {"bank-b", "bank-a"}, {"bank-b", "bank-c"}}},
		{"no pair linked", [][2]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startSecureServerWith(t, secOptions{Links: tc.links})
			observers := append(slices.Clone(secRoles), LedgerAdminID)
			ps := map[string]*party{LedgerAdminID: e.admin}
			heard := map[string]chan *nats.Msg{}
			for _, id := range observers {
				if ps[id] == nil {
					ps[id] = e.connect(t, id)
				}
				heard[id] = ps[id].listen(t)
			}
			subjects := jobSubjects(secJob, secBanks)
			linked := linkedBy(tc.links)
			for _, from := range observers {
				t.Run("from "+from, func(t *testing.T) {
					pub := ps[from]
					tag := "probe " + from + " "
					for _, subj := range subjects {
						pub.publish(t, subj, tag+subj)
					}
					pub.flush(t)
					for _, id := range observers {
						ps[id].flush(t)
					}
					for _, obs := range observers {
						got := drain(heard[obs], "probe ")
						if obs == from {
							// Its own account is no other party's: what
							// stays there (or what an allow-list of its
							// user refuses) is not the question.
							continue
						}
						var want []string
						for _, subj := range subjects {
							if slices.Contains(flowReceivers(from, subj, secBanks, linked), obs) {
								want = append(want, subj+" "+tag+subj)
							}
						}
						sort.Strings(want)
						sort.Strings(got)
						if !slices.Equal(got, want) {
							t.Errorf("%s's probes reaching %s:\n%s", from, obs, setDiff(got, want))
						}
					}
					var refused, outside []string
					for _, v := range pub.asyncErrors(t) {
						_, subj, ok := strings.Cut(v, "Permissions Violation for Publish to ")
						if !ok {
							t.Errorf("%s: asynchronous error %s", from, v)
							continue
						}
						refused = append(refused, strings.Trim(subj, `"`))
					}
					if from != AggregatorID && from != LedgerAdminID {
						for _, subj := range subjects {
							if flowReceivers(from, subj, secBanks, linked) == nil {
								outside = append(outside, subj)
							}
						}
					}
					sort.Strings(refused)
					sort.Strings(outside)
					if !slices.Equal(refused, outside) {
						t.Errorf("%s's publishes refused as permissions violations:\n%s", from, setDiff(refused, outside))
					}
				})
			}
		})
	}
}

// setDiff says what got has beyond want and lacks of it.
func setDiff(got, want []string) string {
	var b strings.Builder
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "  unexpected %s\n", g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "  missing    %s\n", w)
		}
	}
	return b.String()
}

// jsTarget is one stream of the job and where it lives.
type jsTarget struct {
	stream  string
	kind    string // "ledger", "blob", "updates", "kv", "models"
	account string // the party whose account holds it; LedgerAdminID: the ledger account
	of      string // ledger and blob streams: the party they belong to
	subject string // a subject with a stored message, for last-by-subject gets
	put     string // a subject the stream stores, for a forged put; "" for none
}

// jsJob is a secure server with every stream of a durable job holding at
// least one message: each writer's ledger stream (one entry), the
// aggregator's update stream (one update of bank-a), checkpoint bucket
// and model store, and each writer's blob bucket (one object).
type jsJob struct {
	*secEnv
	ps      map[string]*party
	targets []jsTarget
	// holders have each stream's account's JetStream: the ledger
	// administrator for the ledger streams, the owner for the others.
	holders map[string]jetstream.JetStream
}

func startJSJob(t *testing.T) *jsJob {
	t.Helper()
	e := startSecureServer(t)
	j := &jsJob{secEnv: e, ps: map[string]*party{LedgerAdminID: e.admin}, holders: map[string]jetstream.JetStream{}}
	for _, id := range secRoles {
		j.ps[id] = e.connect(t, id)
	}
	for id, p := range j.ps {
		js, err := jetstream.New(p.nc)
		if err != nil {
			t.Fatal(err)
		}
		j.holders[id] = js
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i, w := range secWriters {
		l, err := OpenJetStreamLedger(ctx, j.ps[w].nc, secJob, JSLedgerOptions{Parties: []string{w}})
		if err != nil {
			t.Fatalf("%s opening its ledger stream: %v", w, err)
		}
		if err := l.Append(ctx, writerEntry(secJob, w)); err != nil {
			t.Fatalf("%s appending its entry: %v", w, err)
		}
		j.targets = append(j.targets, jsTarget{stream: LedgerPartyStreamName(secJob, w), kind: "ledger",
			account: LedgerAdminID, of: w, subject: LedgerSubject(secJob, w)})
		blobs, err := NewJetStreamBlobs(j.ps[w].nc, secJob, w, BlobStoreOptions{Create: true, Accounts: true})
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("body-%d", i)
		if _, err := blobs.Put(ctx, 1, name, bytes.Repeat([]byte{byte(i)}, 3000)); err != nil {
			t.Fatalf("%s putting a blob in its own bucket: %v", w, err)
		}
		bucket := BlobBucketName(secJob, w)
		j.targets = append(j.targets, jsTarget{stream: blobStreamName(secJob, w), kind: "blob", account: w, of: w,
			subject: objMetaSubject(bucket, name), put: "$O." + bucket + ".C.forged"})
	}
	agg := j.ps[AggregatorID]
	if _, err := OpenUpdateLog(ctx, agg.nc, secJob, UpdateLogOptions{}); err != nil {
		t.Fatalf("the aggregator opening its update log: %v", err)
	}
	store, err := OpenCheckpointStore(ctx, agg.nc, secJob, CheckpointStoreOptions{})
	if err != nil {
		t.Fatalf("the aggregator opening its checkpoint store: %v", err)
	}
	if err := store.SaveState(ctx, []byte("state-1")); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveModel(ctx, 1, []byte("model one")); err != nil {
		t.Fatal(err)
	}
	pub, err := NewDurableTransport(NewNATSTransport(j.ps["bank-a"].nc, false), secJob)
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, Subject(secJob, KindUpdate, "bank-a"), sealT(t, Envelope{Job: secJob, Kind: KindUpdate, From: "bank-a", Round: 1, Seq: 1}, &Update{Round: 1, Weight: 1})); err != nil {
		t.Fatalf("bank-a's durable update: %v", err)
	}
	kv, models := CheckpointBucketName(secJob), ModelBucketName(secJob)
	j.targets = append(j.targets,
		jsTarget{stream: UpdateStreamName(secJob), kind: "updates", account: AggregatorID, subject: Subject(secJob, KindUpdate, "bank-a")},
		jsTarget{stream: "KV_" + kv, kind: "kv", account: AggregatorID, subject: "$KV." + kv + "." + checkpointKey, put: "$KV." + kv + "." + checkpointKey},
		jsTarget{stream: "OBJ_" + models, kind: "models", account: AggregatorID, subject: objMetaSubject(models, modelObject(1)), put: "$O." + models + ".C.forged"})
	return j
}

// writerEntry is a valid first ledger entry of writer w: a round record of
// the aggregator, a model release of a bank.
func writerEntry(job, w string) privacy.Entry {
	if w == AggregatorID {
		return privacy.Entry{Seq: 1, Job: job, Client: privacy.AggregatorClient, Channel: privacy.ChannelRound, Round: 1,
			Time: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	}
	return modelEntry(job, w, 1)
}

// objMetaSubject is the subject of object name's meta message in bucket.
func objMetaSubject(bucket, name string) string {
	return "$O." + bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(name))
}

// snapshot is every stream of the job as its account's holder sees it:
// configuration, messages, bytes, sequences, deletions and consumers.
func (j *jsJob) snapshot(t *testing.T) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]string{}
	for _, tg := range j.targets {
		st, err := j.holders[tg.account].Stream(ctx, tg.stream)
		if err != nil {
			t.Fatalf("%s's stream %s: %v", tg.account, tg.stream, err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s := info.State
		b, _ := json.Marshal(struct {
			Config                                        jetstream.StreamConfig
			Created                                       time.Time
			Msgs, Bytes, FirstSeq, LastSeq, Deleted, Cons uint64
		}{info.Config, info.Created, s.Msgs, s.Bytes, s.FirstSeq, s.LastSeq, uint64(s.NumDeleted), uint64(s.Consumers)})
		out[tg.stream] = string(b)
	}
	return out
}

// jsVerb is one JetStream API request on a stream, as the subject after
// the API prefix and a body.
type jsVerb struct {
	verb, body string
	read       bool // a read the layout may grant
	direct     bool // a direct get (blob buckets allow them, ledger streams not)
}

// jsVerbs are every JetStream API verb the job uses, on tg's stream. A
// stream creation comes last: through the requester's own $JS.API it may
// succeed, creating a namesake in the requester's own account.
func jsVerbs(tg jsTarget, inbox string) []jsVerb {
	st := tg.stream
	spy, _ := json.Marshal(map[string]any{"name": st, "subjects": []string{"gf." + secJob + ".>"}})
	push := func(name, durable string) string {
		cfg := map[string]any{"deliver_subject": inbox, "deliver_policy": "all", "ack_policy": "none"}
		if name != "" {
			cfg["name"] = name
		}
		if durable != "" {
			cfg["durable_name"] = durable
		}
		b, _ := json.Marshal(map[string]any{"stream_name": st, "config": cfg})
		return string(b)
	}
	return []jsVerb{
		{verb: "STREAM.INFO." + st, read: true},
		{verb: "STREAM.MSG.GET." + st, body: `{"seq":1}`, read: true},
		{verb: "STREAM.MSG.GET." + st, body: `{"last_by_subj":"` + tg.subject + `"}`, read: true},
		{verb: "DIRECT.GET." + st, body: `{"seq":1}`, read: true, direct: true},
		{verb: "DIRECT.GET." + st + "." + tg.subject, read: true, direct: true},
		{verb: "STREAM.UPDATE." + st, body: string(spy)},
		{verb: "STREAM.MSG.DELETE." + st, body: `{"seq":1}`},
		{verb: "STREAM.PURGE." + st},
		{verb: "CONSUMER.CREATE." + st, body: push("", "")},
		{verb: "CONSUMER.CREATE." + st + ".spy", body: push("spy", "")},
		{verb: "CONSUMER.CREATE." + st + ".spy." + tg.subject, body: push("spy", "")},
		{verb: "CONSUMER.DURABLE.CREATE." + st + ".spy", body: push("", "spy")},
		{verb: "STREAM.DELETE." + st},
		{verb: "STREAM.CREATE." + st, body: string(spy)},
	}
}

// jsGranted is what the layout grants attacker through prefix on tg:
// reads only. A bank reads its own ledger stream (info and message gets)
// and the aggregator's blob bucket; the aggregator reads its own ledger
// stream and every bank's blob bucket; the auditor every ledger stream.
func jsGranted(attacker, prefix string, tg jsTarget, v jsVerb) bool {
	if !v.read {
		return false
	}
	switch tg.kind {
	case "ledger":
		return prefix == LedgerAPIPrefix && !v.direct && (attacker == AuditorID || attacker == tg.of)
	case "blob":
		if prefix != BlobAPIPrefix(tg.of) || attacker == AuditorID {
			return false
		}
		return (tg.of == AggregatorID) != (attacker == AggregatorID)
	}
	return false
}

// bounceSubjects are subjects attacker may publish on that store nothing
// (its updates and ledger entries would be stored, and acknowledged to
// the reply: TestAccountsDurableAggregator and TestAccountsLedger bounce
// off those): a JetStream request there with a reply subject on the API
// is the outside test's trick of having someone else's answer land on it.
func bounceSubjects(attacker string) []string {
	s := func(kind Kind, parts ...string) string { return Subject(secJob, kind, parts...) }
	switch attacker {
	case AggregatorID:
		out := []string{s(KindRound), s(KindDone), s(KindModel, "all")}
		for _, b := range secBanks {
			out = append(out, s(KindModel, b))
		}
		return out
	case AuditorID:
		out := []string{s(KindRound), s(KindUpdate, "bank-a")}
		for _, w := range secWriters {
			out = append(out, LedgerSubject(secJob, w))
		}
		return out
	}
	out := []string{s(KindHello, attacker), s(KindMetrics, attacker), s(KindBye, attacker)}
	for _, b := range secBanks {
		if b != attacker {
			out = append(out, s(KindEmb, attacker, b))
		}
	}
	return out
}

// apiOK reports whether the answer to a JetStream API request (or a
// stream publish) says it succeeded: a direct get's message, or a JSON
// answer without an error. A status header (no responders, not found) or
// an error answer are refusals.
func apiOK(m *nats.Msg) bool {
	if m == nil {
		return false
	}
	if m.Header.Get("Status") != "" {
		return false
	}
	if m.Header.Get(jetstream.StreamHeader) != "" {
		return true
	}
	var r struct {
		Error *json.RawMessage `json:"error"`
	}
	return json.Unmarshal(m.Data, &r) == nil && r.Error == nil
}

// For each role, every JetStream API verb the job uses on every stream of
// the job through every API prefix a party can name ($JS.API, the
// ledger's, each blob bucket's), each also bounced by reply subject off
// the subjects the role may publish on, and a forged put on every bucket:
// only the reads the layout grants succeed, and they do. Afterwards every
// stream, as its account's holder (the ledger administrator for the
// ledger) sees it, is unchanged. Through its own $JS.API a party reaches
// its own account only: streams it holds itself are its own and not
// tried, and a stream it creates under another's stream's name is a
// namesake in its own account (the real one is unchanged), which it can
// then delete (and does).
func TestAccountsJetStreamAPI(t *testing.T) {
	j := startJSJob(t)
	before := j.snapshot(t)
	prefixes := []string{"$JS.API", LedgerAPIPrefix}
	for _, w := range secWriters {
		prefixes = append(prefixes, BlobAPIPrefix(w))
	}
	for _, attacker := range secRoles {
		t.Run(attacker, func(t *testing.T) {
			p := j.ps[attacker]
			// Push consumers would deliver here, in the attacker's own
			// account, where its listener would hear them.
			inbox := Subject(secJob, "spy", attacker)
			spied := p.listen(t)
			sent := map[string]bool{}
			answered := j.answered(t, attacker)
			// The replies of requests that nothing should answer; the
			// listener must hear none.
			unanswered := InboxPrefix(j.pub(attacker)) + ".unanswered"
			var granted, namesakes, dropped int
			request := func(subj, body string) (bool, string) {
				sent[subj] = true
				if !answered(subj) {
					// Nothing in the attacker's account but its own
					// listener takes the request: without the listener
					// the server would say no responders. Sent all the
					// same, for the snapshots.
					if err := p.nc.PublishMsg(&nats.Msg{Subject: subj, Reply: unanswered + "." + strconv.Itoa(dropped), Data: []byte(body)}); err != nil {
						t.Fatal(err)
					}
					dropped++
					return false, "no answerer"
				}
				m, refused := p.request(t, subj, body)
				if refused {
					return false, "refused"
				}
				return apiOK(m), string(m.Data)
			}
			for _, tg := range j.targets {
				own := tg.account == attacker
				if tg.put != "" && !own {
					if ok, _ := request(tg.put, "forged"); ok {
						t.Errorf("%s's put on %s (%s's %s) was stored", attacker, tg.put, tg.account, tg.kind)
					}
				}
				for _, prefix := range prefixes {
					if own && prefix == "$JS.API" {
						continue
					}
					for _, v := range jsVerbs(tg, inbox) {
						subj := prefix + "." + v.verb
						ok, answer := request(subj, v.body)
						for _, from := range bounceSubjects(attacker) {
							sent[from] = true
							if err := p.nc.PublishMsg(&nats.Msg{Subject: from, Reply: subj, Data: []byte(v.body)}); err != nil {
								t.Fatal(err)
							}
						}
						want := jsGranted(attacker, prefix, tg, v)
						switch {
						case ok && want:
							granted++
						case want:
							t.Errorf("%s: %s %s refused (%.300s), a read the layout grants", attacker, subj, v.body, answer)
						case ok && prefix == "$JS.API" && strings.HasPrefix(v.verb, "STREAM.CREATE."):
							// A namesake in the attacker's own account: the
							// same prefix found no stream of that name a
							// moment ago, and deleting it now succeeds.
							namesakes++
							if ok, answer := request(prefix+".STREAM.DELETE."+tg.stream, ""); !ok {
								t.Errorf("%s: deleting the namesake %s it created: %.300s", attacker, tg.stream, answer)
							}
						case ok:
							t.Errorf("%s: %s %s succeeded on %s's %s stream", attacker, subj, v.body, tg.account, tg.kind)
						}
					}
				}
			}
			// Nothing of the job's streams reaches the attacker's account
			// unasked: besides its own requests and bounces, and the
			// answers to its requests, its listener hears only its own
			// account's JetStream advisories.
			p.flush(t)
			for range len(spied) {
				msg := <-spied
				switch {
				case strings.HasPrefix(msg.Subject, unanswered+"."):
					t.Errorf("%s: a request nothing should answer was answered on %s: %.200s", attacker, msg.Subject, msg.Data)
				case sent[msg.Subject], strings.HasPrefix(msg.Subject, InboxPrefix(j.pub(attacker))+"."), strings.HasPrefix(msg.Subject, "$JS.EVENT."),
					strings.HasPrefix(msg.Subject, "$O.GFMARKER."):
				default:
					t.Errorf("%s received %s %.200s", attacker, msg.Subject, msg.Data)
				}
			}
			t.Logf("%s: %d granted reads, %d namesakes created and deleted in its own account, %d requests nothing answers", attacker, granted, namesakes, dropped)
			if granted == 0 {
				t.Errorf("%s: no read succeeded at all", attacker)
			}
		})
	}
	after := j.snapshot(t)
	for _, tg := range j.targets {
		if before[tg.stream] != after[tg.stream] {
			t.Errorf("%s's %s stream %s changed:\nbefore %s\nafter  %s", tg.account, tg.kind, tg.stream, before[tg.stream], after[tg.stream])
		}
	}
}

// answered returns whether something in party id's account answers a
// request on a subject, other than a listener of the test: a service it
// imports (another account's, or its own JetStream API through the
// system account, except a direct get, which the server drops there
// without an answer, processServiceImport), or a subscription of the
// account's own (a stream capturing the subject, the direct get of a
// stream that allows them). The server says no responders to the others,
// but not while the test listens on ">" in the account.
func (j *jsJob) answered(t *testing.T, id string) func(subject string) bool {
	t.Helper()
	ns := j.srv.NATS()
	z, err := ns.Accountz(&server.AccountzOptions{Account: j.accountOf(id)})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := ns.LookupAccount(j.accountOf(id))
	if err != nil {
		t.Fatal(err)
	}
	sys := ns.SystemAccount().GetName()
	type svc struct {
		local string
		sys   bool
	}
	var imports []svc
	for _, im := range z.Account.Imports {
		if im.Type.String() != "service" || im.Invalid {
			continue
		}
		local := string(im.LocalSubject)
		if local == "" {
			local = string(im.Subject)
		}
		imports = append(imports, svc{local, im.Account == sys})
	}
	// The test's listener on ">" is in every count.
	base := acct.Interest("GF.NOBODY.ANSWERS")
	return func(subject string) bool {
		if acct.Interest(subject) > base {
			return true
		}
		for _, im := range imports {
			if SubjectMatches(im.local, subject) {
				return !im.sys || !strings.HasPrefix(subject, "$JS.API.DIRECT.GET.")
			}
		}
		return false
	}
}

// accountOf is party id's account.
func (e *secEnv) accountOf(id string) string {
	if id == LedgerAdminID {
		return LedgerAccount
	}
	p, _ := e.ring.Party(id)
	return AccountOf(p)
}

// pub is party id's public key.
func (e *secEnv) pub(id string) string {
	if id == LedgerAdminID {
		return e.dep.LedgerAdmin.PublicKey
	}
	p, _ := e.ring.Party(id)
	return p.PublicKey
}

// The ledger in the accounts layout: the administrator's streams are
// append-only (deletes and purges refused even to it); a bank appends on
// its own subject and reads its own stream, and cannot open another's
// stream or append to it; the auditor reads every stream and cannot
// append: its publish on a ledger subject goes nowhere, and neither does
// the outside test's reply trick (a JetStream request answered onto a
// ledger subject); the aggregator cannot create, delete or purge a ledger
// stream; and a bank's append bounced off its own ledger subject lands
// the stream's acknowledgement in the bank's own account.
func TestAccountsLedger(t *testing.T) {
	e := startSecureServer(t)
	agg, bank, aud := e.connect(t, AggregatorID), e.connect(t, "bank-a"), e.connect(t, AuditorID)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, err := jetstream.New(e.admin.nc)
	if err != nil {
		t.Fatal(err)
	}
	// The streams as the administrator made them: append-only.
	created := map[string]time.Time{}
	for _, w := range secWriters {
		name := LedgerPartyStreamName(secJob, w)
		st, err := admin.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		c := st.CachedInfo().Config
		if !c.DenyDelete || !c.DenyPurge || c.AllowRollup || c.AllowDirect || c.Storage != jetstream.FileStorage ||
			c.Discard != jetstream.DiscardNew || c.MaxAge != 0 || !slices.Equal(c.Subjects, []string{LedgerSubject(secJob, w)}) {
			t.Errorf("ledger stream %s: %+v", name, c)
		}
		created[name] = st.CachedInfo().Created
	}
	msgs := func(w string) uint64 {
		t.Helper()
		st, err := admin.Stream(ctx, LedgerPartyStreamName(secJob, w))
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	short := JSLedgerOptions{Timeout: time.Second}

	l, err := OpenJetStreamLedger(ctx, bank.nc, secJob, JSLedgerOptions{Parties: []string{"bank-a"}})
	if err != nil {
		t.Fatalf("bank-a binding to its ledger stream: %v", err)
	}
	if err := l.Append(ctx, modelEntry(secJob, "bank-a", 1)); err != nil {
		t.Fatalf("bank-a appending its entry: %v", err)
	}
	if got, err := l.Entries(ctx); err != nil || len(got) != 1 || got[0].Client != "bank-a" {
		t.Fatalf("bank-a reading its ledger: %v, %v", got, err)
	}
	if err := l.Append(ctx, modelEntry(secJob, "bank-b", 1)); err == nil {
		t.Fatal("bank-a appended an entry of bank-b")
	}
	refused := func(what string, do func(context.Context) error) {
		t.Helper()
		// A refused request has no answer and is retried until the
		// context ends: give it a short one.
		rctx, c := context.WithTimeout(ctx, time.Second)
		defer c()
		if err := do(rctx); err == nil {
			t.Errorf("%s succeeded", what)
		}
	}
	refused("bank-a opening bank-b's ledger stream", func(ctx context.Context) error {
		_, err := OpenJetStreamLedger(ctx, bank.nc, secJob, JSLedgerOptions{Parties: []string{"bank-b"}})
		return err
	})
	bjs, err := jetstream.New(bank.nc)
	if err != nil {
		t.Fatal(err)
	}
	short1, c1 := context.WithTimeout(ctx, time.Second)
	if _, err := bjs.Publish(short1, LedgerSubject(secJob, "bank-b"), []byte("{}")); err == nil {
		t.Fatal("bank-a's publish on bank-b's ledger subject was stored")
	}
	c1()
	// Bounced off its own ledger subject, a request to delete another's
	// stream: the stream stores the junk (its own subject; the reader
	// skips junk) and its acknowledgement goes to bank-a's own account,
	// whose JetStream has no such stream.
	for _, w := range secWriters {
		for _, verb := range []string{"STREAM.DELETE.", "STREAM.PURGE."} {
			reply := "$JS.API." + verb + LedgerPartyStreamName(secJob, w)
			if err := bank.nc.PublishMsg(&nats.Msg{Subject: LedgerSubject(secJob, "bank-a"), Reply: reply, Data: []byte("{}")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	bank.flush(t)
	// The stream stores what reaches it in its own time: poll.
	for deadline := time.Now().Add(20 * time.Second); msgs("bank-a") != 1+2*uint64(len(secWriters)); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("bank-a's stream holds %d messages after its bounces, want its entry and %d junk", msgs("bank-a"), 2*len(secWriters))
		}
	}

	// The auditor reads every stream, and writes none.
	ro, err := OpenJetStreamLedger(ctx, aud.nc, secJob, JSLedgerOptions{ReadOnly: true, Parties: secWriters})
	if err != nil {
		t.Fatalf("the auditor binding to every ledger stream: %v", err)
	}
	if got, err := ro.Entries(ctx); err != nil || len(got) != 1 || got[0].Client != "bank-a" {
		t.Fatalf("the auditor reading the ledger: %v, %v", got, err)
	}
	rw, err := OpenJetStreamLedger(ctx, aud.nc, secJob, JSLedgerOptions{Parties: secWriters, Timeout: time.Second})
	if err != nil {
		t.Fatalf("the auditor binding (not read-only): %v", err)
	}
	refused("the auditor appending an entry of bank-b", func(ctx context.Context) error { return rw.Append(ctx, modelEntry(secJob, "bank-b", 1)) })
	ajs, err := jetstream.New(aud.nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range secWriters {
		sctx, c := context.WithTimeout(ctx, time.Second)
		if _, err := ajs.Publish(sctx, LedgerSubject(secJob, w), []byte("{}")); err == nil {
			t.Errorf("the auditor's publish on %s's ledger subject was stored", w)
		}
		c()
		// The outside test's trick: an answer of the server onto a
		// ledger subject, through every API the auditor can name.
		for _, prefix := range []string{"$JS.API", LedgerAPIPrefix} {
			for _, verb := range []string{"STREAM.INFO.", "STREAM.MSG.GET."} {
				if err := aud.nc.PublishMsg(&nats.Msg{Subject: prefix + "." + verb + LedgerPartyStreamName(secJob, w),
					Reply: LedgerSubject(secJob, w), Data: []byte(`{"seq":1}`)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		aud.publish(t, LedgerSubject(secJob, w), "junk")
	}
	aud.flush(t)

	// The aggregator: whatever it creates through its own API is its own
	// account's; through the ledger's API it can neither create, delete
	// nor purge.
	if names, err := CreateLedgerStreams(ctx, agg.nc, secJob, secWriters, short); err == nil {
		gjs, _ := jetstream.New(agg.nc)
		for _, n := range names {
			if err := gjs.DeleteStream(ctx, n); err != nil {
				t.Errorf("the aggregator deleting the namesake %s it created in its own account: %v", n, err)
			}
		}
	}
	ljs, err := jetstream.NewWithAPIPrefix(agg.nc, LedgerAPIPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		do   func(context.Context) error
	}{
		{"create a ledger stream", func(ctx context.Context) error {
			_, err := ljs.CreateStream(ctx, appendOnlyConfig(LedgerPartyStreamName(secJob, "bank-z"), "spy", LedgerSubject(secJob, "bank-z"), JSLedgerOptions{Replicas: 1}))
			return err
		}},
		{"recreate its own ledger stream", func(ctx context.Context) error {
			_, err := ljs.CreateStream(ctx, appendOnlyConfig(LedgerPartyStreamName(secJob, AggregatorID), "spy", LedgerSubject(secJob, AggregatorID), JSLedgerOptions{Replicas: 1}))
			return err
		}},
		{"delete its own ledger stream", func(ctx context.Context) error {
			return ljs.DeleteStream(ctx, LedgerPartyStreamName(secJob, AggregatorID))
		}},
		{"delete a bank's ledger stream", func(ctx context.Context) error { return ljs.DeleteStream(ctx, LedgerPartyStreamName(secJob, "bank-a")) }},
		{"purge its own ledger stream", func(ctx context.Context) error {
			st, err := ljs.Stream(ctx, LedgerPartyStreamName(secJob, AggregatorID))
			if err != nil {
				return err
			}
			return st.Purge(ctx)
		}},
		{"delete a message of its own ledger stream", func(ctx context.Context) error {
			st, err := ljs.Stream(ctx, LedgerPartyStreamName(secJob, AggregatorID))
			if err != nil {
				return err
			}
			return st.DeleteMsg(ctx, 1)
		}},
	} {
		refused("the aggregator's attempt to "+tc.what, tc.do)
	}

	// Even the administrator cannot delete an entry or purge a stream.
	ast, err := admin.Stream(ctx, LedgerPartyStreamName(secJob, "bank-a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ast.DeleteMsg(ctx, 1); err == nil {
		t.Error("the ledger administrator deleted an entry")
	}
	if err := ast.Purge(ctx); err == nil {
		t.Error("the ledger administrator purged a ledger stream")
	}

	lister := admin.StreamNames(ctx)
	var names []string
	for n := range lister.Name() {
		names = append(names, n)
	}
	if err := lister.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var want []string
	for n := range created {
		want = append(want, n)
	}
	sort.Strings(want)
	if !slices.Equal(names, want) {
		t.Errorf("the ledger account holds streams %v, want %v", names, want)
	}
	for n, at := range created {
		st, err := admin.Stream(ctx, n)
		if err != nil {
			t.Fatalf("ledger stream %s: %v", n, err)
		}
		if !st.CachedInfo().Created.Equal(at) {
			t.Errorf("ledger stream %s was recreated", n)
		}
	}
	for _, w := range secWriters {
		want := uint64(0)
		if w == "bank-a" {
			want = 1 + 2*uint64(len(secWriters))
		}
		if n := msgs(w); n != want {
			t.Errorf("%s's ledger stream holds %d messages, want %d", w, n, want)
		}
	}
	if got, err := ro.Entries(ctx); err != nil || len(got) != 1 || got[0].Client != "bank-a" {
		t.Fatalf("the auditor reading the ledger at the end: %v, %v", got, err)
	}
}

// The aggregator's durable mode in its own account: it creates and
// consumes the update stream, keeps its checkpoint and models; a bank's
// durable publish on its own update subject crosses the service import
// and is acknowledged by the aggregator's stream; one on another bank's
// subject is not. Another bank reaches none of the aggregator's state:
// what it opens under the same names is its own account's, empty of the
// aggregator's; its forged puts land there or nowhere; and an update
// bounced with a reply on the aggregator's API returns the stream's
// acknowledgement to the bank's own account.
func TestAccountsDurableAggregator(t *testing.T) {
	e := startSecureServer(t)
	agg, bank, other := e.connect(t, AggregatorID), e.connect(t, "bank-a"), e.connect(t, "bank-b")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	ulog, err := OpenUpdateLog(ctx, agg.nc, secJob, UpdateLogOptions{})
	if err != nil {
		t.Fatalf("aggregator opens the update log: %v", err)
	}
	store, err := OpenCheckpointStore(ctx, agg.nc, secJob, CheckpointStoreOptions{})
	if err != nil {
		t.Fatalf("aggregator opens its checkpoint store: %v", err)
	}
	if err := store.SaveState(ctx, []byte("state-1")); err != nil {
		t.Fatalf("save state: %v", err)
	}
	if err := store.SaveModel(ctx, 1, bytes.Repeat([]byte("m"), 300<<10)); err != nil { // several chunks
		t.Fatalf("save model: %v", err)
	}
	if err := store.SaveModel(ctx, 1, []byte("model one, again")); err != nil { // replaces the object
		t.Fatalf("save model again: %v", err)
	}
	if got, err := store.LoadState(ctx); err != nil || string(got) != "state-1" {
		t.Fatalf("load state: %q, %v", got, err)
	}
	if got, err := store.LoadModel(ctx, 1); err != nil || string(got) != "model one, again" {
		t.Fatalf("load model: %q, %v", got, err)
	}

	pub, err := NewDurableTransport(NewNATSTransport(bank.nc, false), secJob)
	if err != nil {
		t.Fatal(err)
	}
	data := sealT(t, Envelope{Job: secJob, Kind: KindUpdate, From: "bank-a", Round: 1, Seq: 1}, &Update{Round: 1, Weight: 1})
	if err := pub.Publish(ctx, Subject(secJob, KindUpdate, "bank-a"), data); err != nil {
		t.Fatalf("bank-a's durable publish: %v", err)
	}
	got := make(chan LoggedMsg, 4)
	stop, err := ulog.Consume(func(m LoggedMsg) { got <- m }, nil)
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	defer stop()
	m := next(t, got)
	if !bytes.Equal(m.Data, data) || m.Subject != Subject(secJob, KindUpdate, "bank-a") {
		t.Fatalf("consumed %s, not bank-a's update", m.Subject)
	}
	if err := m.Ack(ctx); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if _, err := ulog.Get(ctx, m.Seq); err != nil {
		t.Fatalf("get by position: %v", err)
	}
	for _, p := range []*party{agg, bank} {
		if errs := p.asyncErrors(t); len(errs) > 0 {
			t.Errorf("%s: asynchronous errors in durable mode: %v", p.id, errs)
		}
	}
	forged := sealT(t, Envelope{Job: secJob, Kind: KindUpdate, From: "bank-b", Round: 1, Seq: 1}, &Update{Round: 1, Weight: 1})
	sctx, c := context.WithTimeout(ctx, 2*time.Second)
	if err := pub.Publish(sctx, Subject(secJob, KindUpdate, "bank-b"), forged); err == nil {
		t.Error("bank-a's durable publish on bank-b's update subject was acknowledged")
	}
	c()

	// bank-a bounces an update off the aggregator's API: stored (its own
	// subject), acknowledged to the reply, which the service import made
	// bank-a's own: bank-a's JetStream has no such stream.
	for _, verb := range []string{"STREAM.DELETE.", "STREAM.PURGE."} {
		if err := bank.nc.PublishMsg(&nats.Msg{Subject: Subject(secJob, KindUpdate, "bank-a"), Reply: "$JS.API." + verb + UpdateStreamName(secJob), Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	bank.flush(t)
	ajs, err := jetstream.New(agg.nc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := ajs.Stream(ctx, UpdateStreamName(secJob))
		if err != nil {
			t.Fatalf("the update stream after bank-a's bounces: %v", err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 3 && info.State.FirstSeq == 1 && info.State.LastSeq == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("update stream state %+v, want bank-a's update and its two bounces", info.State)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// bank-b, with the same calls, reaches its own account only.
	short, cancelShort := context.WithTimeout(ctx, 5*time.Second)
	defer cancelShort()
	if l, err := OpenUpdateLog(short, other.nc, secJob, UpdateLogOptions{}); err == nil {
		bgot := make(chan LoggedMsg, 4)
		stop, err := l.Consume(func(m LoggedMsg) { bgot <- m }, nil)
		if err == nil {
			other.flush(t)
			select {
			case m := <-bgot:
				t.Errorf("bank-b's update log delivered %s", m.Subject)
			default:
			}
			stop()
		}
	}
	if s, err := OpenCheckpointStore(short, other.nc, secJob, CheckpointStoreOptions{}); err == nil {
		if got, err := s.LoadState(short); err == nil && got != nil {
			t.Errorf("bank-b's checkpoint store holds %q", got)
		}
	}
	for _, subj := range []string{"$KV." + CheckpointBucketName(secJob) + "." + checkpointKey, "$O." + ModelBucketName(secJob) + ".M." + base64.URLEncoding.EncodeToString([]byte(modelObject(1)))} {
		other.publish(t, subj, "forged")
	}
	other.flush(t)
	if got, err := store.LoadState(ctx); err != nil || string(got) != "state-1" {
		t.Fatalf("state after bank-b's attempts: %q, %v", got, err)
	}
	if got, err := store.LoadModel(ctx, 1); err != nil || string(got) != "model one, again" {
		t.Fatalf("model after bank-b's attempts: %q, %v", got, err)
	}
}

// Hello is a request through a service import: the bank hears the
// aggregator's answer, and nobody else does; a bank's hello as another
// bank has no responder; a key the server does not know cannot log in.
func TestAccountsHelloAndLogin(t *testing.T) {
	e := startSecureServer(t)
	agg, bank, other, aud := e.connect(t, AggregatorID), e.connect(t, "bank-a"), e.connect(t, "bank-b"), e.connect(t, AuditorID)
	sub, err := agg.nc.Subscribe(Subject(secJob, KindHello, "*"), func(m *nats.Msg) { m.Respond([]byte("welcome " + m.Subject)) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	agg.flush(t)
	heard := map[string]chan *nats.Msg{}
	for _, p := range []*party{other, aud, e.admin} {
		heard[p.id] = p.listen(t)
	}
	reply, err := bank.nc.Request(Subject(secJob, KindHello, "bank-a"), []byte("hi"), 5*time.Second)
	if err != nil {
		t.Fatalf("hello: %v", err)
	}
	if string(reply.Data) != "welcome "+Subject(secJob, KindHello, "bank-a") {
		t.Fatalf("reply %q", reply.Data)
	}
	for _, p := range []*party{agg, bank} {
		if errs := p.asyncErrors(t); len(errs) > 0 {
			t.Errorf("%s: asynchronous errors: %v", p.id, errs)
		}
	}
	if m, refused := bank.request(t, Subject(secJob, KindHello, "bank-b"), "hi"); !refused {
		t.Fatalf("bank-a's hello as bank-b answered: %q", m.Data)
	}
	agg.flush(t)
	for id, ch := range heard {
		e.admin.flush(t)
		other.flush(t)
		aud.flush(t)
		if got := drain(ch, "hi", "welcome"); len(got) > 0 {
			t.Errorf("%s heard the hello: %v", id, got)
		}
	}

	// A stranger's key, valid but not in the configuration.
	stranger, err := NewDeployment(secJob, []string{"bank-a"})
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/stranger.nk"
	c, _ := stranger.Credential("bank-a")
	if err := WriteSeedFile(path, secJob, c); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	nc, err := Connect(e.srv.ClientURL(), ConnectOptions{Creds: path, MaxReconnects: 1, OnError: func(err error) { errs <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := nc.FlushWithContext(ctx); err == nil {
		t.Fatal("a key unknown to the server logged in")
	}
	if nc.IsConnected() {
		t.Fatal("connected with an unknown key")
	}
}

// The server takes exactly JobAccounts' layout: every account with its
// exports (and the accounts they are for) and imports, none invalid.
func TestAccountsServerLayout(t *testing.T) {
	links := [][2]string{{"bank-a", "bank-b"}, {"bank-c", "bank-a"}}
	e := startSecureServerWith(t, secOptions{Links: links})
	want, err := JobAccounts(e.ring, AccountOptions{LedgerAdmin: e.dep.LedgerAdmin.PublicKey, Links: links})
	if err != nil {
		t.Fatal(err)
	}
	ns := e.srv.NATS()
	sys := ns.SystemAccount().GetName()
	for _, a := range want {
		z, err := ns.Accountz(&server.AccountzOptions{Account: a.Name})
		if err != nil {
			t.Fatalf("account %s: %v", a.Name, err)
		}
		info := z.Account
		if info.JetStream != a.JetStream {
			t.Errorf("account %s: JetStream %v, want %v", a.Name, info.JetStream, a.JetStream)
		}
		var gotE, wantE, gotI, wantI []string
		for _, x := range info.Exports {
			acc := slices.Clone(x.ApprovedAccounts)
			sort.Strings(acc)
			gotE = append(gotE, fmt.Sprintf("%s %s %v", x.Type, x.Subject, acc))
		}
		for _, x := range a.Exports {
			kind := "stream"
			if x.Service {
				kind = "service"
			}
			acc := slices.Clone(x.Accounts)
			sort.Strings(acc)
			wantE = append(wantE, fmt.Sprintf("%s %s %v", kind, x.Subject, acc))
		}
		for _, x := range info.Imports {
			if x.Account == sys {
				continue // the server's own imports of its system account
			}
			if x.Invalid {
				t.Errorf("account %s: invalid import %+v", a.Name, x.Import)
			}
			local := string(x.LocalSubject)
			if local == "" {
				local = string(x.Subject)
			}
			gotI = append(gotI, fmt.Sprintf("%s %s %s -> %s", x.Type, x.Account, x.Subject, local))
		}
		for _, x := range a.Imports {
			kind := "stream"
			if x.Service {
				kind = "service"
			}
			to := x.To
			if to == "" {
				to = x.Subject
			}
			wantI = append(wantI, fmt.Sprintf("%s %s %s -> %s", kind, x.Account, x.Subject, to))
		}
		for _, l := range [][]string{gotE, wantE, gotI, wantI} {
			sort.Strings(l)
		}
		if !slices.Equal(gotE, wantE) {
			t.Errorf("account %s's exports:\n%s", a.Name, setDiff(gotE, wantE))
		}
		if !slices.Equal(gotI, wantI) {
			t.Errorf("account %s's imports:\n%s", a.Name, setDiff(gotI, wantI))
		}
	}
}

// goldenRing is a keyring of fixed keys (seeds from fixed bytes) and the
// ledger administrator's public key, for golden files.
func goldenRing(t *testing.T) (*Keyring, string) {
	t.Helper()
	key := func(i byte) string {
		kp, err := nkeys.FromRawSeed(nkeys.PrefixByteUser, bytes.Repeat([]byte{i}, 32))
		if err != nil {
			t.Fatal(err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			t.Fatal(err)
		}
		return pub
	}
	parties := []Party{{ID: AggregatorID, Role: RoleAggregator, PublicKey: key(1)}}
	for i, b := range secBanks {
		parties = append(parties, Party{ID: b, Role: RoleBank, PublicKey: key(byte(2 + i))})
	}
	parties = append(parties, Party{ID: AuditorID, Role: RoleAuditor, PublicKey: key(9)})
	ring, err := NewKeyring(secJob, parties)
	if err != nil {
		t.Fatal(err)
	}
	return ring, key(10)
}

// The configuration `graphfed keys` writes for a fixed keyring and links
// is pinned (testdata/server.conf.golden; -update rewrites it), so that a
// change to the accounts layout shows in review; and nats-server reads it.
func TestServerConfigGolden(t *testing.T) {
	ring, admin := goldenRing(t)
	conf, err := ServerConfig(ring, ServerConfigOptions{ServerName: "gf-1", StoreDir: "/var/lib/graphfed/js", LedgerAdmin: admin,
		Links: [][2]string{{"bank-a", "bank-b"}, {"bank-b", "bank-a"}, {"bank-b", "bank-c"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "server.conf.golden")
	if *updateDigest {
		if err := os.WriteFile(path, conf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(conf, want) {
		gl, wl := strings.Split(string(conf), "\n"), strings.Split(string(want), "\n")
		t.Fatalf("the rendered configuration differs from %s (run with -update if the change is meant):\n%s", path, setDiff(gl, wl))
	}
	tmp := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(tmp, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := server.ProcessConfigFile(tmp); err != nil {
		t.Fatalf("nats-server rejects the golden configuration: %v", err)
	}
}
