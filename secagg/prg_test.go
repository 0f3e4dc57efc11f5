package secagg

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
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

// RFC 8439 §2.4.2: the sunscreen vector (key 00..1f, counter 1), for
// ChaCha20 as the graph's permutation and stochastic rounding read it.
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

// NIST SP 800-38A F.5.5 (CTR-AES256.Encrypt): crypto/aes and
// crypto/cipher's CTR as AddMask calls them, the 128-bit counter
// incremented big-endian across the whole block.
func TestAES256CTRSP80038A(t *testing.T) {
	key := unhex(t, "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
	iv := unhex(t, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
	pt := unhex(t, "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"+
		"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
	want := unhex(t, "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"+
		"2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6")
	blk, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(pt))
	cipher.NewCTR(blk, iv).XORKeyStream(got, pt)
	if !bytes.Equal(got, want) {
		t.Fatalf("AES-256-CTR, SP 800-38A F.5.5:\n got %x\nwant %x", got, want)
	}
	// The second block's counter is f0…fdff00: the carry crosses bytes,
	// and a stream started there (as a worker seeks) gives that block.
	ks := make([]byte, 16)
	iv2 := unhex(t, "f0f1f2f3f4f5f6f7f8f9fafbfcfdff00")
	cipher.NewCTR(blk, iv2).XORKeyStream(ks, pt[16:32])
	if !bytes.Equal(ks, want[16:32]) {
		t.Fatalf("second block from its own counter: %x, want %x", ks, want[16:32])
	}
}

// The mask of the all-zero seed: AES-256 under the zero key of the
// counter blocks 0, 1, 2, 3 (block 0 is FIPS 197's well-known
// dc95c078…; all four checked with openssl enc -aes-256-ctr), read as
// little-endian words.
func TestMaskAES256ZeroKey(t *testing.T) {
	stream := unhex(t, "dc95c078a2408989ad48a21492842087530f8afbc74536b9a963b4f1c4cb738b"+
		"cea7403d4d606b6e074ec5d3baf39d18726003ca37a62a74d1a2f58e7506358e")
	m, err := Mask(Seed{}, 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range m {
		if want := binary.LittleEndian.Uint32(stream[4*i:]); w != want {
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

// Split across workers, the masks are the one keystream: any worker
// count, any length (not a multiple of 4 or of a chunk), equals
// crypto/cipher's CTR read from the start, with addends and negation.
func TestAddMasksParallelIsSerial(t *testing.T) {
	var s1, s2 Seed
	s1[0], s2[31] = 7, 9
	for _, n := range []int{0, 1, 5, maskChunk + 3, 3*maskSpan + 4097} {
		ref := make([]uint32, n)
		x := make([]uint32, n)
		for i := range x {
			x[i] = uint32(i) * 2654435761
		}
		for _, s := range []struct {
			seed Seed
			sign uint32
		}{{s1, 1}, {s2, ^uint32(0)}} {
			blk, _ := aes.NewCipher(s.seed[:])
			ks := make([]byte, 4*n)
			cipher.NewCTR(blk, make([]byte, 16)).XORKeyStream(ks, ks)
			for i := range ref {
				ref[i] += s.sign * binary.LittleEndian.Uint32(ks[4*i:])
			}
		}
		for _, bits := range []int{29, 32} {
			want := make([]uint32, n)
			for i := range want {
				want[i] = (x[i] + ref[i]) & wordMask(bits)
			}
			for _, workers := range []int{1, 2, 3, 7} {
				got := make([]uint32, n)
				terms := []MaskTerm{{Seed: s1}, {Seed: s2, Negate: true}}
				if err := addMasks(got, bits, [][]uint32{x}, terms, workers); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("n=%d b=%d workers=%d word %d: %x, want %x", n, bits, workers, i, got[i], want[i])
					}
				}
			}
		}
	}
	if err := addMasks(make([]uint32, 3), 32, [][]uint32{make([]uint32, 2)}, nil, 1); err == nil {
		t.Fatal("an addend of the wrong length accepted")
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
	"d4c96b4e48842655271f2d66af1035be",                                 // Mask(pairwise, 4, 32), as openssl enc -aes-256-ctr
	"000345d80006c0800003831e000c696f",                                 // Mask(self, 4, 20), likewise
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
