package secagg

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
// reconstructs. Bits is the round's b (Config.Bits; 0 means 32): every
// word is below 2^Bits.
type MaskedInput struct {
	Job        string
	Round      uint64
	Party      string
	Peers      []string // sorted
	SeedCommit [32]byte
	Bits       int
	Vector     []uint32
}

// bits is the word width, Bits with 0 read as 32.
func (m *MaskedInput) bits() int {
	if m.Bits == 0 {
		return 32
	}
	return m.Bits
}

// Encode is the wire encoding: the header, the width b in one byte, the
// word count, then the words packed at b bits each, least significant
// bit first (word i is bits i·b … i·b+b−1 of the packed bytes read as one
// little-endian integer), the last byte padded with zero bits. A vector
// of d words costs ⌈d·b/8⌉ bytes: b/32 of its float32 update. A word
// that does not fit in Bits (a caller's bug: MaskInput's always fit)
// cannot be written at that width; Encode then writes every word at 32
// bits, so the message decodes with Bits = 32, which the server refuses
// for a round of another b. Bits outside 0..32 is written as 32 likewise.
func (m *MaskedInput) Encode() []byte {
	b := m.bits()
	if b < 1 || b > 32 {
		b = 32
	} else if b < 32 {
		wm := wordMask(b)
		for _, v := range m.Vector {
			if v&^wm != 0 {
				b = 32
				break
			}
		}
	}
	var e enc
	e.tag(tagMasked)
	e.str(m.Job)
	e.u64(m.Round)
	e.str(m.Party)
	e.strs(m.Peers)
	e.fixed(m.SeedCommit[:])
	e.u8(uint8(b))
	e.u32(uint32(len(m.Vector)))
	n := packedLen(len(m.Vector), b)
	e.b = append(e.b, make([]byte, n)...)
	packWords(e.b[len(e.b)-n:], m.Vector, b)
	return e.b
}

// DecodeMaskedInput decodes Encode's bytes. It refuses a width outside
// 1..32, a packed vector of any length but ⌈d·b/8⌉ bytes and non-zero
// padding bits.
func DecodeMaskedInput(b []byte) (MaskedInput, error) {
	d := dec{b: b}
	var m MaskedInput
	d.tag(tagMasked)
	m.Job = d.id("job")
	m.Round = d.u64()
	m.Party = d.id("party")
	m.Peers = d.ids("peers")
	copy(m.SeedCommit[:], d.take(32, "seed commitment"))
	m.Bits = int(d.u8())
	if d.err == nil && (m.Bits < 1 || m.Bits > 32) {
		d.fail("masked input: b = %d bits, want 1..32", m.Bits)
	}
	n := d.count(maxVector, "vector")
	var raw []byte
	if d.err == nil {
		raw = d.take(packedLen(n, m.Bits), "vector")
	}
	if err := d.done("masked input"); err != nil {
		return MaskedInput{}, wrap("decode.masked", err)
	}
	var ok bool
	if m.Vector, ok = unpackWords(raw, n, m.Bits); !ok {
		return MaskedInput{}, errf("decode.masked", ErrMalformed, "masked input: non-zero padding bits after %d words of %d bits", n, m.Bits)
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
