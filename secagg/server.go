package secagg

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"runtime"
	"strings"
)

type serverStage int

const (
	serverKeys   serverStage = iota // collecting advertisements
	serverInputs                    // collecting masked inputs
	serverUnmask                    // list signed; collecting reveals
	serverClosed                    // result computed, or the round failed
)

// input is a masked input the server accepted.
type input struct {
	m     MaskedInput
	peers map[int]bool
}

// Server is the aggregator's side of a round. It never holds both kinds of
// share of one party: it accepts self-mask shares only of survivors and
// mask-key shares only of dropouts, per the one list it signs.
type Server struct {
	cfg      Config
	digest   [32]byte
	g        *Graph
	signer   Signer
	verifier Verifier

	stage  serverStage
	ads    map[int]SignedAdvertisement
	inputs map[int]*input
	list   *SignedList
	surv   map[int]bool
	drop   map[int]bool
	// demoted: parties whose inputs arrived but are left out, and why
	demoted map[int]string

	reveals   map[int]Reveal
	selfShare map[int][]Share // survivor → revealed shares of its self-mask seed
	maskShare map[int][]Share // dropout → revealed shares of its mask key
	result    []uint32
	failure   error
}

// NewServer starts the aggregator's side of the round cfg; signer signs as
// cfg.Aggregator, verifier checks the parties' advertisements.
func NewServer(cfg Config, signer Signer, verifier Verifier) (*Server, error) {
	g, err := cfg.Graph()
	if err != nil {
		return nil, err
	}
	cfg.Parties = append([]string(nil), cfg.Parties...)
	return &Server{
		cfg: cfg, digest: cfg.Digest(), g: g, signer: signer, verifier: verifier,
		ads: map[int]SignedAdvertisement{}, inputs: map[int]*input{},
		reveals: map[int]Reveal{}, selfShare: map[int][]Share{}, maskShare: map[int][]Share{},
	}, nil
}

// AddAdvertisement takes a party's signed keys; it refuses keys not signed
// by the party they list.
func (s *Server) AddAdvertisement(ad SignedAdvertisement) error {
	const op = "server.add-key"
	if s.stage != serverKeys {
		return perr(op, ad.Party, ErrLate, "keys are closed")
	}
	if err := ad.Verify(s.verifier); err != nil {
		return err
	}
	if err := s.cfg.checkRound(op, ad.Party, ad.Job, ad.Round); err != nil {
		return err
	}
	if ad.ConfigDigest != s.digest {
		return perr(op, ad.Party, ErrMismatch, "advertisement for another configuration of the round")
	}
	j := s.cfg.Index(ad.Party)
	if j < 0 {
		return perr(op, ad.Party, ErrMismatch, "not in the cohort")
	}
	if prev, ok := s.ads[j]; ok {
		if bytes.Equal(prev.Encode(), ad.Encode()) {
			return nil
		}
		return perr(op, ad.Party, ErrMismatch, "a second, different advertisement")
	}
	s.ads[j] = ad
	return nil
}

// Keys closes the keys and returns the advertisements to broadcast, sorted
// by party. Fewer than t advertisements fail the round.
func (s *Server) Keys() ([]SignedAdvertisement, error) {
	if s.stage != serverKeys && s.stage != serverInputs {
		return nil, errf("server.keys", ErrState, "keys closed long ago")
	}
	if len(s.ads) < s.cfg.Threshold {
		return nil, s.fail(errf("server.keys", ErrBelowThreshold, "%d parties advertised keys, need t = %d: the round closes without a sum", len(s.ads), s.cfg.Threshold))
	}
	s.stage = serverInputs
	out := make([]SignedAdvertisement, 0, len(s.ads))
	for _, j := range sortedKeys(keysOf(s.ads)) {
		out = append(out, s.ads[j])
	}
	return out, nil
}

// AddMaskedInput takes a party's masked input. After the list is signed it
// refuses with ErrLate: that input goes, re-masked, into the next round.
func (s *Server) AddMaskedInput(m MaskedInput) error {
	const op = "server.add-input"
	switch s.stage {
	case serverKeys:
		return perr(op, m.Party, ErrState, "keys not yet closed")
	case serverUnmask, serverClosed:
		return perr(op, m.Party, ErrLate, "the list is signed; mask it into the next round")
	}
	if err := s.cfg.checkRound(op, m.Party, m.Job, m.Round); err != nil {
		return err
	}
	i := s.cfg.Index(m.Party)
	if _, ok := s.ads[i]; i < 0 || !ok {
		return perr(op, m.Party, ErrMismatch, "no advertised keys")
	}
	if m.bits() != s.cfg.Bits {
		return perr(op, m.Party, ErrMismatch, "words of %d bits, the round's are %d", m.bits(), s.cfg.Bits)
	}
	if len(m.Vector) != s.cfg.VectorLen {
		return perr(op, m.Party, ErrMalformed, "%d words, want %d", len(m.Vector), s.cfg.VectorLen)
	}
	wm := wordMask(s.cfg.Bits)
	for k, v := range m.Vector {
		if v&^wm != 0 {
			return perr(op, m.Party, ErrMalformed, "word %d not below 2^%d", k, s.cfg.Bits)
		}
	}
	if !sortedUnique(m.Peers) {
		return perr(op, m.Party, ErrMalformed, "peers not sorted and unique")
	}
	peers := make(map[int]bool, len(m.Peers))
	for _, p := range m.Peers {
		j := s.cfg.Index(p)
		_, advertised := s.ads[j]
		if j < 0 || j == i || !advertised || !s.g.Adjacent(i, j) {
			return perr(op, m.Party, ErrMismatch, "peer %s is not an advertised neighbour", p)
		}
		peers[j] = true
	}
	if len(peers)+1 < s.cfg.Threshold {
		return perr(op, m.Party, ErrBelowThreshold, "%d peers and itself, need t = %d", len(peers), s.cfg.Threshold)
	}
	if prev, ok := s.inputs[i]; ok {
		if bytes.Equal(prev.m.Encode(), m.Encode()) {
			return nil
		}
		return perr(op, m.Party, ErrMismatch, "a second, different masked input")
	}
	m.Vector = append([]uint32(nil), m.Vector...)
	m.Peers = append([]string(nil), m.Peers...)
	s.inputs[i] = &input{m: m, peers: peers}
	return nil
}

// CloseInputs signs the round's one list. Survivors are the parties whose
// masked inputs arrived, less those it must leave out (chooseSurvivors:
// their inputs go in no sum this round, Demoted names them and why);
// dropouts are the other parties some survivor masked with. It fails the
// round (ErrBelowThreshold, and says why) only if fewer than t survivors
// remain. Called again, it returns the same list.
func (s *Server) CloseInputs() (SignedList, error) {
	const op = "server.close-inputs"
	switch {
	case s.list != nil:
		return *s.list, nil
	case s.failure != nil:
		return SignedList{}, s.failure
	case s.stage != serverInputs:
		return SignedList{}, errf(op, ErrState, "keys not yet closed")
	}
	surv, why := s.chooseSurvivors()
	s.demoted = why
	if len(surv) < s.cfg.Threshold {
		left := ""
		if len(why) > 0 {
			var out []string
			for _, j := range sortedKeys(keysOf(why)) {
				out = append(out, s.cfg.Parties[j]+" "+why[j])
			}
			left = fmt.Sprintf(" (%d masked inputs, %d left out: %s)", len(s.inputs), len(why), strings.Join(out, "; "))
		}
		return SignedList{}, s.fail(errf(op, ErrBelowThreshold, "%d survivors, need t = %d%s: the round closes without a sum", len(surv), s.cfg.Threshold, left))
	}
	drop := s.dropouts(surv)
	l := List{Job: s.cfg.Job, Round: s.cfg.Round, ConfigDigest: s.digest, Survivors: s.names(surv), Dropouts: s.names(drop)}
	sig, err := s.signer.Sign(l.Bytes())
	if err != nil {
		return SignedList{}, &Error{Op: op, Party: s.cfg.Aggregator, Err: err}
	}
	s.list = &SignedList{List: l, Sig: sig}
	s.surv, s.drop, s.stage = surv, drop, serverUnmask
	return *s.list, nil
}

// chooseSurvivors is the largest set of parties whose masked inputs can be
// summed, and why each other party whose input arrived is left out.
//
// First, a party u that lists v while v does not list u added a mask that
// nobody cancels: v is left out (a dropout, so its mask key removes u's
// mask), in ascending order of u until every pair is mutual. This is the
// one choice the rule makes.
//
// Then every removal is forced, repeated to a fixed point: a survivor
// whose self mask fewer than t survivors (itself included) hold is left
// out, since its self mask cannot be removed; and when a dropout's mask
// key is held by fewer than t survivors (it crashed while sending its
// shares, or it is itself left out), every survivor that masked with it is
// left out, since no list can remove that pairwise mask (the other key of
// the pair is the survivor's own, and revealing it beside its self mask
// would reveal its input). A left-out party is a dropout like any other:
// only its mask-key shares are asked for, if a survivor masked with it,
// never its self mask. Because each removal is forced for every subset of
// the survivors, the fixed point is the largest subset of the mutual set
// that a list can sum, whatever the order of removal. (Once fewer than t
// remain the round fails: the rule stops there.)
func (s *Server) chooseSurvivors() (map[int]bool, map[int]string) {
	t := s.cfg.Threshold
	surv := keysOf(s.inputs)
	why := map[int]string{}
	for changed := true; changed; {
		changed = false
		for _, u := range sortedKeys(surv) {
			if !surv[u] {
				continue
			}
			for _, v := range sortedKeys(s.inputs[u].peers) {
				if surv[v] && !s.inputs[v].peers[u] {
					delete(surv, v)
					why[v] = fmt.Sprintf("did not mask with %s, which masked with it (its share came late)", s.cfg.Parties[u])
					changed = true
				}
			}
		}
	}
	// Below t the round fails whatever goes next: stop there, so that the
	// error names the removals that cost the round, not the collapse after.
	for changed := true; changed; {
		changed = false
		for _, u := range sortedKeys(surv) {
			if len(surv) < t {
				return surv, why
			}
			if h := s.holders(surv, u) + 1; h < t {
				delete(surv, u)
				why[u] = fmt.Sprintf("has its self mask held by %d survivors, need t = %d", h, t)
				changed = true
			}
		}
		for _, d := range sortedKeys(s.dropouts(surv)) {
			h := s.holders(surv, d)
			if len(surv) < t {
				return surv, why
			}
			if h >= t {
				continue
			}
			for _, w := range sortedKeys(surv) {
				if s.inputs[w].peers[d] {
					delete(surv, w)
					why[w] = fmt.Sprintf("masked with %s, a dropout whose mask key %d survivors hold, need t = %d", s.cfg.Parties[d], h, t)
					changed = true
				}
			}
		}
	}
	return surv, why
}

// dropouts are the parties outside surv that some survivor masked with.
func (s *Server) dropouts(surv map[int]bool) map[int]bool {
	drop := map[int]bool{}
	for u := range surv {
		for v := range s.inputs[u].peers {
			if !surv[v] {
				drop[v] = true
			}
		}
	}
	return drop
}

// Demoted are the parties whose masked inputs arrived but that the list
// leaves out of the sum, once CloseInputs has run: each is a dropout this
// round (its input discarded, its self mask never revealed). DemotedWhy
// says why. After a failed CloseInputs they are the parties it left out
// before fewer than t remained.
func (s *Server) Demoted() []string {
	return s.names(keysOf(s.demoted))
}

// DemotedWhy says why party's input was left out of the sum, or "" if it
// was not: for example "masked with bank-03, a dropout whose mask key 2
// survivors hold, need t = 3" (bank-03 crashed while sending its shares).
func (s *Server) DemotedWhy(party string) string {
	return s.demoted[s.cfg.Index(party)]
}

// holders counts the survivors other than p that accepted p's shares.
func (s *Server) holders(surv map[int]bool, p int) int {
	n := 0
	for w := range surv {
		if w != p && s.inputs[w].peers[p] {
			n++
		}
	}
	return n
}

// AddReveal takes a survivor's shares. It refuses a reveal from a
// non-survivor, a self-mask share of a non-survivor, a mask-key share of a
// non-dropout, and a share the sender cannot hold.
func (s *Server) AddReveal(r Reveal) error {
	const op = "server.add-reveal"
	if s.stage != serverUnmask {
		if s.stage == serverClosed {
			return perr(op, r.From, ErrLate, "the round is closed")
		}
		return perr(op, r.From, ErrState, "no list signed")
	}
	if err := s.cfg.checkRound(op, r.From, r.Job, r.Round); err != nil {
		return err
	}
	i := s.cfg.Index(r.From)
	if i < 0 || !s.surv[i] {
		return perr(op, r.From, ErrMismatch, "not a survivor")
	}
	if prev, ok := s.reveals[i]; ok {
		if bytes.Equal(prev.Encode(), r.Encode()) {
			return nil
		}
		return perr(op, r.From, ErrMismatch, "a second, different reveal")
	}
	x := uint32(i + 1)
	check := func(ps []PartyShare, want map[int]bool, kind string) error {
		for k, p := range ps {
			j := s.cfg.Index(p.Party)
			switch {
			case j < 0 || !want[j]:
				return perr(op, r.From, ErrMismatch, "%s share of %s, which the list does not ask for", kind, p.Party)
			case j != i && !s.inputs[i].peers[j]:
				return perr(op, r.From, ErrMismatch, "%s share of %s, which it never accepted", kind, p.Party)
			case len(p.Y) != shareY:
				return perr(op, r.From, ErrMalformed, "%s share of %s: %d bytes", kind, p.Party, len(p.Y))
			case k > 0 && p.Party <= ps[k-1].Party:
				return perr(op, r.From, ErrMalformed, "%s shares not sorted and unique", kind)
			}
		}
		return nil
	}
	if err := check(r.Self, s.surv, "self-mask"); err != nil {
		return err
	}
	if err := check(r.Mask, s.drop, "mask-key"); err != nil {
		return err
	}
	for _, p := range r.Self {
		j := s.cfg.Index(p.Party)
		s.selfShare[j] = append(s.selfShare[j], Share{X: x, Y: append([]byte(nil), p.Y...)})
	}
	for _, p := range r.Mask {
		j := s.cfg.Index(p.Party)
		s.maskShare[j] = append(s.maskShare[j], Share{X: x, Y: append([]byte(nil), p.Y...)})
	}
	s.reveals[i] = r
	return nil
}

// Ready reports whether t shares are in for every survivor's self mask and
// every dropout's mask key.
func (s *Server) Ready() bool { return s.stage == serverUnmask && s.missing() == "" }

func (s *Server) missing() string {
	var out []string
	for _, u := range sortedKeys(s.surv) {
		if n := len(s.selfShare[u]); n < s.cfg.Threshold {
			out = append(out, fmt.Sprintf("%s's self mask (%d shares)", s.cfg.Parties[u], n))
		}
	}
	for _, d := range sortedKeys(s.drop) {
		if n := len(s.maskShare[d]); n < s.cfg.Threshold {
			out = append(out, fmt.Sprintf("%s's mask key (%d shares)", s.cfg.Parties[d], n))
		}
	}
	return strings.Join(out, ", ")
}

// Survivors are the parties whose inputs are in the sum (the m of
// Encoding.DecodeSum), once the list is signed.
func (s *Server) Survivors() []string {
	if s.list == nil {
		return nil
	}
	return append([]string(nil), s.list.Survivors...)
}

// Result unmasks the sum of the survivors' inputs mod 2^b. Called before
// Ready (at the deadline), it fails the round, naming what is missing.
func (s *Server) Result() ([]uint32, error) {
	const op = "server.result"
	switch {
	case s.result != nil:
		return s.result, nil
	case s.failure != nil:
		return nil, s.failure
	case s.stage != serverUnmask:
		return nil, errf(op, ErrState, "no list signed")
	}
	if miss := s.missing(); miss != "" {
		return nil, s.fail(errf(op, ErrBelowThreshold, "fewer than t = %d shares of %s: the round closes without a sum", s.cfg.Threshold, miss))
	}
	// Every mask to remove, then one pass over the vector that adds the
	// survivors' inputs and removes the masks (AddMasks' workers).
	var addends [][]uint32
	var terms []MaskTerm
	for _, u := range sortedKeys(s.surv) {
		addends = append(addends, s.inputs[u].m.Vector)
		name := s.cfg.Parties[u]
		b, err := Combine(s.selfShare[u], s.cfg.Threshold, SeedSize)
		if err != nil {
			return nil, s.fail(&Error{Op: op, Party: name, Err: err})
		}
		seed := Seed(b)
		c := seedCommit(s.cfg.Job, s.cfg.Round, name, seed)
		if subtle.ConstantTimeCompare(c[:], s.inputs[u].m.SeedCommit[:]) != 1 {
			return nil, s.fail(perr(op, name, ErrMalformed, "reconstructed self-mask seed does not match its commitment: a share is corrupted"))
		}
		self, err := SelfSeed(seed, s.cfg.Job, s.cfg.Round, name)
		if err != nil {
			return nil, s.fail(err)
		}
		terms = append(terms, MaskTerm{Seed: self, Negate: true})
	}
	for _, d := range sortedKeys(s.drop) {
		name := s.cfg.Parties[d]
		b, err := Combine(s.maskShare[d], s.cfg.Threshold, KeySize)
		if err != nil {
			return nil, s.fail(&Error{Op: op, Party: name, Err: err})
		}
		kp, err := NewKeyPair(b)
		if err != nil {
			return nil, s.fail(err)
		}
		if !bytes.Equal(kp.Public(), s.ads[d].MaskKey) {
			return nil, s.fail(perr(op, name, ErrMalformed, "reconstructed mask key does not match the advertised one: a share is corrupted"))
		}
		for _, u := range sortedKeys(s.surv) {
			if !s.inputs[u].peers[d] {
				continue
			}
			shared, err := kp.ECDH(s.ads[u].MaskKey)
			if err != nil {
				return nil, s.fail(err)
			}
			pair, err := PairwiseSeed(shared, s.cfg.Job, s.cfg.Round, name, s.cfg.Parties[u])
			if err != nil {
				return nil, s.fail(err)
			}
			// u added the pair's mask if u < d, subtracted it otherwise.
			terms = append(terms, MaskTerm{Seed: pair, Negate: u < d})
		}
	}
	sum := make([]uint32, s.cfg.VectorLen)
	if err := addMasks(sum, s.cfg.Bits, addends, terms, runtime.GOMAXPROCS(0)); err != nil {
		return nil, s.fail(err)
	}
	s.result, s.stage = sum, serverClosed
	return sum, nil
}

// fail closes the round without a sum.
func (s *Server) fail(err error) error {
	s.failure, s.stage = err, serverClosed
	return err
}

func (s *Server) names(set map[int]bool) []string {
	out := make([]string, 0, len(set))
	for _, j := range sortedKeys(set) {
		out = append(out, s.cfg.Parties[j])
	}
	return out
}

func keysOf[V any](m map[int]V) map[int]bool {
	out := make(map[int]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
