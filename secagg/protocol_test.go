package secagg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// round is a simulated round over the pure state machines, every message
// passed through its wire encoding, delivered shuffled and duplicated.
type round struct {
	t       *testing.T
	cfg     Config
	enc     Encoding
	kr      keyring
	signers map[string]Signer
	clients map[string]*Client
	server  *Server
	inputs  map[string][]uint32 // encoded plain inputs
	shuffle *rand.Rand
	// partial: a party that crashes while sending its shares, and the
	// neighbours its shares reached (drop it beforeInput too)
	partial map[string][]string
}

// Stages at which a party drops.
const (
	beforeAdvertise = iota + 1
	beforeShares    // advertised its keys, never sent shares
	beforeInput     // sent shares, never sent its masked input
	beforeReveal    // sent its masked input, never answered the list
)

func parties(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("bank-%02d", i)
	}
	return out
}

func newRound(t *testing.T, n, threshold, dim int, label string) *round {
	t.Helper()
	ids := parties(n)
	kr, signers := newKeyring(t, append([]string{"agg"}, ids...)...)
	enc, err := NewEncoding(2, 50, n, dim, 0) // b chosen: 29 at n = 8, 30 at 16 and 30
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Job: "job-" + label, Round: 9, Aggregator: "agg", Parties: ids, Threshold: threshold,
		VectorLen: enc.Len(), Bits: enc.Bits}
	copy(cfg.GraphSeed[:], label)
	r := &round{t: t, cfg: cfg, enc: enc, kr: kr, signers: signers, clients: map[string]*Client{},
		inputs: map[string][]uint32{}, shuffle: rand.New(rand.NewPCG(uint64(n), uint64(threshold)))}
	if r.server, err = NewServer(cfg, signers["agg"], kr); err != nil {
		t.Fatal(err)
	}
	rng := newDetRand("inputs-" + label)
	for i, id := range ids {
		if r.clients[id], err = NewClient(cfg, id, signers[id], kr, newDetRand("client-"+label+id)); err != nil {
			t.Fatal(err)
		}
		x := make([]float32, dim)
		for j := range x {
			x[j] = float32(math.Cos(float64(7*i+j))) * 0.5
		}
		if r.inputs[id], err = enc.Encode(x, uint64(10+i), rng); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// must is for steps that cannot fail in a correct run.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// run plays the round up to the signed list with the given dropouts.
func (r *round) toList(drop map[string]int) (SignedList, error) {
	t := r.t
	alive := func(id string, stage int) bool { s := drop[id]; return s == 0 || s > stage }
	ids := r.cfg.Parties
	for _, id := range ids {
		if !alive(id, beforeAdvertise) {
			continue
		}
		ad := must(r.clients[id].Advertise())
		wire := must(DecodeSignedAdvertisement(ad.Encode()))
		for range 2 { // duplicated
			if err := r.server.AddAdvertisement(wire); err != nil {
				t.Fatal(err)
			}
		}
	}
	ads, err := r.server.Keys()
	if err != nil {
		return SignedList{}, err
	}
	var sealed []SealedShare
	for _, id := range ids {
		if !alive(id, beforeShares) {
			continue
		}
		for _, ad := range ads {
			if err := r.clients[id].AcceptKey(must(DecodeSignedAdvertisement(ad.Encode()))); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range must(r.clients[id].ShareKeys()) {
			sealed = append(sealed, must(DecodeSealedShare(s.Encode())))
		}
	}
	sealed = append(sealed, sealed[:len(sealed)/3]...) // duplicates
	r.shuffle.Shuffle(len(sealed), func(i, j int) { sealed[i], sealed[j] = sealed[j], sealed[i] })
	reached := func(s SealedShare) bool {
		to, ok := r.partial[s.From]
		return !ok || slices.Contains(to, s.To)
	}
	for _, s := range sealed {
		if alive(s.To, beforeInput) && reached(s) {
			if err := r.clients[s.To].AcceptShare(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	order := append([]string(nil), ids...)
	r.shuffle.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, id := range order {
		if !alive(id, beforeInput) {
			continue
		}
		m := must(r.clients[id].MaskInput(r.inputs[id]))
		if err := r.server.AddMaskedInput(must(DecodeMaskedInput(m.Encode()))); err != nil {
			t.Fatal(err)
		}
	}
	return r.server.CloseInputs()
}

// reveal answers the list from every survivor alive, shuffled.
func (r *round) reveal(l SignedList, drop map[string]int) {
	order := append([]string(nil), l.Survivors...)
	r.shuffle.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, id := range order {
		if drop[id] != 0 {
			continue
		}
		rev := must(r.clients[id].Unmask(must(DecodeSignedList(l.Encode()))))
		if err := r.server.AddReveal(must(DecodeReveal(rev.Encode()))); err != nil {
			r.t.Fatal(err)
		}
		r.checkServerInvariant()
	}
}

// The server never holds both kinds of share of one party.
func (r *round) checkServerInvariant() {
	for p := range r.server.selfShare {
		if _, ok := r.server.maskShare[p]; ok {
			r.t.Fatalf("server holds both share kinds of %s", r.cfg.Parties[p])
		}
	}
}

// plainSum is the survivors' encodings summed mod 2^b: what the unmasked
// sum must equal exactly.
func (r *round) plainSum(survivors []string) []uint32 {
	out := make([]uint32, r.cfg.VectorLen)
	for _, id := range survivors {
		for j, v := range r.inputs[id] {
			out[j] = (out[j] + v) & wordMask(r.cfg.Bits)
		}
	}
	return out
}

func TestRoundWithDropoutsAtEveryStage(t *testing.T) {
	cases := []struct {
		name string
		drop map[string]int
	}{
		{"nobody drops", nil},
		{"one before advertising", map[string]int{"bank-03": beforeAdvertise}},
		{"one after advertising", map[string]int{"bank-00": beforeShares}},
		{"one before its masked input", map[string]int{"bank-07": beforeInput}},
		{"one after its masked input", map[string]int{"bank-04": beforeReveal}},
		{"one at each stage after keys, t reveals exactly", map[string]int{"bank-01": beforeShares, "bank-05": beforeInput, "bank-06": beforeReveal}},
		{"two before input", map[string]int{"bank-02": beforeInput, "bank-06": beforeInput}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRound(t, 8, 5, 33, c.name)
			l, err := r.toList(c.drop)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range l.Survivors {
				if s := c.drop[p]; s != 0 && s != beforeReveal {
					t.Fatalf("%s dropped at stage %d but is listed a survivor", p, s)
				}
			}
			for _, p := range l.Dropouts {
				if c.drop[p] != beforeInput {
					t.Fatalf("%s listed a dropout", p)
				}
			}
			// A masked input after the list is late: next round.
			for p, s := range c.drop {
				if s == beforeInput {
					m := MaskedInput{Job: r.cfg.Job, Round: r.cfg.Round, Party: p, Vector: r.inputs[p]}
					if err := r.server.AddMaskedInput(m); !errors.Is(err, ErrLate) {
						t.Fatalf("late input: %v", err)
					}
				}
			}
			r.reveal(l, c.drop)
			sum, err := r.server.Result()
			if err != nil {
				t.Fatal(err)
			}
			want := r.plainSum(l.Survivors)
			for j := range want {
				if sum[j] != want[j] {
					t.Fatalf("word %d: unmasked %d, survivors' plain sum %d", j, sum[j], want[j])
				}
			}
			if _, err := r.enc.DecodeSum(sum, len(l.Survivors)); err != nil {
				t.Fatal(err)
			}
			for _, c := range r.clients {
				if c.Refusals().Total() != 0 {
					t.Fatalf("refusals in an honest round: %v", c.Refusals())
				}
			}
		})
	}
}

func TestRoundBelowThreshold(t *testing.T) {
	// Four of eight lost before input: 4 < t survivors, no list.
	r := newRound(t, 8, 5, 5, "below-list")
	drop := map[string]int{"bank-00": beforeInput, "bank-01": beforeInput, "bank-02": beforeInput, "bank-03": beforeInput}
	if _, err := r.toList(drop); !errors.Is(err, ErrBelowThreshold) {
		t.Fatalf("list with 4 survivors of t = 5: %v", err)
	}
	if _, err := r.server.Result(); !errors.Is(err, ErrBelowThreshold) {
		t.Fatalf("result after a failed list: %v", err)
	}
	// Six survive, but only four answer: no sum, and the server says why.
	r = newRound(t, 8, 5, 5, "below-reveal")
	drop = map[string]int{"bank-00": beforeInput, "bank-01": beforeReveal, "bank-02": beforeReveal, "bank-03": beforeInput}
	l, err := r.toList(drop)
	if err != nil {
		t.Fatal(err)
	}
	r.reveal(l, drop)
	if r.server.Ready() {
		t.Fatal("ready with 4 reveals of t = 5")
	}
	if _, err := r.server.Result(); !errors.Is(err, ErrBelowThreshold) {
		t.Fatalf("result with 4 reveals: %v", err)
	} else {
		t.Log(err)
	}
}

// A random k-regular graph (n > 30): masks with neighbours only.
func TestRoundSparseGraph(t *testing.T) {
	r := newRound(t, 40, 12, 9, "sparse")
	g := r.server.g
	for i := range 40 {
		if len(g.Neighbours(i)) != DefaultDegree(40) {
			t.Fatalf("party %d has %d neighbours, want %d", i, len(g.Neighbours(i)), DefaultDegree(40))
		}
		for _, j := range g.Neighbours(i) {
			if !g.Adjacent(j, i) {
				t.Fatal("graph not symmetric")
			}
		}
	}
	drop := map[string]int{"bank-03": beforeShares, "bank-17": beforeInput, "bank-30": beforeReveal}
	l, err := r.toList(drop)
	if err != nil {
		t.Fatal(err)
	}
	r.reveal(l, drop)
	sum, err := r.server.Result()
	if err != nil {
		t.Fatal(err)
	}
	want := r.plainSum(l.Survivors)
	for j := range want {
		if sum[j] != want[j] {
			t.Fatalf("word %d: %d, want %d", j, sum[j], want[j])
		}
	}
	if len(l.Survivors) != 38 {
		t.Fatalf("%d survivors", len(l.Survivors))
	}
}

// A curious server asks twice, with bank-00 a survivor in one list and a
// dropout in the other, or both in one: every client refuses and counts,
// and bank-00's shares of both kinds never come together.
func TestCuriousServerRefused(t *testing.T) {
	r := newRound(t, 8, 5, 5, "curious")
	l1, err := r.toList(nil)
	if err != nil {
		t.Fatal(err)
	}
	agg := r.signers["agg"]
	sign := func(l List) SignedList {
		return SignedList{List: l, Sig: must(agg.Sign(l.Bytes()))}
	}
	var survivors []string
	for _, p := range l1.Survivors {
		if p != "bank-00" {
			survivors = append(survivors, p)
		}
	}
	l2 := sign(List{Job: l1.Job, Round: l1.Round, ConfigDigest: l1.ConfigDigest, Survivors: survivors, Dropouts: []string{"bank-00"}})
	both := sign(List{Job: l1.Job, Round: l1.Round, ConfigDigest: l1.ConfigDigest, Survivors: l1.Survivors, Dropouts: []string{"bank-00"}})
	forged := SignedList{List: l2.List, Sig: must(r.signers["bank-01"].Sign(l2.Bytes()))}

	selfOf0, maskOf0 := 0, 0
	count := func(rev Reveal) {
		for _, p := range rev.Self {
			if p.Party == "bank-00" {
				selfOf0++
			}
		}
		for _, p := range rev.Mask {
			if p.Party == "bank-00" {
				maskOf0++
			}
		}
	}
	var refused error
	for _, id := range l1.Survivors {
		c := r.clients[id]
		var re *RefusalError
		if _, err := c.Unmask(both); !errors.As(err, &re) || re.Reason != RefusedBothLists {
			t.Fatalf("%s answered a list naming bank-00 both: %v", id, err)
		}
		if _, err := c.Unmask(forged); !errors.As(err, &re) || re.Reason != RefusedBadList {
			t.Fatalf("%s answered a list signed by bank-01: %v", id, err)
		}
		rev, err := c.Unmask(l1)
		if err != nil {
			t.Fatal(err)
		}
		count(rev)
		again, err := c.Unmask(l1) // the same list again: the same answer
		if err != nil || len(again.Self) != len(rev.Self) {
			t.Fatalf("repeat of the answered list: %v", err)
		}
		_, refused = c.Unmask(l2)
		if !errors.As(refused, &re) || re.Reason != RefusedConflictingList {
			t.Fatalf("%s answered a second, conflicting list: %v", id, refused)
		}
		got := c.Refusals()
		if got[RefusedBothLists] != 1 || got[RefusedBadList] != 1 || got[RefusedConflictingList] != 1 || got.Total() != 3 {
			t.Fatalf("%s refusals %v", id, got)
		}
	}
	t.Log(refused)
	if maskOf0 != 0 || selfOf0 != 8 {
		t.Fatalf("bank-00's shares revealed: %d self, %d mask-key", selfOf0, maskOf0)
	}
}

// A split view: the server shows bank-00 as survivor to one group and as
// dropout to the other. With 2t > n neither both groups reach t.
func TestSplitViewCannotReachBothThresholds(t *testing.T) {
	r := newRound(t, 8, 5, 5, "split")
	l1, err := r.toList(nil)
	if err != nil {
		t.Fatal(err)
	}
	var rest []string
	for _, p := range l1.Survivors {
		if p != "bank-00" {
			rest = append(rest, p)
		}
	}
	l2 := SignedList{List: List{Job: l1.Job, Round: l1.Round, ConfigDigest: l1.ConfigDigest, Survivors: rest, Dropouts: []string{"bank-00"}}}
	l2.Sig = must(r.signers["agg"].Sign(l2.Bytes()))
	// Every split of the cohort into the group shown l1 and the group
	// shown l2.
	for mask := range 1 << 8 {
		selfOf0, maskOf0 := 0, 0
		for i, id := range r.cfg.Parties {
			c := *r.clients[id] // a copy per split: each client sees one list
			c.revealed = map[int]shareKind{}
			l := l2
			if mask&(1<<i) != 0 {
				l = l1
			}
			rev, err := c.Unmask(l)
			if err != nil {
				continue // bank-00 refuses the list that drops it
			}
			for _, p := range rev.Self {
				if p.Party == "bank-00" {
					selfOf0++
				}
			}
			for _, p := range rev.Mask {
				if p.Party == "bank-00" {
					maskOf0++
				}
			}
		}
		if selfOf0 >= 5 && maskOf0 >= 5 {
			t.Fatalf("split %08b: %d self and %d mask-key shares of bank-00", mask, selfOf0, maskOf0)
		}
	}
}

func TestConfigRefusesWeakThreshold(t *testing.T) {
	cfg := Config{Job: "j", Aggregator: "agg", Parties: parties(8), Threshold: 4, VectorLen: 3, Bits: 32}
	if err := cfg.Validate(); !errors.Is(err, ErrMismatch) {
		t.Fatalf("t = 4 of 8 (2t ≤ n): %v", err)
	}
	cfg.Threshold = 5
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.Parties = append(cfg.Parties, "agg")
	if err := cfg.Validate(); err == nil {
		t.Fatal("aggregator in the cohort accepted")
	}
}

// A forged key advertisement is refused by the server and the clients.
func TestForgedAdvertisementRefused(t *testing.T) {
	r := newRound(t, 8, 5, 3, "forged")
	ad := must(r.clients["bank-00"].Advertise())
	forged := ad
	forged.Sig = must(r.signers["bank-01"].Sign(ad.Bytes()))
	if err := r.server.AddAdvertisement(forged); !errors.Is(err, ErrSignature) {
		t.Fatalf("server took a key signed by another party: %v", err)
	}
	must(r.clients["bank-01"].Advertise())
	if err := r.clients["bank-01"].AcceptKey(forged); !errors.Is(err, ErrSignature) {
		t.Fatalf("client took a key signed by another party: %v", err)
	}
	unsigned := ad
	unsigned.Sig = nil
	if err := r.clients["bank-01"].AcceptKey(unsigned); !errors.Is(err, ErrSignature) {
		t.Fatalf("client took an unsigned key: %v", err)
	}
}
