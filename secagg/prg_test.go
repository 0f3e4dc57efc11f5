package secagg

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"golang.org/x/crypto/chacha20"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 8439 §2.4.2: the sunscreen vector (key 00..1f, counter 1).
func TestChaCha20RFC8439(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	nonce := unhex(t, "000000000000004a00000000")
	pt := []byte("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")
	want := unhex(t, "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d")
	c, err := chacha20.NewUnauthenticatedCipher(key, nonce)
	if err != nil {
		t.Fatal(err)
	}
	c.SetCounter(1)
	got := make([]byte, len(pt))
	c.XORKeyStream(got, pt)
	if !bytes.Equal(got, want) {
		t.Fatalf("chacha20 sunscreen vector:\n got %x\nwant %x", got, want)
	}
}

// RFC 8439 A.1 #1: all-zero key, nonce and counter — exactly the stream
// Mask reads for an all-zero seed.
func TestMaskRFC8439ZeroKey(t *testing.T) {
	block := unhex(t, "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")
	m, err := Mask(Seed{}, 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range m {
		want := uint32(block[4*i]) | uint32(block[4*i+1])<<8 | uint32(block[4*i+2])<<16 | uint32(block[4*i+3])<<24
		if w != want {
			t.Fatalf("word %d: %08x, want %08x", i, w, want)
		}
	}
	m8, _ := Mask(Seed{}, 16, 8)
	for i := range m8 {
		if m8[i] != m[i]&0xff {
			t.Fatalf("b=8 word %d: %x, want %x", i, m8[i], m[i]&0xff)
		}
	}
}

// RFC 5869 A.1: crypto/hkdf as PairwiseSeed calls it.
func TestHKDFRFC5869(t *testing.T) {
	okm, err := hkdf.Key(sha256.New, unhex(t, "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"),
		unhex(t, "000102030405060708090a0b0c"), string(unhex(t, "f0f1f2f3f4f5f6f7f8f9")), 42)
	if err != nil {
		t.Fatal(err)
	}
	if want := "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"; hex.EncodeToString(okm) != want {
		t.Fatalf("hkdf: %x, want %s", okm, want)
	}
}

// Known answers of the seeds and masks, pinned: a change to the derivation
// is a change of protocol version.
func TestSeedKnownAnswers(t *testing.T) {
	shared := make([]byte, 32)
	for i := range shared {
		shared[i] = byte(0xa0 + i)
	}
	ab, err := PairwiseSeed(shared, "job-1", 7, "bank-a", "bank-b")
	if err != nil {
		t.Fatal(err)
	}
	ba, _ := PairwiseSeed(shared, "job-1", 7, "bank-b", "bank-a")
	if ab != ba {
		t.Fatal("pairwise seed depends on the order of the pair")
	}
	for _, other := range []struct {
		job  string
		r    uint64
		a, b string
	}{{"job-2", 7, "bank-a", "bank-b"}, {"job-1", 8, "bank-a", "bank-b"}, {"job-1", 7, "bank-a", "bank-c"}} {
		s, _ := PairwiseSeed(shared, other.job, other.r, other.a, other.b)
		if s == ab {
			t.Fatalf("seed not bound to %+v", other)
		}
	}
	self, err := SelfSeed(Seed(shared), "job-1", 7, "bank-a")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := Mask(ab, 4, 32)
	m20, _ := Mask(self, 4, 20)
	got := []string{hex.EncodeToString(ab[:]), hex.EncodeToString(self[:]), hexWords(m), hexWords(m20)}
	want := pinnedSeeds
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("known answer %d: %s, want %s", i, got[i], want[i])
		}
	}
	if _, err := PairwiseSeed(shared, "j", 1, "a", "a"); err == nil {
		t.Fatal("a pair with itself accepted")
	}
}

func hexWords(w []uint32) string {
	var b []byte
	for _, v := range w {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return hex.EncodeToString(b)
}

var pinnedSeeds = []string{
	"6278700d6449ca04f6c45bd22b015a3ffcdd2626c2a40dc24f42d7b4303d4821", // PairwiseSeed
	"68a2c718de72c4594d64438b7770b071b0f68dddcdeae562d9ff310469bdf39a", // SelfSeed
	"a53a5ccabd2d39e847ae70023e91fd83",                                 // Mask(pairwise, 4, 32)
	"000c59fc0006e8ea00016f87000708a7",                                 // Mask(self, 4, 20)
}

// The pairwise info string, spelled out: the wire format of the binding.
func TestPairwiseInfoLayout(t *testing.T) {
	shared := make([]byte, 32)
	for i := range shared {
		shared[i] = byte(0xa0 + i)
	}
	info := "graphfed/secagg/v1 pairwise mask" +
		"\x00\x00\x00\x05job-1" + "\x00\x00\x00\x00\x00\x00\x00\x07" +
		"\x00\x00\x00\x06bank-a" + "\x00\x00\x00\x06bank-b"
	want, err := hkdf.Key(sha256.New, shared, nil, info, 32)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := PairwiseSeed(shared, "job-1", 7, "bank-b", "bank-a")
	if !bytes.Equal(got[:], want) {
		t.Fatalf("pairwise seed %x, want HKDF-SHA256(secret, no salt, info) = %x", got, want)
	}
}

func TestAddMaskCancels(t *testing.T) {
	var s Seed
	s[0] = 1
	for _, bits := range []int{1, 7, 31, 32} {
		x := make([]uint32, 100_003) // crosses chunk boundaries
		for i := range x {
			x[i] = uint32(i*2654435761) & wordMask(bits)
		}
		y := append([]uint32(nil), x...)
		if err := AddMask(y, s, bits, false); err != nil {
			t.Fatal(err)
		}
		if err := AddMask(y, s, bits, true); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("b=%d word %d: %d after mask and unmask, want %d", bits, i, y[i], x[i])
			}
		}
	}
	if err := AddMask(nil, s, 33, false); err == nil {
		t.Fatal("b = 33 accepted")
	}
}
