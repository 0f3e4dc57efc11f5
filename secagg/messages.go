package secagg

import "encoding/binary"

// Wire messages other than the advertisement (keys.go). Each has an
// Encode and a Decode; decoders refuse trailing bytes, unsorted or
// duplicated lists and oversize fields, so that decode∘encode is the
// identity on every accepted input.

// SealedShare carries one party's two shares for one recipient: of its
// self-mask seed and of its mask private key, sealed to the recipient.
type SealedShare struct {
	Job        string
	Round      uint64
	From, To   string
	Ciphertext []byte
}

func (s *SealedShare) context() ShareContext {
	return ShareContext{Job: s.Job, Round: s.Round, From: s.From, To: s.To}
}

// Encode is the wire encoding.
func (s *SealedShare) Encode() []byte {
	var e enc
	e.tag(tagShare)
	e.str(s.Job)
	e.u64(s.Round)
	e.str(s.From)
	e.str(s.To)
	e.blob(s.Ciphertext)
	return e.b
}

// DecodeSealedShare decodes Encode's bytes.
func DecodeSealedShare(b []byte) (SealedShare, error) {
	d := dec{b: b}
	var s SealedShare
	d.tag(tagShare)
	s.Job = d.id("job")
	s.Round = d.u64()
	s.From = d.id("from")
	s.To = d.id("to")
	s.Ciphertext = d.blob("ciphertext")
	if err := d.done("sealed share"); err != nil {
		return SealedShare{}, wrap("decode.share", err)
	}
	if s.From == s.To {
		return SealedShare{}, errf("decode.share", ErrMalformed, "share from %s to itself", s.From)
	}
	return s, nil
}

// sharePlain is a sealed share's plaintext. Both shares have the
// x-coordinate of the recipient.
type sharePlain struct {
	X          uint32
	Self, Mask []byte // Share.Y of the self-mask seed and of the mask key
}

const shareY = 2 * ElementSize // a 32-byte secret is two chunks

func (p *sharePlain) encode() []byte {
	var e enc
	e.tag(tagSharePlain)
	e.u32(p.X)
	e.fixed(p.Self)
	e.fixed(p.Mask)
	return e.b
}

func decodeSharePlain(b []byte) (sharePlain, error) {
	d := dec{b: b}
	var p sharePlain
	d.tag(tagSharePlain)
	p.X = d.u32()
	p.Self = d.fixed(shareY, "self-mask share")
	p.Mask = d.fixed(shareY, "mask-key share")
	if err := d.done("share plaintext"); err != nil {
		return sharePlain{}, wrap("decode.share-plaintext", err)
	}
	if p.X == 0 {
		return sharePlain{}, errf("decode.share-plaintext", ErrMalformed, "x = 0")
	}
	return p, nil
}

// MaskedInput is a party's masked vector. Peers are the neighbours whose
// shares it accepted, hence whose pairwise masks it added; SeedCommit
// commits to its self-mask seed, so that the server can check the seed it
// reconstructs.
type MaskedInput struct {
	Job        string
	Round      uint64
	Party      string
	Peers      []string // sorted
	SeedCommit [32]byte
	Vector     []uint32
}

// Encode is the wire encoding: 4 bytes a word, so a vector costs what its
// float32 update would.
func (m *MaskedInput) Encode() []byte {
	var e enc
	e.tag(tagMasked)
	e.str(m.Job)
	e.u64(m.Round)
	e.str(m.Party)
	e.strs(m.Peers)
	e.fixed(m.SeedCommit[:])
	e.u32(uint32(len(m.Vector)))
	e.b = append(e.b, make([]byte, 4*len(m.Vector))...)
	w := e.b[len(e.b)-4*len(m.Vector):]
	for i, v := range m.Vector {
		binary.LittleEndian.PutUint32(w[4*i:], v)
	}
	return e.b
}

// DecodeMaskedInput decodes Encode's bytes.
func DecodeMaskedInput(b []byte) (MaskedInput, error) {
	d := dec{b: b}
	var m MaskedInput
	d.tag(tagMasked)
	m.Job = d.id("job")
	m.Round = d.u64()
	m.Party = d.id("party")
	m.Peers = d.ids("peers")
	copy(m.SeedCommit[:], d.take(32, "seed commitment"))
	n := d.count(maxVector, "vector")
	raw := d.take(4*n, "vector")
	if err := d.done("masked input"); err != nil {
		return MaskedInput{}, wrap("decode.masked", err)
	}
	m.Vector = make([]uint32, n)
	for i := range m.Vector {
		m.Vector[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return m, nil
}

// List is the server's one list of a round: the survivors, whose inputs
// are summed and whose self masks are removed, and the dropouts, whose
// pairwise masks with the survivors are removed.
type List struct {
	Job          string
	Round        uint64
	ConfigDigest [32]byte
	Survivors    []string // sorted
	Dropouts     []string // sorted
}

// SignedList is a list and the aggregator's signature over its Bytes.
type SignedList struct {
	List
	Sig []byte
}

// Bytes is the canonical encoding that the aggregator signs.
func (l *List) Bytes() []byte {
	var e enc
	e.tag(tagList)
	e.str(l.Job)
	e.u64(l.Round)
	e.fixed(l.ConfigDigest[:])
	e.strs(l.Survivors)
	e.strs(l.Dropouts)
	return e.b
}

// Encode is the wire encoding.
func (s *SignedList) Encode() []byte {
	var e enc
	e.b = s.Bytes()
	e.blob(s.Sig)
	return e.b
}

// DecodeSignedList decodes Encode's bytes; it checks the form, not the
// signature or the lists' disjointness (the client does, and counts).
func DecodeSignedList(b []byte) (SignedList, error) {
	d := dec{b: b}
	var s SignedList
	d.tag(tagList)
	s.Job = d.id("job")
	s.Round = d.u64()
	copy(s.ConfigDigest[:], d.take(32, "config digest"))
	s.Survivors = d.ids("survivors")
	s.Dropouts = d.ids("dropouts")
	s.Sig = d.blob("signature")
	if err := d.done("list"); err != nil {
		return SignedList{}, wrap("decode.list", err)
	}
	return s, nil
}

// PartyShare is a revealed share of one party's secret.
type PartyShare struct {
	Party string
	Y     []byte // Share.Y; its X is the revealer's
}

// Reveal is a survivor's answer to the list: its shares of the survivors'
// self-mask seeds and of the dropouts' mask keys, never both for one
// party.
type Reveal struct {
	Job   string
	Round uint64
	From  string
	Self  []PartyShare // sorted by party
	Mask  []PartyShare // sorted by party
}

// Encode is the wire encoding.
func (r *Reveal) Encode() []byte {
	var e enc
	e.tag(tagReveal)
	e.str(r.Job)
	e.u64(r.Round)
	e.str(r.From)
	for _, ps := range [2][]PartyShare{r.Self, r.Mask} {
		e.u32(uint32(len(ps)))
		for _, p := range ps {
			e.str(p.Party)
			e.fixed(p.Y)
		}
	}
	return e.b
}

// DecodeReveal decodes Encode's bytes.
func DecodeReveal(b []byte) (Reveal, error) {
	d := dec{b: b}
	var r Reveal
	d.tag(tagReveal)
	r.Job = d.id("job")
	r.Round = d.u64()
	r.From = d.id("from")
	r.Self = decodePartyShares(&d, "self-mask shares")
	r.Mask = decodePartyShares(&d, "mask-key shares")
	if err := d.done("reveal"); err != nil {
		return Reveal{}, wrap("decode.reveal", err)
	}
	return r, nil
}

func decodePartyShares(d *dec, what string) []PartyShare {
	n := d.count(maxParties, what)
	var out []PartyShare
	for i := 0; i < n && d.err == nil; i++ {
		p := PartyShare{Party: d.id(what), Y: d.fixed(shareY, what)}
		if d.err == nil && i > 0 && p.Party <= out[i-1].Party {
			d.fail("%s: %q after %q: not sorted or duplicated", what, p.Party, out[i-1].Party)
		}
		out = append(out, p)
	}
	return out
}

// checkRound checks a message's job and round against the configuration.
func (c *Config) checkRound(op, party, job string, round uint64) error {
	if job != c.Job || round != c.Round {
		return perr(op, party, ErrMismatch, "message of job %q round %d in job %q round %d", job, round, c.Job, c.Round)
	}
	return nil
}
