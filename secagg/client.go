package secagg

import (
	"bytes"
	"crypto/sha256"
	"io"
	"runtime"
	"sort"
)

type clientStage int

const (
	clientNew        clientStage = iota
	clientAdvertised             // keys advertised; accepting peers' keys
	clientShared                 // shares sent; accepting peers' shares
	clientMasked                 // masked input sent; awaiting the list
	clientRevealed               // list answered
)

// peer is what a client knows of a neighbour.
type peer struct {
	ad    Advertisement
	pair  Seed         // pairwise mask seed, from the advertised mask key
	share *sharePlain  // its shares to us, once accepted
	raw   *SealedShare // the sealed share accepted, for duplicates
}

// Client is one party's side of a round. It is not safe for concurrent
// use; the caller (the agent core) feeds it one message at a time.
type Client struct {
	cfg      Config
	digest   [32]byte
	g        *Graph
	self     string
	idx      int
	signer   Signer
	verifier Verifier
	rng      io.Reader

	stage     clientStage
	encKey    *KeyPair
	maskKey   *KeyPair
	seed      Seed   // self-mask secret
	ownSelf   []byte // own share (x = idx+1) of seed
	neighbour map[int]*peer

	listBytes []byte // the list answered, canonical
	reveal    Reveal
	revealed  map[int]shareKind // parties whose share this client revealed, by kind
	refusals  Refusals
}

type shareKind int

const (
	kindSelf shareKind = iota + 1
	kindMask
)

// NewClient starts party self's side of the round cfg. signer signs as
// self; verifier checks the parties' and the aggregator's signatures; rng
// supplies every key, seed and polynomial.
func NewClient(cfg Config, self string, signer Signer, verifier Verifier, rng io.Reader) (*Client, error) {
	g, err := cfg.Graph()
	if err != nil {
		return nil, err
	}
	idx := cfg.Index(self)
	if idx < 0 {
		return nil, perr("client.new", self, ErrMismatch, "not in the cohort of job %s round %d", cfg.Job, cfg.Round)
	}
	cfg.Parties = append([]string(nil), cfg.Parties...)
	return &Client{
		cfg: cfg, digest: cfg.Digest(), g: g, self: self, idx: idx,
		signer: signer, verifier: verifier, rng: rng,
		neighbour: map[int]*peer{}, revealed: map[int]shareKind{},
	}, nil
}

// Refusals counts the client's refused lists by reason.
func (c *Client) Refusals() Refusals { return c.refusals }

// Advertise draws the round's keys and self-mask seed and returns the
// signed advertisement.
func (c *Client) Advertise() (SignedAdvertisement, error) {
	const op = "client.advertise"
	if c.stage != clientNew {
		return SignedAdvertisement{}, perr(op, c.self, ErrState, "keys already advertised")
	}
	var err error
	if c.encKey, err = GenerateKeyPair(c.rng); err != nil {
		return SignedAdvertisement{}, err
	}
	if c.maskKey, err = GenerateKeyPair(c.rng); err != nil {
		return SignedAdvertisement{}, err
	}
	if _, err := io.ReadFull(c.rng, c.seed[:]); err != nil {
		return SignedAdvertisement{}, perr(op, c.self, ErrState, "read randomness: %v", err)
	}
	ad, err := SignAdvertisement(Advertisement{
		Job: c.cfg.Job, Party: c.self, Round: c.cfg.Round, ConfigDigest: c.digest,
		EncKey: c.encKey.Public(), MaskKey: c.maskKey.Public(),
	}, c.signer)
	if err != nil {
		return SignedAdvertisement{}, err
	}
	c.stage = clientAdvertised
	return ad, nil
}

// AcceptKey takes one party's signed advertisement from the server's
// broadcast. It refuses one that is not signed by the party it lists, of
// another round or configuration, or (for this client's own) not the keys
// it advertised. Non-neighbours' advertisements are checked and ignored.
func (c *Client) AcceptKey(ad SignedAdvertisement) error {
	const op = "client.accept-key"
	if c.stage != clientAdvertised {
		return perr(op, ad.Party, ErrLate, "keys are closed (stage %d)", c.stage)
	}
	if err := ad.Verify(c.verifier); err != nil {
		return err
	}
	if err := c.cfg.checkRound(op, ad.Party, ad.Job, ad.Round); err != nil {
		return err
	}
	if ad.ConfigDigest != c.digest {
		return perr(op, ad.Party, ErrMismatch, "advertisement for another configuration of the round")
	}
	j := c.cfg.Index(ad.Party)
	switch {
	case j < 0:
		return perr(op, ad.Party, ErrMismatch, "not in the cohort")
	case j == c.idx:
		if !bytes.Equal(ad.EncKey, c.encKey.Public()) || !bytes.Equal(ad.MaskKey, c.maskKey.Public()) {
			return perr(op, ad.Party, ErrMismatch, "this client's advertisement came back with other keys")
		}
		return nil
	case !c.g.Adjacent(c.idx, j):
		return nil
	}
	if p, ok := c.neighbour[j]; ok {
		if bytes.Equal(p.ad.Bytes(), ad.Bytes()) {
			return nil
		}
		return perr(op, ad.Party, ErrMismatch, "a second, different advertisement signed by %s", ad.Party)
	}
	shared, err := c.maskKey.ECDH(ad.MaskKey)
	if err != nil {
		return err
	}
	pair, err := PairwiseSeed(shared, c.cfg.Job, c.cfg.Round, c.self, ad.Party)
	if err != nil {
		return err
	}
	c.neighbour[j] = &peer{ad: ad.Advertisement, pair: pair}
	return nil
}

// ShareKeys closes the keys and returns this client's shares of its
// self-mask seed and mask key, t-of-(neighbours with keys + itself), one
// sealed share per neighbour.
func (c *Client) ShareKeys() ([]SealedShare, error) {
	const op = "client.share-keys"
	if c.stage != clientAdvertised {
		return nil, perr(op, c.self, ErrState, "not awaiting keys (stage %d)", c.stage)
	}
	if len(c.neighbour)+1 < c.cfg.Threshold {
		return nil, perr(op, c.self, ErrBelowThreshold, "%d neighbours with keys and itself, need t = %d", len(c.neighbour), c.cfg.Threshold)
	}
	idx := c.peerIndices(func(*peer) bool { return true })
	xs := []uint32{uint32(c.idx + 1)}
	for _, j := range idx {
		xs = append(xs, uint32(j+1))
	}
	selfShares, err := Split(c.seed[:], c.cfg.Threshold, xs, c.rng)
	if err != nil {
		return nil, err
	}
	maskShares, err := Split(c.maskKey.Private(), c.cfg.Threshold, xs, c.rng)
	if err != nil {
		return nil, err
	}
	c.ownSelf = selfShares[0].Y
	out := make([]SealedShare, 0, len(idx))
	for k, j := range idx {
		to := c.cfg.Parties[j]
		plain := sharePlain{X: xs[k+1], Self: selfShares[k+1].Y, Mask: maskShares[k+1].Y}
		s := SealedShare{Job: c.cfg.Job, Round: c.cfg.Round, From: c.self, To: to}
		if s.Ciphertext, err = SealTo(c.neighbour[j].ad.EncKey, s.context(), plain.encode()); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	c.stage = clientShared
	return out, nil
}

// AcceptShare takes one neighbour's sealed share to this client. Shares
// after MaskInput are late: their sender's masks are not in this input.
func (c *Client) AcceptShare(s SealedShare) error {
	const op = "client.accept-share"
	switch {
	case c.stage > clientShared:
		return perr(op, s.From, ErrLate, "masked input already sent")
	case c.stage != clientShared:
		return perr(op, s.From, ErrState, "shares not yet sent")
	case s.To != c.self:
		return perr(op, s.From, ErrMismatch, "share addressed to %s", s.To)
	}
	if err := c.cfg.checkRound(op, s.From, s.Job, s.Round); err != nil {
		return err
	}
	j := c.cfg.Index(s.From)
	p, ok := c.neighbour[j]
	if j < 0 || !ok {
		return perr(op, s.From, ErrMismatch, "not a neighbour with keys")
	}
	if p.raw != nil {
		if bytes.Equal(p.raw.Ciphertext, s.Ciphertext) {
			return nil
		}
		return perr(op, s.From, ErrMismatch, "a second, different share")
	}
	pt, err := OpenFrom(c.encKey, s.context(), s.Ciphertext)
	if err != nil {
		return err
	}
	plain, err := decodeSharePlain(pt)
	if err != nil {
		return &Error{Op: op, Party: s.From, Err: err}
	}
	if plain.X != uint32(c.idx+1) {
		return perr(op, s.From, ErrMismatch, "share at x = %d, this client's is %d", plain.X, c.idx+1)
	}
	p.share, p.raw = &plain, &s
	return nil
}

// MaskInput masks the encoded input x (mod 2^b, Config.VectorLen words)
// with the self mask and the pairwise masks of every neighbour whose share
// it accepted, and closes the shares.
func (c *Client) MaskInput(x []uint32) (MaskedInput, error) {
	const op = "client.mask"
	if c.stage != clientShared {
		return MaskedInput{}, perr(op, c.self, ErrState, "not ready to mask (stage %d)", c.stage)
	}
	if len(x) != c.cfg.VectorLen {
		return MaskedInput{}, perr(op, c.self, ErrMalformed, "%d words, want %d", len(x), c.cfg.VectorLen)
	}
	m := wordMask(c.cfg.Bits)
	for i, v := range x {
		if v&^m != 0 {
			return MaskedInput{}, perr(op, c.self, ErrMalformed, "word %d is %d, not below 2^%d", i, v, c.cfg.Bits)
		}
	}
	peers := c.peerIndices(func(p *peer) bool { return p.share != nil })
	if len(peers)+1 < c.cfg.Threshold {
		return MaskedInput{}, perr(op, c.self, ErrBelowThreshold, "shares from %d neighbours and itself, need t = %d", len(peers), c.cfg.Threshold)
	}
	self, err := SelfSeed(c.seed, c.cfg.Job, c.cfg.Round, c.self)
	if err != nil {
		return MaskedInput{}, err
	}
	terms := []MaskTerm{{Seed: self}}
	names := make([]string, len(peers))
	for k, j := range peers {
		// The lower index adds the pair's mask, the higher subtracts it.
		terms = append(terms, MaskTerm{Seed: c.neighbour[j].pair, Negate: j < c.idx})
		names[k] = c.cfg.Parties[j]
	}
	y := make([]uint32, len(x))
	if err := addMasks(y, c.cfg.Bits, [][]uint32{x}, terms, runtime.GOMAXPROCS(0)); err != nil {
		return MaskedInput{}, err
	}
	c.stage = clientMasked
	return MaskedInput{
		Job: c.cfg.Job, Round: c.cfg.Round, Party: c.self, Peers: names,
		SeedCommit: seedCommit(c.cfg.Job, c.cfg.Round, c.self, c.seed), Bits: c.cfg.Bits, Vector: y,
	}, nil
}

// Unmask answers the server's signed list with this client's shares: of
// each survivor's self-mask seed and of each dropout's mask key that it
// holds. It refuses, and counts, a list that is not the aggregator's or not
// of this round, one naming a party both survivor and dropout, one with
// fewer than t survivors, one not naming this client a survivor, and any
// list after the first that differs from it (the same list again gets the
// same answer). It never reveals both kinds of share of one party.
func (c *Client) Unmask(l SignedList) (Reveal, error) {
	if c.stage != clientMasked && c.stage != clientRevealed {
		return Reveal{}, perr("client.unmask", c.self, ErrState, "no masked input sent (stage %d)", c.stage)
	}
	canon := l.Bytes()
	if len(l.Sig) == 0 {
		return Reveal{}, c.refuse(RefusedBadList, "unsigned list")
	}
	if err := c.verifier.Verify(c.cfg.Aggregator, canon, l.Sig); err != nil {
		return Reveal{}, c.refuse(RefusedBadList, "list not signed by the aggregator "+c.cfg.Aggregator+": "+err.Error())
	}
	if c.stage == clientRevealed {
		if bytes.Equal(canon, c.listBytes) {
			return c.reveal, nil
		}
		return Reveal{}, c.refuse(RefusedConflictingList, "a second list for the round that differs from the one answered")
	}
	if l.Job != c.cfg.Job || l.Round != c.cfg.Round || l.ConfigDigest != c.digest {
		return Reveal{}, c.refuse(RefusedBadList, "list of another job, round or configuration")
	}
	if !sortedUnique(l.Survivors) || !sortedUnique(l.Dropouts) {
		return Reveal{}, c.refuse(RefusedBadList, "lists not sorted and unique")
	}
	surv := make(map[int]bool, len(l.Survivors))
	for _, p := range l.Survivors {
		j := c.cfg.Index(p)
		if j < 0 {
			return Reveal{}, c.refuse(RefusedBadList, "survivor "+p+" not in the cohort")
		}
		surv[j] = true
	}
	drop := make(map[int]bool, len(l.Dropouts))
	for _, p := range l.Dropouts {
		j := c.cfg.Index(p)
		switch {
		case j < 0:
			return Reveal{}, c.refuse(RefusedBadList, "dropout "+p+" not in the cohort")
		case surv[j]:
			return Reveal{}, c.refuse(RefusedBothLists, p+" is listed both as survivor and as dropout")
		}
		drop[j] = true
	}
	if !surv[c.idx] {
		return Reveal{}, c.refuse(RefusedSelfDropped, "this client is not listed as a survivor")
	}
	if len(surv) < c.cfg.Threshold {
		return Reveal{}, c.refuse(RefusedBelowThreshold, "fewer than t survivors listed")
	}
	r := Reveal{Job: c.cfg.Job, Round: c.cfg.Round, From: c.self}
	kinds := map[int]shareKind{}
	for _, j := range sortedKeys(surv) {
		switch {
		case j == c.idx:
			r.Self = append(r.Self, PartyShare{Party: c.self, Y: c.ownSelf})
		case c.neighbour[j] != nil && c.neighbour[j].share != nil:
			r.Self = append(r.Self, PartyShare{Party: c.cfg.Parties[j], Y: c.neighbour[j].share.Self})
		default:
			continue
		}
		kinds[j] = kindSelf
	}
	for _, j := range sortedKeys(drop) {
		if p := c.neighbour[j]; p != nil && p.share != nil {
			r.Mask = append(r.Mask, PartyShare{Party: c.cfg.Parties[j], Y: p.share.Mask})
			kinds[j] = kindMask
		}
	}
	for j, k := range kinds {
		if prev, ok := c.revealed[j]; ok && prev != k {
			return Reveal{}, c.refuse(RefusedBothKinds, "would reveal both share kinds of "+c.cfg.Parties[j])
		}
	}
	for j, k := range kinds {
		c.revealed[j] = k
	}
	c.listBytes, c.reveal, c.stage = canon, r, clientRevealed
	return r, nil
}

func (c *Client) refuse(r Refusal, detail string) error {
	c.refusals[r]++
	return &RefusalError{Reason: r, Detail: c.self + ": " + detail}
}

// peerIndices are the neighbours satisfying keep, sorted.
func (c *Client) peerIndices(keep func(*peer) bool) []int {
	var out []int
	for j, p := range c.neighbour {
		if keep(p) {
			out = append(out, j)
		}
	}
	sort.Ints(out)
	return out
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// seedCommit commits to a party's self-mask seed (256 bits of entropy, so
// the hash hides it) for the server to check the seed it reconstructs.
func seedCommit(job string, round uint64, party string, seed Seed) [32]byte {
	var e enc
	e.tag("gfsa1:commit")
	e.str(job)
	e.u64(round)
	e.str(party)
	e.fixed(seed[:])
	return sha256.Sum256(e.b)
}
