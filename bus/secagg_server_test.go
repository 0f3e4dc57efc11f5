package bus

import (
	"crypto/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/secagg"
)

// saServer is a real server running the configuration `graphfed keys`
// writes with secure aggregation on, every party connected with its seed
// and listening on ">" in its own account.
type saServer struct {
	*secEnv
	ps    map[string]*party
	heard map[string]chan *nats.Msg
}

func startSAServer(t *testing.T) *saServer {
	t.Helper()
	e := startSecureServerWith(t, secOptions{SecAgg: true})
	s := &saServer{secEnv: e, ps: map[string]*party{}, heard: map[string]chan *nats.Msg{}}
	for _, id := range secRoles {
		s.ps[id] = e.connect(t, id)
		s.heard[id] = s.ps[id].listen(t)
	}
	return s
}

// settle flushes every party, so that everything published so far has
// been delivered and read.
func (s *saServer) settle(t *testing.T) {
	t.Helper()
	for _, id := range secRoles {
		s.ps[id].flush(t)
	}
	for _, id := range secRoles {
		s.ps[id].flush(t)
	}
}

// heardSA is what reached obs on the job's secure-aggregation subjects
// since the last call, its own publishes excepted when not from.
func (s *saServer) heardSA(obs string) []*nats.Msg {
	var out []*nats.Msg
	for {
		select {
		case m := <-s.heard[obs]:
			if strings.HasPrefix(m.Subject, "gf."+secJob+".sa.") {
				out = append(out, m)
			}
		default:
			return out
		}
	}
}

// saReceivers is the data flow of secure aggregation: who, besides its
// sender, receives a message on subject.
func saReceivers(subject string) []string {
	ps, _ := ParseSubject(subject)
	switch {
	case ps.Kind == KindSAShare:
		return []string{ps.To}
	case secAggFromAggregator(ps.Kind):
		return append(slices.Clone(secBanks), AuditorID)
	}
	return []string{AggregatorID}
}

// waitEvents waits until the server has counted want more events of each
// key than before, and fails if it counts more.
func (s *saServer) waitEvents(t *testing.T, before map[ServerEventKey]int64, want map[ServerEventKey]int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		now := s.srv.Events()
		done := true
		for k, n := range want {
			if now[k]-before[k] < n {
				done = false
			}
		}
		if done {
			for k, n := range want {
				if now[k]-before[k] != n {
					t.Errorf("server events %v: %d, want %d", k, now[k]-before[k], n)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server events: %v, before %v; want %v more", now, before, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A round of secure aggregation on a real server running the rendered
// configuration, every message published by its sender's own connection:
// each reaches exactly the parties of the data flow and opens there, and
// the unmasked sum is exact. Then a bank trying to get around the guard:
// publishing a masked input on another bank's subject and a share on
// someone else's pair, subscribing to another pair's shares and to
// another bank's reveal, and two reply-subject tricks (an answer of the
// share's recipient onto a third bank's subject, the aggregator's answer
// to its advertisement aimed at another bank's masked subject). Each is
// refused by the server and counted as a permissions violation, or lands
// in the trickster's own account only; nothing reaches anyone else; and
// what does get through the server on the bank's own subject (an
// envelope of another sender, a masked input naming another bank) is
// rejected by the aggregator's validator and counted.
func TestSecAggOnServer(t *testing.T) {
	s := startSAServer(t)
	r := newSARig(t, s.dep, &SecAggSchema{})
	r.round(func(stage string, msgs []sealed) map[string][]any {
		for _, m := range msgs {
			s.ps[m.from].nc.Publish(m.subject, m.data)
		}
		s.settle(t)
		out := map[string][]any{}
		got := map[string][]string{} // subject → receivers
		for _, obs := range secRoles {
			for _, m := range s.heardSA(obs) {
				if from := saSender(m.Subject); from == obs {
					continue // its own account
				}
				got[m.Subject] = append(got[m.Subject], obs)
				if obs == AuditorID {
					continue
				}
				_, body, err := r.eps[obs].Validator().Open(m.Subject, m.Data)
				if err != nil {
					t.Fatalf("%s: %s opening %s: %v", stage, obs, m.Subject, err)
				}
				out[obs] = append(out[obs], body)
			}
		}
		for _, m := range msgs {
			want := saReceivers(m.subject)
			sort.Strings(want)
			sort.Strings(got[m.subject])
			if !slices.Equal(got[m.subject], want) {
				t.Errorf("%s: %s reached %v, want %v", stage, m.subject, got[m.subject], want)
			}
		}
		return out
	})
	for _, id := range secRoles {
		if errs := s.ps[id].asyncErrors(t); len(errs) > 0 {
			t.Errorf("%s: errors in the legitimate round: %v", id, errs)
		}
	}

	a, b, c := "bank-a", "bank-b", "bank-c"
	sub := func(kind Kind, parts ...string) string { return Subject(secJob, kind, parts...) }
	pa, pb := s.ps[a], s.ps[b]
	before := s.srv.Events()
	aggRejects := r.eps[AggregatorID].Validator().Rejects()

	// Bank a's second round messages, on its own subjects.
	cfg2 := r.cfg
	cfg2.Round = 2
	ca, err := secagg.NewClient(cfg2, a, SecAggSigner(r.signers[a]), SecAggVerifier(r.ring), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := ca.Advertise()
	if err != nil {
		t.Fatal(err)
	}
	masked := secagg.MaskedInput{Job: secJob, Round: 2, Party: a, Vector: make([]uint32, r.enc.Len())}
	share := secagg.SealedShare{Job: secJob, Round: 2, From: a, To: b, Ciphertext: []byte("sealed")}
	raw := func(subject string, kind Kind, msg []byte) []byte {
		data, err := r.eps[a].Seal(kind, 2, &SecAggBody{Msg: msg})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}

	// 1. A masked input on another bank's subject (a spoofed sender).
	pa.publish(t, sub(KindSAMasked, b), string(raw(sub(KindSAMasked, b), KindSAMasked, masked.Encode())))
	// 2. A share on someone else's pair.
	forC := share
	forC.From, forC.To = b, c
	pa.publish(t, sub(KindSAShare, b, c), string(raw(sub(KindSAShare, b, c), KindSAShare, forC.Encode())))
	// 3, 4. Listening to another pair's shares and to another bank's reveal.
	spy := make(chan *nats.Msg, 64)
	for _, subj := range []string{sub(KindSAShare, b, c), sub(KindSAReveal, b), sub(KindSAShare, "*", c)} {
		if _, err := pa.nc.ChanSubscribe(subj, spy); err != nil {
			t.Fatal(err)
		}
	}
	pa.flush(t)
	bShare := r.seal(b, secagg.SealedShare{Job: secJob, Round: 2, From: b, To: c, Ciphertext: []byte("for c")})
	bReveal := r.seal(b, secagg.Reveal{Job: secJob, Round: 2, From: b})
	pb.publish(t, bShare.subject, string(bShare.data))
	pb.publish(t, bReveal.subject, string(bReveal.data))
	// 5. Reply tricks. (i) A share to b whose reply is c's masked subject,
	// answered by b; (ii) a's advertisement whose reply is b's masked
	// subject, answered by the aggregator.
	toB := r.seal(a, share)
	if err := pa.nc.PublishMsg(&nats.Msg{Subject: toB.subject, Reply: sub(KindSAMasked, c), Data: toB.data}); err != nil {
		t.Fatal(err)
	}
	adv := r.seal(a, ad)
	if err := pa.nc.PublishMsg(&nats.Msg{Subject: adv.subject, Reply: sub(KindSAMasked, b), Data: adv.data}); err != nil {
		t.Fatal(err)
	}
	// 6. Through its own subject: an envelope claiming another sender,
	// and a masked input naming another bank.
	otherSender := forge(t, r.signers[a], Envelope{Job: secJob, Kind: KindSAMasked, From: b, Round: 2, Seq: 99, Time: 1}, &SecAggBody{Msg: masked.Encode()})
	pa.publish(t, sub(KindSAMasked, a), string(otherSender))
	namingB := masked
	namingB.Party = b
	pa.publish(t, sub(KindSAMasked, a), string(raw(sub(KindSAMasked, a), KindSAMasked, namingB.Encode())))
	s.settle(t)

	// The answers to the reply tricks, by naive parties.
	heard := map[string][]*nats.Msg{}
	for _, id := range secRoles {
		heard[id] = s.heardSA(id)
	}
	var answered int
	for _, m := range heard[b] {
		if m.Subject == toB.subject {
			if m.Reply != sub(KindSAMasked, c) {
				t.Errorf("the share's reply reached b as %q", m.Reply)
			}
			pb.nc.Publish(m.Reply, []byte("b's answer"))
			answered++
		}
	}
	for _, m := range heard[AggregatorID] {
		if m.Subject == adv.subject {
			if m.Reply == sub(KindSAMasked, b) {
				t.Errorf("the advertisement's reply reached the aggregator unrewritten")
			}
			s.ps[AggregatorID].nc.Publish(m.Reply, []byte("the aggregator's answer"))
			answered++
		}
	}
	if answered != 2 {
		t.Fatalf("%d of the reply tricks' messages arrived, want 2", answered)
	}
	s.settle(t)
	for _, id := range secRoles {
		heard[id] = append(heard[id], s.heardSA(id)...)
	}

	// Who heard what: b and c their shares and the aggregator the
	// messages on a's and b's own subjects, nobody else anything.
	want := map[string][]string{
		AggregatorID: {bReveal.subject, adv.subject, sub(KindSAMasked, a), sub(KindSAMasked, a)},
		b:            {toB.subject},
		c:            {bShare.subject},
		// The aggregator's answer goes back to a's account, where a's
		// own deny-list keeps it from a's wildcard listener too.
		a: nil,
	}
	for _, id := range secRoles {
		var got []string
		for _, m := range heard[id] {
			if saSender(m.Subject) == id && id != a {
				continue
			}
			if id == a && m.Subject != sub(KindSAMasked, b) {
				continue // a's own publishes, in its own account
			}
			got = append(got, m.Subject)
		}
		sort.Strings(got)
		sort.Strings(want[id])
		if !slices.Equal(got, want[id]) {
			t.Errorf("%s heard:\n%s", id, setDiff(got, want[id]))
		}
	}
	select {
	case m := <-spy:
		t.Errorf("a's spy subscription heard %s", m.Subject)
	default:
	}

	// Refused and counted by the server: a's two publishes and b's
	// answer (publish allow-lists), a's three subscriptions (deny-list).
	s.waitEvents(t, before, map[ServerEventKey]int64{
		{ServerEventPermission, "publish"}:   3,
		{ServerEventPermission, "subscribe"}: 3,
	})
	aErrs := pa.asyncErrors(t)
	for _, w := range []string{
		"Permissions Violation for Publish to " + strconv.Quote(sub(KindSAMasked, b)),
		"Permissions Violation for Publish to " + strconv.Quote(sub(KindSAShare, b, c)),
		"Permissions Violation for Subscription to " + strconv.Quote(sub(KindSAShare, b, c)),
		"Permissions Violation for Subscription to " + strconv.Quote(sub(KindSAReveal, b)),
		"Permissions Violation for Subscription to " + strconv.Quote(sub(KindSAShare, "*", c)),
	} {
		if !slices.ContainsFunc(aErrs, func(e string) bool { return strings.Contains(e, w) }) {
			t.Errorf("a was not told %s; it heard %v", w, aErrs)
		}
	}
	if errs := pb.asyncErrors(t); len(errs) != 1 || !strings.Contains(errs[0], "Permissions Violation for Publish to "+strconv.Quote(sub(KindSAMasked, c))) {
		t.Errorf("b's answer onto c's subject: %v", errs)
	}

	// What passed the server on a's own subject: rejected by the
	// aggregator's validator, and counted. (The legitimate b reveal and
	// a advertisement of round 2 open.)
	v := r.eps[AggregatorID].Validator()
	var opened []string
	for _, m := range heard[AggregatorID] {
		if m.Subject == sub(KindSAMasked, a) {
			if _, _, err := v.Open(m.Subject, m.Data); ReasonOf(err) != ReasonSubject {
				t.Errorf("the aggregator opening a's trick on its own subject: %v", err)
			}
			continue
		}
		if _, _, err := v.Open(m.Subject, m.Data); err != nil {
			t.Errorf("the aggregator opening %s: %v", m.Subject, err)
		}
		opened = append(opened, m.Subject)
	}
	if got := v.Rejects()[ReasonSubject] - aggRejects[ReasonSubject]; got != 2 {
		t.Errorf("the aggregator counted %d subject rejects, want 2: %s", got, v.RejectSummary())
	}
	if len(opened) != 2 {
		t.Errorf("the aggregator opened %v", opened)
	}
}

// saSender is the sender a secure-aggregation subject names: the bank of
// a bank kind, a share's sender, the aggregator for its own kinds.
func saSender(subject string) string {
	ps, _ := ParseSubject(subject)
	if secAggFromAggregator(ps.Kind) {
		return AggregatorID
	}
	return ps.From
}
