package secagg

import (
	"bytes"
	"errors"
	"testing"
)

// Every decoder of wire bytes: no panic, and whatever it accepts encodes
// back to the same bytes (the encoding is canonical).

func seedMessages(t testing.TB) (ad SignedAdvertisement, share SealedShare, plain sharePlain, m MaskedInput, l SignedList, rev Reveal) {
	kr, signers := newKeyring(t, "agg", "bank-0", "bank-1")
	_ = kr
	rng := newDetRand("fuzz")
	e, _ := GenerateKeyPair(rng)
	k, _ := GenerateKeyPair(rng)
	ad, _ = SignAdvertisement(Advertisement{Job: "job", Party: "bank-0", Round: 1, EncKey: e.Public(), MaskKey: k.Public()}, signers["bank-0"])
	plain = sharePlain{X: 2, Self: bytes.Repeat([]byte{1}, shareY), Mask: bytes.Repeat([]byte{2}, shareY)}
	share = SealedShare{Job: "job", Round: 1, From: "bank-0", To: "bank-1"}
	share.Ciphertext, _ = SealTo(e.Public(), share.context(), plain.encode())
	m = MaskedInput{Job: "job", Round: 1, Party: "bank-0", Peers: []string{"bank-1", "bank-2"}, Vector: []uint32{1, 2, 0xffffffff}}
	l = SignedList{List: List{Job: "job", Round: 1, Survivors: []string{"bank-0", "bank-1"}, Dropouts: []string{"bank-2"}}}
	l.Sig, _ = signers["agg"].Sign(l.Bytes())
	rev = Reveal{Job: "job", Round: 1, From: "bank-0",
		Self: []PartyShare{{Party: "bank-0", Y: plain.Self}, {Party: "bank-1", Y: plain.Mask}},
		Mask: []PartyShare{{Party: "bank-2", Y: plain.Self}}}
	return
}

func fuzzCanonical[T any](f *testing.F, seed []byte, decode func([]byte) (T, error), encode func(T) []byte) {
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add(append(append([]byte(nil), seed...), 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decode(b)
		if err != nil {
			return
		}
		if out := encode(v); !bytes.Equal(out, b) {
			t.Fatalf("decode accepted %x, which encodes as %x", b, out)
		}
	})
}

func FuzzDecodeSignedAdvertisement(f *testing.F) {
	ad, _, _, _, _, _ := seedMessages(f)
	fuzzCanonical(f, ad.Encode(), DecodeSignedAdvertisement, func(a SignedAdvertisement) []byte { return a.Encode() })
}

func FuzzDecodeSealedShare(f *testing.F) {
	_, s, _, _, _, _ := seedMessages(f)
	fuzzCanonical(f, s.Encode(), DecodeSealedShare, func(s SealedShare) []byte { return s.Encode() })
}

func FuzzDecodeSharePlaintext(f *testing.F) {
	_, _, p, _, _, _ := seedMessages(f)
	fuzzCanonical(f, p.encode(), decodeSharePlain, func(p sharePlain) []byte { return p.encode() })
}

func FuzzDecodeMaskedInput(f *testing.F) {
	_, _, _, m, _, _ := seedMessages(f)
	for _, b := range []int{1, 5, 29, 31} { // packed widths, padded and not
		p := m
		p.Bits = b
		p.Vector = []uint32{1, 0, uint32(wordMask(b)), 1 & wordMask(b), 0, 1, 1}
		f.Add(p.Encode())
		enc := p.Encode()
		enc[len(enc)-1] |= 0x80 // a padding bit, where there is padding
		f.Add(enc)
	}
	fuzzCanonical(f, m.Encode(), DecodeMaskedInput, func(m MaskedInput) []byte { return m.Encode() })
}

// Packing at every width: unpack∘pack is the identity, pack∘unpack too on
// every accepted input, and a set padding bit is refused.
func FuzzPackWords(f *testing.F) {
	f.Add(uint8(29), []byte{0xff, 0x01, 0x80, 0x7f, 0x12, 0x34, 0x56, 0x78, 0x9a})
	f.Add(uint8(1), []byte{0xaa})
	f.Add(uint8(32), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint8(7), []byte{})
	f.Fuzz(func(t *testing.T, bits uint8, raw []byte) {
		b := int(bits%32) + 1
		// raw as packed bytes: accepted iff the padding is zero.
		n := len(raw) * 8 / b
		if packedLen(n, b) == len(raw) {
			w, ok := unpackWords(raw, n, b)
			pad := len(raw)*8 - n*b
			wantOK := pad == 0 || raw[len(raw)-1]>>(8-pad) == 0
			if ok != wantOK {
				t.Fatalf("b=%d %x: ok %v, padding %d bits", b, raw, ok, pad)
			}
			if ok {
				out := make([]byte, len(raw))
				packWords(out, w, b)
				if !bytes.Equal(out, raw) {
					t.Fatalf("b=%d: %x unpacks and packs as %x", b, raw, out)
				}
			}
		}
		// raw as words: pack then unpack.
		w := make([]uint32, len(raw)/4)
		for i := range w {
			w[i] = (uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24) & wordMask(b)
		}
		p := make([]byte, packedLen(len(w), b))
		packWords(p, w, b)
		back, ok := unpackWords(p, len(w), b)
		if !ok || len(back) != len(w) {
			t.Fatalf("b=%d: packed words refused", b)
		}
		for i := range w {
			if back[i] != w[i] {
				t.Fatalf("b=%d word %d: %x back as %x", b, i, w[i], back[i])
			}
		}
	})
}

func FuzzDecodeSignedList(f *testing.F) {
	_, _, _, _, l, _ := seedMessages(f)
	fuzzCanonical(f, l.Encode(), DecodeSignedList, func(l SignedList) []byte { return l.Encode() })
}

func FuzzDecodeReveal(f *testing.F) {
	_, _, _, _, _, r := seedMessages(f)
	fuzzCanonical(f, r.Encode(), DecodeReveal, func(r Reveal) []byte { return r.Encode() })
}

func TestMaskedInputPacking(t *testing.T) {
	_, _, _, m, _, _ := seedMessages(t)
	for b := 1; b <= 32; b++ {
		for _, n := range []int{0, 1, 7, 8, 9, 33, 1000} {
			p := m
			p.Bits = b
			p.Vector = make([]uint32, n)
			for i := range p.Vector {
				p.Vector[i] = uint32(i*2654435761+b) & wordMask(b)
			}
			raw := p.Encode()
			head := len(raw) - packedLen(n, b)
			if got := len(raw) - head; got != (n*b+7)/8 {
				t.Fatalf("b=%d n=%d: %d vector bytes", b, n, got)
			}
			back, err := DecodeMaskedInput(raw)
			if err != nil {
				t.Fatalf("b=%d n=%d: %v", b, n, err)
			}
			if back.Bits != b || len(back.Vector) != n {
				t.Fatalf("b=%d n=%d: decoded b=%d, %d words", b, n, back.Bits, len(back.Vector))
			}
			for i := range p.Vector {
				if back.Vector[i] != p.Vector[i] {
					t.Fatalf("b=%d n=%d word %d: %x, want %x", b, n, i, back.Vector[i], p.Vector[i])
				}
			}
			if _, err := DecodeMaskedInput(append(raw, 0)); err == nil {
				t.Fatalf("b=%d n=%d: a trailing byte accepted", b, n)
			}
			if n > 0 {
				if _, err := DecodeMaskedInput(raw[:len(raw)-1]); err == nil {
					t.Fatalf("b=%d n=%d: a short vector accepted", b, n)
				}
			}
			if pad := 8*packedLen(n, b) - n*b; pad > 0 {
				bad := append([]byte(nil), raw...)
				bad[len(bad)-1] |= 1 << (7 - pad/2)
				if _, err := DecodeMaskedInput(bad); !errors.Is(err, ErrMalformed) {
					t.Fatalf("b=%d n=%d: a set padding bit: %v", b, n, err)
				}
			}
		}
	}
	// The width byte: 0 and 33 refused.
	p := m
	p.Bits, p.Vector = 8, []uint32{1, 2, 255}
	raw := p.Encode()
	at := len(raw) - packedLen(len(p.Vector), 8) - 5
	if raw[at] != 8 {
		t.Fatalf("width byte at %d is %d", at, raw[at])
	}
	for _, w := range []byte{0, 33, 255} {
		bad := append([]byte(nil), raw...)
		bad[at] = w
		if _, err := DecodeMaskedInput(bad); !errors.Is(err, ErrMalformed) {
			t.Fatalf("width %d: %v", w, err)
		}
	}
	// A word that does not fit in Bits: written, losslessly, at 32 bits.
	p.Vector = []uint32{1, 256}
	back := must(DecodeMaskedInput(p.Encode()))
	if back.Bits != 32 || back.Vector[1] != 256 {
		t.Fatalf("an oversize word: decoded b=%d %v", back.Bits, back.Vector)
	}
}
