package secagg

import (
	"bytes"
	"errors"
	"testing"
)

func testAd(t *testing.T, party string) (Advertisement, *KeyPair) {
	t.Helper()
	rng := newDetRand("ad-" + party)
	e, _ := GenerateKeyPair(rng)
	m, _ := GenerateKeyPair(rng)
	return Advertisement{Job: "job", Party: party, Round: 3, EncKey: e.Public(), MaskKey: m.Public()}, e
}

func TestAdvertisementSignatures(t *testing.T) {
	kr, signers := newKeyring(t, "bank-0", "bank-1")
	ad, _ := testAd(t, "bank-0")
	good, err := SignAdvertisement(ad, signers["bank-0"])
	if err != nil {
		t.Fatal(err)
	}
	if err := good.Verify(kr); err != nil {
		t.Fatalf("good advertisement: %v", err)
	}
	back, err := DecodeSignedAdvertisement(good.Encode())
	if err != nil || !bytes.Equal(back.Encode(), good.Encode()) {
		t.Fatalf("round trip: %v", err)
	}
	forged, _ := SignAdvertisement(ad, signers["bank-1"]) // bank-1 signs bank-0's keys
	unsigned := good
	unsigned.Sig = nil
	tampered := good
	tampered.MaskKey = append([]byte(nil), good.MaskKey...)
	tampered.MaskKey[0] ^= 1
	otherRound := good
	otherRound.Round = 4
	for name, a := range map[string]SignedAdvertisement{"signed by another party": forged, "unsigned": unsigned, "tampered key": tampered, "replayed into another round": otherRound} {
		if err := a.Verify(kr); !errors.Is(err, ErrSignature) {
			t.Errorf("%s: %v, want a signature refusal", name, err)
		}
	}
	unknown, _ := testAd(t, "bank-9")
	u, _ := SignAdvertisement(unknown, signers["bank-0"])
	if err := u.Verify(kr); !errors.Is(err, ErrSignature) {
		t.Errorf("party not in the keyring: %v", err)
	}
}

func TestSealBindsContext(t *testing.T) {
	rng := newDetRand("seal")
	alice, _ := GenerateKeyPair(rng)
	mallory, _ := GenerateKeyPair(rng)
	ctx := ShareContext{Job: "job", Round: 1, From: "bank-1", To: "bank-0"}
	msg := []byte("two shares")
	sealed, err := SealTo(alice.Public(), ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := OpenFrom(alice, ctx, sealed); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("open: %q, %v", got, err)
	}
	flip := append([]byte(nil), sealed...)
	flip[len(flip)-1] ^= 1
	cases := map[string]struct {
		k   *KeyPair
		ctx ShareContext
		ct  []byte
	}{
		"wrong recipient key": {mallory, ctx, sealed},
		"other job":           {alice, ShareContext{"job2", 1, "bank-1", "bank-0"}, sealed},
		"other round":         {alice, ShareContext{"job", 2, "bank-1", "bank-0"}, sealed},
		"other sender":        {alice, ShareContext{"job", 1, "bank-2", "bank-0"}, sealed},
		"other recipient id":  {alice, ShareContext{"job", 1, "bank-1", "bank-3"}, sealed},
		"tampered":            {alice, ctx, flip},
		"truncated":           {alice, ctx, sealed[:10]},
	}
	for name, c := range cases {
		if _, err := OpenFrom(c.k, c.ctx, c.ct); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
	// Upload cost of one sealed share: encapsulation, plaintext, tag.
	if len(sealed) != sealEncSize+len(msg)+16 {
		t.Fatalf("sealed %d bytes", len(sealed))
	}
}

func TestKeyPairECDH(t *testing.T) {
	rng := newDetRand("ecdh")
	a, _ := GenerateKeyPair(rng)
	b, _ := GenerateKeyPair(rng)
	ab, err1 := a.ECDH(b.Public())
	ba, err2 := b.ECDH(a.Public())
	if err1 != nil || err2 != nil || !bytes.Equal(ab, ba) {
		t.Fatalf("ecdh: %v %v", err1, err2)
	}
	if _, err := a.ECDH(make([]byte, 32)); err == nil {
		t.Fatal("low-order (zero) peer key accepted")
	}
	back, _ := NewKeyPair(a.Private())
	if !bytes.Equal(back.Public(), a.Public()) {
		t.Fatal("private key does not round-trip")
	}
}
