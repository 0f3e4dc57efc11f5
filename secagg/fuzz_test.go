package secagg

import (
	"bytes"
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
	fuzzCanonical(f, m.Encode(), DecodeMaskedInput, func(m MaskedInput) []byte { return m.Encode() })
}

func FuzzDecodeSignedList(f *testing.F) {
	_, _, _, _, l, _ := seedMessages(f)
	fuzzCanonical(f, l.Encode(), DecodeSignedList, func(l SignedList) []byte { return l.Encode() })
}

func FuzzDecodeReveal(f *testing.F) {
	_, _, _, _, _, r := seedMessages(f)
	fuzzCanonical(f, r.Encode(), DecodeReveal, func(r Reveal) []byte { return r.Encode() })
}
