package secagg

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/chacha20"
)

// SeedSize is the size of every mask seed: a full ChaCha20 key. No seed is
// ever folded to fewer bits (the hole of flwrlabs/flower#7522).
const SeedSize = 32

// Seed is a 256-bit mask seed.
type Seed [SeedSize]byte

// HKDF info prefixes (domain separation). The salt is empty: the X25519
// secret is already uniform enough for HKDF-Extract, and the binding lives
// in info.
const (
	infoPairwise = "graphfed/secagg/v1 pairwise mask"
	infoSelf     = "graphfed/secagg/v1 self mask"
)

// PairwiseSeed derives the seed of the mask between parties a and b from
// their X25519 shared secret: HKDF-SHA256 with info binding the job, the
// round and the ordered pair (the lower id first), so both ends derive the
// same seed and no two rounds, jobs or pairs share one.
func PairwiseSeed(shared []byte, job string, round uint64, a, b string) (Seed, error) {
	if a == b {
		return Seed{}, errf("prg.pairwise", ErrMismatch, "a pair of %s with itself", a)
	}
	if len(shared) != KeySize {
		return Seed{}, errf("prg.pairwise", ErrMalformed, "shared secret of %d bytes, want %d", len(shared), KeySize)
	}
	lo, hi := a, b
	if hi < lo {
		lo, hi = hi, lo
	}
	var e enc
	e.tag(infoPairwise)
	e.str(job)
	e.u64(round)
	e.str(lo)
	e.str(hi)
	return hkdfSeed("prg.pairwise", shared, e.b)
}

// SelfSeed derives the seed of a party's self mask from its own secret
// 32-byte seed (the one it Shamir-shares), bound to job, round and party.
func SelfSeed(secret Seed, job string, round uint64, party string) (Seed, error) {
	var e enc
	e.tag(infoSelf)
	e.str(job)
	e.u64(round)
	e.str(party)
	return hkdfSeed("prg.self", secret[:], e.b)
}

func hkdfSeed(op string, secret, info []byte) (Seed, error) {
	k, err := hkdf.Key(sha256.New, secret, nil, string(info), SeedSize)
	if err != nil {
		return Seed{}, wrap(op, fmt.Errorf("hkdf: %w", err))
	}
	return Seed(k), nil
}

// wordMask is 2^bits − 1 as a uint32, bits in 1..32.
func wordMask(bits int) uint32 { return uint32(uint64(1)<<bits - 1) }

// maskChunk is the keystream read at a time when adding a mask: 64 KiB, so
// that a million-word mask costs no 4 MB buffer.
const maskChunk = 1 << 16

// AddMask adds (or, with negate, subtracts) the mask of seed to dst, word
// by word mod 2^bits. The mask is the ChaCha20 keystream (RFC 8439) under
// the seed as a 256-bit key, an all-zero nonce and block counter 0, read as
// little-endian uint32 words, each reduced mod 2^bits. A zero nonce is safe
// because every seed is a fresh HKDF output used for one stream.
func AddMask(dst []uint32, seed Seed, bits int, negate bool) error {
	if bits < 1 || bits > 32 {
		return errf("prg.mask", ErrMismatch, "b = %d bits, want 1..32", bits)
	}
	var nonce [chacha20.NonceSize]byte
	c, err := chacha20.NewUnauthenticatedCipher(seed[:], nonce[:])
	if err != nil {
		return wrap("prg.mask", fmt.Errorf("chacha20: %w", err))
	}
	m := wordMask(bits)
	buf := make([]byte, 4*min(len(dst), maskChunk/4))
	for len(dst) > 0 {
		n := min(len(dst), len(buf)/4)
		b := buf[:4*n]
		clear(b)
		c.XORKeyStream(b, b)
		if negate {
			for i := range n {
				dst[i] = (dst[i] - binary.LittleEndian.Uint32(b[4*i:])) & m
			}
		} else {
			for i := range n {
				dst[i] = (dst[i] + binary.LittleEndian.Uint32(b[4*i:])) & m
			}
		}
		dst = dst[n:]
	}
	return nil
}

// Mask is seed's mask of n words mod 2^bits (AddMask onto zeros).
func Mask(seed Seed, n, bits int) ([]uint32, error) {
	out := make([]uint32, n)
	if err := AddMask(out, seed, bits, false); err != nil {
		return nil, err
	}
	return out, nil
}
