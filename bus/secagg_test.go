package bus

import (
	"crypto/rand"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"graphfed/secagg"
)

func TestSecAggSubjects(t *testing.T) {
	for _, c := range []struct {
		kind    Kind
		parties []string
		want    string
		parsed  ParsedSubject
		channel string
	}{
		{KindSAAdv, []string{"bank-a"}, "gf.j1.sa.adv.bank-a", ParsedSubject{"j1", KindSAAdv, "bank-a", ""}, "sa.adv"},
		{KindSAKeys, nil, "gf.j1.sa.keys", ParsedSubject{"j1", KindSAKeys, "", ""}, "sa.keys"},
		{KindSAShare, []string{"bank-a", "bank-b"}, "gf.j1.sa.share.bank-a.bank-b", ParsedSubject{"j1", KindSAShare, "bank-a", "bank-b"}, "sa.share"},
		{KindSAMasked, []string{"bank-c"}, "gf.j1.sa.masked.bank-c", ParsedSubject{"j1", KindSAMasked, "bank-c", ""}, "sa.masked"},
		{KindSAList, nil, "gf.j1.sa.list", ParsedSubject{"j1", KindSAList, "", ""}, "sa.list"},
		{KindSAReveal, []string{"bank-b"}, "gf.j1.sa.reveal.bank-b", ParsedSubject{"j1", KindSAReveal, "bank-b", ""}, "sa.reveal"},
	} {
		got, err := SecAggSubject("j1", c.kind, c.parties...)
		if err != nil || got != c.want || got != Subject("j1", c.kind, c.parties...) {
			t.Errorf("SecAggSubject(%s, %v) = %q, %v; want %q, the one formatter's", c.kind, c.parties, got, err, c.want)
		}
		if p, err := ParseSubject(got); err != nil || p != c.parsed {
			t.Errorf("ParseSubject(%q) = %+v, %v; want %+v", got, p, err, c.parsed)
		}
		if ch := ChannelOf(got); ch != c.channel {
			t.Errorf("ChannelOf(%q) = %q, want %q", got, ch, c.channel)
		}
		if !IsSecAgg(c.kind) || !slices.Contains(SecAggKinds(), c.kind) {
			t.Errorf("%s is not listed as a secure-aggregation kind", c.kind)
		}
	}
	for _, c := range []struct {
		kind    Kind
		parties []string
	}{
		{KindUpdate, []string{"bank-a"}},             // not secure aggregation's
		{KindSAAdv, nil},                             // a bank kind names its bank
		{KindSAKeys, []string{"bank-a"}},             // the aggregator's kinds name nobody
		{KindSAShare, []string{"bank-a"}},            // a share names both ends
		{KindSAShare, []string{"bank-a", "bank-a"}},  // never to itself
		{KindSAMasked, []string{"Bank-A"}},           // ids are ids
		{KindSAShare, []string{"bank-a", "b.c"}},     // no extra tokens
		{KindSAReveal, []string{"bank-a", "bank-b"}}, // too many
	} {
		if s, err := SecAggSubject("j1", c.kind, c.parties...); err == nil {
			t.Errorf("SecAggSubject(%s, %v) = %q, want an error", c.kind, c.parties, s)
		}
	}
	for _, c := range []struct {
		subj string
		ok   bool
		want ParsedSubject
	}{
		{"gf.j1.sa.share.a.b.c", false, ParsedSubject{}},
		{"gf.j1.sa.adv.Bank", false, ParsedSubject{}},
		{"gf.j1.sa", true, ParsedSubject{"j1", "sa", "", ""}}, // no secure-aggregation kind, as before
		{"gf.j1.sa.invented.x", true, ParsedSubject{"j1", "sa.invented", "x", ""}},
		{"gf.j1.update.sa", true, ParsedSubject{"j1", KindUpdate, "sa", ""}}, // "sa" as an id elsewhere is an id
	} {
		got, err := ParseSubject(c.subj)
		if (err == nil) != c.ok || c.ok && got != c.want {
			t.Errorf("ParseSubject(%q) = %+v, %v", c.subj, got, err)
		}
	}
	if ch := ChannelOf("gf.j1.sa.invented.x"); ch != ChannelOther {
		t.Errorf("ChannelOf of an invented kind = %q", ch)
	}
	if got := SecAggSubjects("j1", "bank-a"); !slices.Equal(got, []string{"gf.j1.sa.keys", "gf.j1.sa.list", "gf.j1.sa.share.*.bank-a"}) {
		t.Errorf("a bank's subjects: %v", got)
	}
	if got := SecAggSubjects("j1", AggregatorID); !slices.Equal(got, []string{"gf.j1.sa.adv.*", "gf.j1.sa.masked.*", "gf.j1.sa.reveal.*"}) {
		t.Errorf("the aggregator's subjects: %v", got)
	}
}

// saFlows is the secure-aggregation part of a layout, as lines: exports,
// imports, and each user's publish allow-list and subscribe deny-list
// entries on sa subjects.
func saFlows(accounts []Account) []string {
	var out []string
	sa := func(s string) bool { return strings.Contains(s, ".sa.") }
	for _, a := range accounts {
		for _, e := range a.Exports {
			if sa(e.Subject) {
				out = append(out, fmt.Sprintf("%s export service=%v %s %v", a.Name, e.Service, e.Subject, e.Accounts))
			}
		}
		for _, im := range a.Imports {
			if sa(im.Subject) {
				out = append(out, fmt.Sprintf("%s import service=%v %s from %s", a.Name, im.Service, im.Subject, im.Account))
			}
		}
		for _, u := range a.Users {
			for _, p := range u.Publish {
				if sa(p) {
					out = append(out, fmt.Sprintf("%s pub %s", u.ID, p))
				}
			}
			for _, d := range u.SubscribeDeny {
				out = append(out, fmt.Sprintf("%s deny-sub %s", u.ID, d))
			}
		}
	}
	sort := slices.Sort[[]string]
	sort(out)
	return out
}

// wantSAFlows is the expected secure-aggregation layout of banks with
// pairs, written from the data flow: the bank kinds as service imports of
// the bank's own subject, keys and list to every bank and the auditor,
// each pair's share from its sender to its recipient alone; a bank
// publishes its own and its pairs', and may subscribe to no other bank's.
func wantSAFlows(job string, banks []string, pairs [][2]string) []string {
	var out []string
	readers := []string{}
	for _, b := range banks {
		readers = append(readers, BankAccount(b))
	}
	readers = append(readers, AuditorAccount)
	for _, k := range []string{"keys", "list"} {
		subj := "gf." + job + ".sa." + k
		out = append(out, fmt.Sprintf("AGGREGATOR export service=false %s %v", subj, readers),
			fmt.Sprintf("AUDITOR import service=false %s from AGGREGATOR", subj))
		for _, b := range banks {
			out = append(out, fmt.Sprintf("%s import service=false %s from AGGREGATOR", BankAccount(b), subj))
		}
	}
	for _, b := range banks {
		for _, k := range []string{"adv", "masked", "reveal"} {
			subj := "gf." + job + ".sa." + k + "." + b
			out = append(out, fmt.Sprintf("AGGREGATOR export service=true %s [%s]", subj, BankAccount(b)),
				fmt.Sprintf("%s import service=true %s from AGGREGATOR", BankAccount(b), subj),
				fmt.Sprintf("%s pub %s", b, subj))
		}
		for _, o := range banks {
			if o != b {
				for _, k := range []string{"adv." + o, "masked." + o, "reveal." + o, "share.*." + o} {
					out = append(out, fmt.Sprintf("%s deny-sub gf.%s.sa.%s", b, job, k))
				}
			}
		}
	}
	for _, p := range pairs {
		subj := "gf." + job + ".sa.share." + p[0] + "." + p[1]
		out = append(out, fmt.Sprintf("%s export service=false %s [%s]", BankAccount(p[0]), subj, BankAccount(p[1])),
			fmt.Sprintf("%s import service=false %s from %s", BankAccount(p[1]), subj, BankAccount(p[0])),
			fmt.Sprintf("%s pub %s", p[0], subj))
	}
	slices.Sort(out)
	return out
}

// The rendered layout with secure aggregation: off, it is the layout
// without (no sa subject, no subscribe list, and the configuration
// byte for byte); on, exactly the flows of wantSAFlows, with every pair by
// default or the pairs given, and the rest of the layout unchanged.
func TestSecAggAccounts(t *testing.T) {
	ring, admin := goldenRing(t)
	every := [][2]string{}
	for _, a := range secBanks {
		for _, b := range secBanks {
			if a != b {
				every = append(every, [2]string{a, b})
			}
		}
	}
	some := [][2]string{{"bank-a", "bank-b"}, {"bank-b", "bank-a"}, {"bank-c", "bank-a"}}
	base, err := JobAccounts(ring, AccountOptions{LedgerAdmin: admin})
	if err != nil {
		t.Fatal(err)
	}
	if f := saFlows(base); len(f) != 0 {
		t.Fatalf("secure aggregation off, and the layout has %v", f)
	}
	for _, c := range []struct {
		name  string
		pairs [][2]string
		want  [][2]string
	}{
		{"every pair", nil, every},
		{"some pairs", some, some},
		{"no pair", [][2]string{}, nil},
		{"duplicates", append(slices.Clone(some), some[0]), some},
	} {
		t.Run(c.name, func(t *testing.T) {
			on, err := JobAccounts(ring, AccountOptions{LedgerAdmin: admin, SecAgg: true, SecAggPairs: c.pairs})
			if err != nil {
				t.Fatal(err)
			}
			got, want := saFlows(on), wantSAFlows(secJob, secBanks, c.want)
			if !slices.Equal(got, want) {
				t.Errorf("secure-aggregation flows:\n%s", setDiff(got, want))
			}
			// Everything else is the layout without secure aggregation.
			for i := range on {
				strip(&on[i])
			}
			if fmt.Sprint(on) != fmt.Sprint(base) {
				t.Errorf("the rest of the layout changed:\n%v\n%v", on, base)
			}
			conf, err := ServerConfig(ring, ServerConfigOptions{LedgerAdmin: admin, SecAgg: true, SecAggPairs: c.pairs})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "server.conf")
			if err := os.WriteFile(path, conf, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := server.ProcessConfigFile(path); err != nil {
				t.Fatalf("nats-server rejects the configuration: %v", err)
			}
		})
	}
	off, err := ServerConfig(ring, ServerConfigOptions{LedgerAdmin: admin})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(off), ".sa.") || strings.Contains(string(off), "subscribe") {
		t.Error("secure aggregation off, and the configuration names it")
	}
	for _, o := range []AccountOptions{
		{SecAggPairs: some}, // pairs without secure aggregation
		{SecAgg: true, SecAggPairs: [][2]string{{"bank-a", "bank-z"}}},
		{SecAgg: true, SecAggPairs: [][2]string{{"bank-a", "bank-a"}}},
		{SecAgg: true, SecAggPairs: [][2]string{{AggregatorID, "bank-a"}}},
	} {
		if _, err := JobAccounts(ring, o); err == nil {
			t.Errorf("JobAccounts(%+v) accepted", o)
		}
	}
}

// strip removes the secure-aggregation flows from a.
func strip(a *Account) {
	sa := func(s string) bool { return strings.Contains(s, ".sa.") }
	a.Exports = slices.DeleteFunc(a.Exports, func(e Export) bool { return sa(e.Subject) })
	a.Imports = slices.DeleteFunc(a.Imports, func(i Import) bool { return sa(i.Subject) })
	for i := range a.Users {
		a.Users[i].Publish = slices.DeleteFunc(a.Users[i].Publish, sa)
		a.Users[i].SubscribeDeny = nil
	}
	if len(a.Exports) == 0 {
		a.Exports = nil
	}
	if len(a.Imports) == 0 {
		a.Imports = nil
	}
}

// saRig is a job with secure aggregation: every party's endpoint (signed,
// validated with the keyring) and a round of the protocol's state
// machines, the banks' identities their NKeys (SecAggSigner,
// SecAggVerifier).
type saRig struct {
	t       *testing.T
	dep     *Deployment
	ring    *Keyring
	signers map[string]*Signer
	eps     map[string]*Endpoint
	cfg     secagg.Config
	enc     secagg.Encoding
	clients map[string]*secagg.Client
	server  *secagg.Server
	inputs  map[string][]uint32
}

const saDim = 16

func newSARig(t *testing.T, dep *Deployment, sa *SecAggSchema) *saRig {
	t.Helper()
	ring, err := dep.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	banks := ring.Banks()
	r := &saRig{t: t, dep: dep, ring: ring, signers: testSigners(t, dep), eps: map[string]*Endpoint{},
		clients: map[string]*secagg.Client{}, inputs: map[string][]uint32{}}
	senders := map[string]bool{}
	for _, b := range banks {
		senders[b] = true
	}
	for _, id := range append([]string{AggregatorID}, banks...) {
		var s *SecAggSchema
		if sa != nil {
			c := *sa
			s = &c
		}
		ep, err := NewEndpoint(EndpointConfig{Job: dep.Job, ID: id, Signer: r.signers[id],
			Schema: Schema{NumParams: saDim, Keyring: ring, Senders: senders, SecAgg: s}}, NewInmemNetwork().Transport())
		if err != nil {
			t.Fatal(err)
		}
		r.eps[id] = ep
	}
	if r.enc, err = secagg.NewEncoding(2, 50, len(banks), saDim, 32); err != nil {
		t.Fatal(err)
	}
	r.cfg = secagg.Config{Job: dep.Job, Round: 1, Aggregator: AggregatorID, Parties: slices.Sorted(slices.Values(banks)),
		Threshold: len(banks)/2 + 1, VectorLen: r.enc.Len(), Bits: r.enc.Bits}
	if r.server, err = secagg.NewServer(r.cfg, SecAggSigner(r.signers[AggregatorID]), SecAggVerifier(ring)); err != nil {
		t.Fatal(err)
	}
	for i, b := range banks {
		if r.clients[b], err = secagg.NewClient(r.cfg, b, SecAggSigner(r.signers[b]), SecAggVerifier(ring), rand.Reader); err != nil {
			t.Fatal(err)
		}
		x := make([]float32, saDim)
		for j := range x {
			x[j] = float32(math.Sin(float64(3*i+j))) * 0.4
		}
		if r.inputs[b], err = r.enc.Encode(x, uint64(5+i), rand.Reader); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// sealed is one message on the wire: its subject, its sender and the
// sealed envelope.
type sealed struct {
	subject, from string
	data          []byte
}

// seal is from's envelope of msg on its own subject (SecAggOutgoing).
func (r *saRig) seal(from string, msg any) sealed {
	r.t.Helper()
	o, err := SecAggOutgoing(r.dep.Job, from, msg)
	if err != nil {
		r.t.Fatal(err)
	}
	data, err := r.eps[from].Seal(o.Kind, o.Round, o.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return sealed{o.Subject, from, data}
}

// open is to's validator opening m.
func (r *saRig) open(to string, m sealed) any {
	r.t.Helper()
	_, body, err := r.eps[to].Validator().Open(m.subject, m.data)
	if err != nil {
		r.t.Fatalf("%s opening %s from %s: %v", to, m.subject, m.from, err)
	}
	return body
}

// round plays the protocol with every message through the bus's sealing
// and validation, delivered by deliver (which returns what each recipient
// opened), and checks the unmasked sum against the plain one.
func (r *saRig) round(deliver func(stage string, msgs []sealed) map[string][]any) {
	t := r.t
	banks := r.cfg.Parties
	var advs []sealed
	for _, b := range banks {
		ad, err := r.clients[b].Advertise()
		if err != nil {
			t.Fatal(err)
		}
		advs = append(advs, r.seal(b, ad))
	}
	for _, body := range deliver("adv", advs)[AggregatorID] {
		if err := r.server.AddAdvertisement(*body.(*secagg.SignedAdvertisement)); err != nil {
			t.Fatal(err)
		}
	}
	ads, err := r.server.Keys()
	if err != nil {
		t.Fatal(err)
	}
	got := deliver("keys", []sealed{r.seal(AggregatorID, SecAggKeys{Round: r.cfg.Round, Ads: ads})})
	var shares []sealed
	for _, b := range banks {
		if len(got[b]) != 1 {
			t.Fatalf("%s opened %d key messages", b, len(got[b]))
		}
		for _, ad := range got[b][0].(*SecAggKeys).Ads {
			if err := r.clients[b].AcceptKey(ad); err != nil {
				t.Fatal(err)
			}
		}
		ss, err := r.clients[b].ShareKeys()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			shares = append(shares, r.seal(b, s))
		}
	}
	var masked []sealed
	opened := deliver("share", shares)
	for _, b := range banks {
		if len(opened[b]) != len(banks)-1 {
			t.Fatalf("%s opened %d shares, want %d", b, len(opened[b]), len(banks)-1)
		}
		for _, body := range opened[b] {
			if err := r.clients[b].AcceptShare(*body.(*secagg.SealedShare)); err != nil {
				t.Fatal(err)
			}
		}
		m, err := r.clients[b].MaskInput(r.inputs[b])
		if err != nil {
			t.Fatal(err)
		}
		masked = append(masked, r.seal(b, &m))
	}
	for _, body := range deliver("masked", masked)[AggregatorID] {
		if err := r.server.AddMaskedInput(*body.(*secagg.MaskedInput)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := r.server.CloseInputs()
	if err != nil {
		t.Fatal(err)
	}
	var reveals []sealed
	for b, bodies := range deliver("list", []sealed{r.seal(AggregatorID, &l)}) {
		if b == AggregatorID || b == AuditorID {
			continue
		}
		rev, err := r.clients[b].Unmask(*bodies[0].(*secagg.SignedList))
		if err != nil {
			t.Fatal(err)
		}
		reveals = append(reveals, r.seal(b, rev))
	}
	for _, body := range deliver("reveal", reveals)[AggregatorID] {
		if err := r.server.AddReveal(*body.(*secagg.Reveal)); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := r.server.Result()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint32, r.cfg.VectorLen)
	for _, b := range banks {
		for j, v := range r.inputs[b] {
			want[j] += v // b = 32: mod 2^32
		}
	}
	if !slices.Equal(sum, want) {
		t.Fatalf("unmasked sum %v, want the plain sum %v", sum, want)
	}
}

// localDelivery opens each message with the validator of every party the
// data flow sends it to.
func (r *saRig) localDelivery(stage string, msgs []sealed) map[string][]any {
	out := map[string][]any{}
	for _, m := range msgs {
		ps, err := ParseSubject(m.subject)
		if err != nil {
			r.t.Fatal(err)
		}
		var to []string
		switch {
		case ps.Kind == KindSAShare:
			to = []string{ps.To}
		case secAggFromAggregator(ps.Kind):
			to = r.cfg.Parties
		default:
			to = []string{AggregatorID}
		}
		for _, id := range to {
			out[id] = append(out[id], r.open(id, m))
		}
	}
	return out
}

// A whole round through the bus's envelopes: every message sealed by its
// sender's endpoint on its own subject, opened by its recipients'
// validators, and the protocol's sum exact; the identities are the
// parties' NKeys through SecAggSigner and SecAggVerifier.
func TestSecAggRoundOverEnvelopes(t *testing.T) {
	dep, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	r := newSARig(t, dep, &SecAggSchema{})
	r.round(r.localDelivery)
	for id, ep := range r.eps {
		if n := ep.Validator().TotalRejects(); n != 0 {
			t.Errorf("%s rejected %d: %s", id, n, ep.Validator().RejectSummary())
		}
	}
}

// What the validator refuses of secure aggregation, each counted under its
// reason: everything while the job has it off; a message on another
// sender's subject, or naming another sender, job or round inside; a
// share on another pair or for another recipient; the aggregator's kinds
// from a bank; a body over its kind's limit; garbage.
func TestSecAggValidator(t *testing.T) {
	dep, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	r := newSARig(t, dep, &SecAggSchema{Words: saDim + 1})
	a, b := r.cfg.Parties[0], r.cfg.Parties[1]
	ad, err := r.clients[a].Advertise()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range r.cfg.Parties[1:] {
		ad, _ := r.clients[x].Advertise()
		r.server.AddAdvertisement(ad)
	}
	r.server.AddAdvertisement(ad)
	ads, err := r.server.Keys()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range r.cfg.Parties {
		for _, k := range ads {
			if err := r.clients[x].AcceptKey(k); err != nil {
				t.Fatal(err)
			}
		}
	}
	shares, err := r.clients[a].ShareKeys()
	if err != nil {
		t.Fatal(err)
	}
	var toB secagg.SealedShare
	for _, s := range shares {
		if s.To == b {
			toB = s
		}
	}
	for _, x := range r.cfg.Parties[1:] {
		ss, _ := r.clients[x].ShareKeys()
		for _, s := range ss {
			if s.To == a {
				r.clients[a].AcceptShare(s)
			}
		}
	}
	masked, err := r.clients[a].MaskInput(r.inputs[a])
	if err != nil {
		t.Fatal(err)
	}
	// raw seals body as kind from sender on subject, whatever they say.
	raw := func(from string, subject string, kind Kind, round uint64, body any) sealed {
		data, err := r.eps[from].Seal(kind, round, body)
		if err != nil {
			t.Fatal(err)
		}
		return sealed{subject, from, data}
	}
	s := func(kind Kind, parts ...string) string { return Subject(secJob, kind, parts...) }
	msg := func(b []byte) *SecAggBody { return &SecAggBody{Msg: b} }
	otherJob := masked
	otherJob.Job = "j2"
	otherRound := masked
	otherRound.Round = 2
	otherParty := masked
	otherParty.Party = b
	long := masked
	long.Vector = append(slices.Clone(masked.Vector), 0)
	shareForC := toB
	shareForC.To = r.cfg.Parties[2]
	fakeList := secagg.SignedList{List: secagg.List{Job: secJob, Round: 1, Survivors: []string{a}}, Sig: []byte{1}}
	for _, c := range []struct {
		name   string
		to     string
		m      sealed
		reason string
	}{
		{"masked on another bank's subject", AggregatorID, raw(a, s(KindSAMasked, b), KindSAMasked, 1, msg(masked.Encode())), ReasonSubject},
		{"masked naming another bank", AggregatorID, raw(a, s(KindSAMasked, a), KindSAMasked, 1, msg(otherParty.Encode())), ReasonSubject},
		{"masked of another job", AggregatorID, raw(a, s(KindSAMasked, a), KindSAMasked, 1, msg(otherJob.Encode())), ReasonSubject},
		{"masked of another round", AggregatorID, raw(a, s(KindSAMasked, a), KindSAMasked, 1, msg(otherRound.Encode())), ReasonRound},
		{"masked of the wrong length", AggregatorID, raw(a, s(KindSAMasked, a), KindSAMasked, 1, msg(long.Encode())), ReasonShape},
		{"masked over its limit", AggregatorID, raw(a, s(KindSAMasked, a), KindSAMasked, 1, msg(make([]byte, 8*saDim+4096))), ReasonOversized},
		{"advertisement on another bank's subject", AggregatorID, raw(a, s(KindSAAdv, b), KindSAAdv, 1, msg(ad.Encode())), ReasonSubject},
		{"advertisement over its limit", AggregatorID, raw(a, s(KindSAAdv, a), KindSAAdv, 1, msg(make([]byte, 2000))), ReasonOversized},
		{"advertisement as garbage", AggregatorID, raw(a, s(KindSAAdv, a), KindSAAdv, 1, msg([]byte("gfsa1:adv junk"))), ReasonGarbage},
		{"advertisement from the aggregator", AggregatorID, raw(AggregatorID, s(KindSAAdv, AggregatorID), KindSAAdv, 1, msg(ad.Encode())), ReasonSender},
		{"share on another's pair", r.cfg.Parties[2], raw(a, s(KindSAShare, b, r.cfg.Parties[2]), KindSAShare, 1, msg(shareForC.Encode())), ReasonSubject},
		{"share for someone else", r.cfg.Parties[2], raw(a, s(KindSAShare, a, b), KindSAShare, 1, msg(toB.Encode())), ReasonSubject},
		{"share whose inside names another recipient", b, raw(a, s(KindSAShare, a, b), KindSAShare, 1, msg(shareForC.Encode())), ReasonSubject},
		{"share from a bank to itself", a, raw(a, s(KindSAShare, a, a), KindSAShare, 1, msg(toB.Encode())), ReasonSubject},
		{"list from a bank", b, raw(a, s(KindSAList), KindSAList, 1, msg(fakeList.Encode())), ReasonSender},
		{"keys from a bank", b, raw(a, s(KindSAKeys), KindSAKeys, 1, &SecAggBody{Ads: [][]byte{ad.Encode()}}), ReasonSender},
		{"keys with a message instead", b, raw(AggregatorID, s(KindSAKeys), KindSAKeys, 1, msg(ad.Encode())), ReasonGarbage},
		{"keys with one party twice", b, raw(AggregatorID, s(KindSAKeys), KindSAKeys, 1, &SecAggBody{Ads: [][]byte{ad.Encode(), ad.Encode()}}), ReasonSender},
		{"reveal on another bank's subject", AggregatorID, raw(a, s(KindSAReveal, b), KindSAReveal, 1, msg((&secagg.Reveal{Job: secJob, Round: 1, From: a}).Encode())), ReasonSubject},
		{"reveal naming another bank", AggregatorID, raw(a, s(KindSAReveal, a), KindSAReveal, 1, msg((&secagg.Reveal{Job: secJob, Round: 1, From: b}).Encode())), ReasonSubject},
		{"kind and subject disagree", AggregatorID, raw(a, s(KindSAReveal, a), KindSAMasked, 1, msg(masked.Encode())), ReasonSubject},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := r.eps[c.to].Validator()
			before := v.Rejects()[c.reason]
			_, body, err := v.Open(c.m.subject, c.m.data)
			if err == nil || ReasonOf(err) != c.reason {
				t.Fatalf("opened %T, %v; want a %s reject", body, err, c.reason)
			}
			if v.Rejects()[c.reason] != before+1 {
				t.Errorf("not counted: %s", v.RejectSummary())
			}
		})
	}
	// The legitimate ones open, into the secagg types.
	if body := r.open(AggregatorID, r.seal(a, &masked)); !slices.Equal(body.(*secagg.MaskedInput).Vector, masked.Vector) {
		t.Error("the masked input opened differently")
	}
	if body := r.open(b, r.seal(a, toB)); body.(*secagg.SealedShare).From != a {
		t.Error("the share opened differently")
	}
	// A sender cannot make an envelope on someone else's subject.
	for _, m := range []any{otherParty, fakeList} {
		if _, err := SecAggOutgoing(secJob, a, m); err == nil {
			t.Errorf("SecAggOutgoing from %s of %T accepted", a, m)
		}
	}
	if _, err := SecAggOutgoing(secJob, b, toB); err == nil {
		t.Error("SecAggOutgoing: bank-b sending bank-a's share accepted")
	}
	if _, err := SecAggOutgoing("j2", a, masked); err == nil {
		t.Error("SecAggOutgoing: a message of another job accepted")
	}
	// Off: every kind refused, counted as a subject reject.
	off := newSARig(t, dep, nil)
	m := off.seal(a, &masked)
	if _, _, err := off.eps[AggregatorID].Validator().Open(m.subject, m.data); ReasonOf(err) != ReasonSubject {
		t.Errorf("secure aggregation off: %v", err)
	}
	// Never answered.
	if err := r.eps[AggregatorID].Respond(Msg{Subject: m.subject, Reply: "_INBOX.x"}, KindRound, &RoundOpen{}); err == nil {
		t.Error("the aggregator answered a secure-aggregation message")
	}
}

// The limits hold real messages of the longest ids and the largest cohort
// they are sized for, and bound what they should.
func TestSecAggLimits(t *testing.T) {
	const n = 5
	var banks []string
	for i := range n {
		banks = append(banks, fmt.Sprintf("%s%d", strings.Repeat("b", 63), i))
	}
	dep, err := NewDeployment(strings.Repeat("j", 64), banks)
	if err != nil {
		t.Fatal(err)
	}
	r := newSARig(t, dep, &SecAggSchema{Cohort: n})
	sizes := map[Kind]int{}
	r.round(func(stage string, msgs []sealed) map[string][]any {
		for _, m := range msgs {
			ps, _ := ParseSubject(m.subject)
			sizes[ps.Kind] = max(sizes[ps.Kind], len(m.data))
		}
		return r.localDelivery(stage, msgs)
	})
	s := r.eps[AggregatorID].Validator().schema
	for _, k := range SecAggKinds() {
		if sizes[k] == 0 || sizes[k] > s.SecAggLimit(k) {
			t.Errorf("%s: largest %d bytes, limit %d", k, sizes[k], s.SecAggLimit(k))
		}
		t.Logf("%-9s largest %6d bytes, limit %6d", k, sizes[k], s.SecAggLimit(k))
	}
	if s.SecAggLimit(KindUpdate) != 0 {
		t.Error("a limit for updates")
	}
	big := Schema{NumParams: 1 << 20, SecAgg: &SecAggSchema{Cohort: 30}}
	if l, want := big.SecAggLimit(KindSAMasked), 4*(1<<20+2); l < want || l > want+8<<10 {
		t.Errorf("masked limit at 2^20 parameters, 30 banks: %d, want 4·(params+2) = %d plus a small header", l, want)
	}
	if l := (Schema{SecAgg: &SecAggSchema{Cohort: 1 << 20}}).SecAggLimit(KindSAKeys); l != secAggEnvelope+MaxSecAggCohort*secAggAdv {
		t.Errorf("keys limit of an oversized cohort: %d", l)
	}
}
