package aggregator

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"graphfed/bus"
	"graphfed/secagg"
)

// edKeys sign and verify secure aggregation with in-memory Ed25519 keys.
type edKeys map[string]ed25519.PrivateKey

type edSigner struct{ k ed25519.PrivateKey }

func (s edSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.k, msg), nil }

func (k edKeys) Verify(party string, msg, sig []byte) error {
	p, ok := k[party]
	if !ok {
		return fmt.Errorf("no key for %s", party)
	}
	if !ed25519.Verify(p.Public().(ed25519.PublicKey), msg, sig) {
		return errors.New("bad signature")
	}
	return nil
}

func newEdKeys(ids ...string) edKeys {
	k := edKeys{}
	for i, id := range ids {
		seed := make([]byte, ed25519.SeedSize)
		seed[0] = byte(i + 1)
		k[id] = ed25519.NewKeyFromSeed(seed)
	}
	return k
}

// secureRig drives a secure machine and one secagg.Client per bank by
// hand, the way the agent core does.
type secureRig struct {
	t       *testing.T
	m       *Machine
	keys    edKeys
	clients map[string]*secagg.Client
	ann     *bus.SecAggRound
	enc     secagg.Encoding
	now     float64
}

func newSecureRig(t *testing.T, banks []string, cfg Config) *secureRig {
	keys := newEdKeys(append([]string{bus.AggregatorID}, banks...)...)
	cfg.MinClients = len(banks)
	cfg.Contract = Contract{Clip: 10}
	cfg.SecAgg = SecAgg{On: true, Job: "j", Signer: edSigner{keys[bus.AggregatorID]}, Verifier: keys,
		InputWait: 5 * time.Second, RevealWait: 5 * time.Second}
	r := &secureRig{t: t, m: newTestMachine(t, cfg), keys: keys}
	for i, b := range banks {
		r.step(join(b, float64(i)*0.01))
	}
	return r
}

func (r *secureRig) step(ev Event) []Action {
	r.t.Helper()
	acts := r.m.Step(ev)
	for _, a := range acts {
		if o, ok := a.(OpenRound); ok && o.SecAgg != nil {
			r.open(o)
		}
	}
	return acts
}

func (r *secureRig) open(o OpenRound) {
	r.t.Helper()
	cfg, enc, err := o.SecAgg.Protocol("j", o.Round)
	if err != nil {
		r.t.Fatal(err)
	}
	r.ann, r.enc, r.clients = o.SecAgg, enc, map[string]*secagg.Client{}
	for _, id := range o.SecAgg.Cohort {
		c, err := secagg.NewClient(cfg, id, edSigner{r.keys[id]}, r.keys, rand.NewChaCha8([32]byte{byte(len(id)), id[len(id)-1]}))
		if err != nil {
			r.t.Fatal(err)
		}
		r.clients[id] = c
	}
}

func (r *secureRig) at() time.Time { r.now += 0.001; return at(1 + r.now) }

// round runs round's protocol: every bank in send advertises and sends
// its metadata update, banks in crashBeforeMask stop after sharing, and
// the others mask x[bank] with weight w[bank] and reveal. It returns the
// actions of the whole round.
func (r *secureRig) round(round uint64, x map[string][]float32, w map[string]uint64, crashBeforeMask map[string]bool) []Action {
	r.t.Helper()
	var all []Action
	var keys *bus.SecAggKeys
	for _, id := range r.ann.Cohort {
		if _, ok := x[id]; !ok {
			continue
		}
		ad, err := r.clients[id].Advertise()
		if err != nil {
			r.t.Fatal(err)
		}
		all = append(all, r.step(UpdateIn{Client: id, Round: round, Weight: float64(w[id]), Masked: true, Now: r.at()})...)
		for _, a := range r.step(SecAggIn{Client: id, Msg: &ad, Now: r.at()}) {
			if o, ok := a.(SecAggOut); ok {
				k := o.Msg.(bus.SecAggKeys)
				keys = &k
			}
			all = append(all, a)
		}
	}
	if keys == nil {
		all = append(all, r.step(Tick{Now: at(1e4)})...) // the deadline closes the keys
		for _, a := range all {
			if o, ok := a.(SecAggOut); ok {
				k := o.Msg.(bus.SecAggKeys)
				keys = &k
			}
		}
		if keys == nil {
			return all
		}
	}
	var shares []secagg.SealedShare
	for _, ad := range keys.Ads {
		c := r.clients[ad.Party]
		for _, a := range keys.Ads {
			if err := c.AcceptKey(a); err != nil {
				r.t.Fatal(err)
			}
		}
		s, err := c.ShareKeys()
		if err != nil {
			r.t.Fatal(err)
		}
		shares = append(shares, s...)
	}
	for _, s := range shares {
		if err := r.clients[s.To].AcceptShare(s); err != nil {
			r.t.Fatal(err)
		}
	}
	var list *secagg.SignedList
	for _, ad := range keys.Ads {
		if crashBeforeMask[ad.Party] {
			continue
		}
		words, err := r.enc.Encode(x[ad.Party], w[ad.Party], rand.NewChaCha8([32]byte{9}))
		if err != nil {
			r.t.Fatal(err)
		}
		mi, err := r.clients[ad.Party].MaskInput(words)
		if err != nil {
			r.t.Fatal(err)
		}
		for _, a := range r.step(SecAggIn{Client: ad.Party, Msg: &mi, Now: r.at()}) {
			if o, ok := a.(SecAggOut); ok {
				l := o.Msg.(secagg.SignedList)
				list = &l
			}
			all = append(all, a)
		}
	}
	if list == nil {
		for _, a := range r.step(Tick{Now: at(2e4)}) { // the input wait closes the inputs
			if o, ok := a.(SecAggOut); ok {
				l := o.Msg.(secagg.SignedList)
				list = &l
			}
			all = append(all, a)
		}
	}
	if list == nil {
		return all
	}
	clients := r.clients // the close opens the next round, with new clients
	for _, id := range list.Survivors {
		rv, err := clients[id].Unmask(*list)
		if err != nil {
			r.t.Fatal(err)
		}
		all = append(all, r.step(SecAggIn{Client: id, Msg: &rv, Now: r.at()})...)
	}
	return all
}

func TestSecureRound(t *testing.T) {
	banks := []string{"bank-a", "bank-b", "bank-c", "bank-d"}
	x := map[string][]float32{"bank-a": {1, 2}, "bank-b": {3, -1}, "bank-c": {-2, 0.5}, "bank-d": {0.25, 4}}
	w := map[string]uint64{"bank-a": 100, "bank-b": 300, "bank-c": 200, "bank-d": 400}
	mean := func(ids ...string) []float64 {
		out := make([]float64, 2)
		var tw float64
		for _, id := range ids {
			for j, v := range x[id] {
				out[j] += float64(w[id]) * float64(v)
			}
			tw += float64(w[id])
		}
		for j := range out {
			out[j] /= tw
		}
		return out
	}
	tests := []struct {
		name      string
		send      []string        // banks that train and advertise
		crash     map[string]bool // advertise and share, never mask
		want      []float64       // nil: no model
		survivors int
		failure   string
	}{
		{name: "everyone", send: banks, want: mean(banks...), survivors: 4},
		{name: "one crashes after sharing", send: banks, crash: map[string]bool{"bank-d": true}, want: mean("bank-a", "bank-b", "bank-c"), survivors: 3},
		{name: "one never advertises", send: banks[:3], want: mean(banks[:3]...), survivors: 3},
		{name: "below the threshold", send: banks, crash: map[string]bool{"bank-c": true, "bank-d": true}, failure: "survivors, need t = 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSecureRig(t, banks, Config{Rounds: 2})
			if r.ann == nil || r.ann.Threshold != 3 || len(r.ann.Cohort) != 4 {
				t.Fatalf("round 1 announced %+v, want a cohort of 4 at t = 3", r.ann)
			}
			xs := map[string][]float32{}
			for _, id := range tc.send {
				xs[id] = x[id]
			}
			acts := r.round(1, xs, w, tc.crash)
			rc, ok := find[RoundClosed](acts)
			if !ok || rc.SecAgg == nil {
				t.Fatalf("round 1 did not close securely: %v", acts)
			}
			if rc.SecAgg.Failure != "" != (tc.failure != "") || !strings.Contains(rc.SecAgg.Failure, tc.failure) {
				t.Fatalf("failure %q, want one containing %q", rc.SecAgg.Failure, tc.failure)
			}
			pm, published := find[PublishModel](acts)
			if tc.want == nil {
				if published || rc.Aggregate {
					t.Fatalf("a round below t published a model")
				}
				return
			}
			if !published || len(rc.SecAgg.Survivors) != tc.survivors || len(rc.In) != tc.survivors {
				t.Fatalf("published %v, survivors %v, in %v; want %d", published, rc.SecAgg.Survivors, rc.In, tc.survivors)
			}
			bound := r.enc.ErrorBound(tc.survivors) / float64(sumW(w, rc.SecAgg.Survivors))
			for j, v := range pm.Params {
				if d := math.Abs(float64(v) - tc.want[j]); d > bound+1e-6 {
					t.Errorf("coordinate %d: %v, want %v (off by %g, bound %g)", j, v, tc.want[j], d, bound)
				}
			}
		})
	}
}

func sumW(w map[string]uint64, ids []string) uint64 {
	var s uint64
	for _, id := range ids {
		s += w[id]
	}
	return s
}

func TestSecureRoundRefusals(t *testing.T) {
	banks := []string{"bank-a", "bank-b", "bank-c"}
	r := newSecureRig(t, banks, Config{Rounds: 2})
	// An update in the clear in a secure job is a contract breach.
	acts := r.step(UpdateIn{Client: "bank-a", Round: 1, Weight: 10, Params: []float32{1, 2}, Now: r.at()})
	if rej, ok := find[Rejected](acts); !ok || !strings.Contains(rej.Detail, "in the clear") {
		t.Fatalf("an update in the clear: %v", acts)
	}
	// An advertisement signed by another bank's key.
	ad, err := r.clients["bank-b"].Advertise()
	if err != nil {
		t.Fatal(err)
	}
	forged := ad
	forged.Party = "bank-c"
	acts = r.step(SecAggIn{Client: "bank-c", Msg: &forged, Now: r.at()})
	if ref, ok := find[SecAggRefused](acts); !ok || ref.IsLate() {
		t.Fatalf("an advertisement signed by bank-b as bank-c: %v", acts)
	}
	// A masked input of a round that is not open.
	acts = r.step(SecAggIn{Client: "bank-a", Msg: &secagg.MaskedInput{Job: "j", Round: 7, Party: "bank-a"}, Now: r.at()})
	if ref, ok := find[SecAggRefused](acts); !ok || !ref.IsLate() {
		t.Fatalf("a masked input of round 7: %v", acts)
	}
}

func TestSecureConfigRefuses(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Algo: AlgoFedGSP}, "fedgsp"},
		{Config{Algo: AlgoLocal}, "local"},
		{Config{Algo: AlgoFedAvg, Robust: Robust{Rule: RobustMedian}}, "exclude each other"},
	} {
		tc.cfg.Rounds, tc.cfg.MinClients, tc.cfg.RoundTimeout, tc.cfg.SecAgg.On = 1, 2, time.Second, true
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with secure aggregation: %v, want an error naming %q", tc.cfg.Algo, err, tc.want)
		}
	}
}

// A key that reaches the aggregator before the updates that measure the
// round's work must not cut an adaptive round short: below t keys no sum
// can be made, so the round is extended as an empty one, and closes by
// quorum once every bank is in.
func TestSecureKeysBelowThresholdExtendAdaptiveDeadline(t *testing.T) {
	banks := []string{"bank-a", "bank-b", "bank-c"}
	r := newSecureRig(t, banks, Config{Rounds: 1, RoundTimeout: time.Second, DeadlineFactor: 3})
	ad, err := r.clients["bank-a"].Advertise()
	if err != nil {
		t.Fatal(err)
	}
	r.step(SecAggIn{Client: "bank-a", Msg: &ad, Now: r.at()})
	deadline := r.m.Deadline()
	acts := r.step(Tick{Now: deadline})
	if _, closed := find[RoundClosed](acts); closed {
		t.Fatalf("one key of t = %d at the deadline closed the round: %v", r.ann.Threshold, acts)
	}
	if d, ok := find[DeadlineAdapted](acts); !ok || d.Reason != AdaptEmpty {
		t.Fatalf("one key of t = %d at the deadline: want an empty-round extension, got %v", r.ann.Threshold, acts)
	}
	// With t keys in, the deadline closes the keys as it would close a
	// round in the clear with an update in.
	ad, err = r.clients["bank-b"].Advertise()
	if err != nil {
		t.Fatal(err)
	}
	r.step(SecAggIn{Client: "bank-b", Msg: &ad, Now: r.m.Deadline().Add(-time.Millisecond)})
	acts = r.step(Tick{Now: r.m.Deadline()})
	if o, ok := find[SecAggOut](acts); !ok {
		t.Fatalf("t keys in at the extended deadline: want the keys closed, got %v", acts)
	} else if k, ok := o.Msg.(bus.SecAggKeys); !ok || len(k.Ads) != 2 {
		t.Fatalf("keys closed with %+v, want bank-a's and bank-b's", o.Msg)
	}
}
