package secagg

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
)

// SeedSize is the size of every mask seed: a full AES-256 key. No seed is
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

// maskChunk is the words of keystream a worker reads at a time from each
// mask: 16 KiB, so that the chunk of dst, its addends' and the keystream
// stay in cache while every mask is added to it.
const maskChunk = 1 << 12

// maskSpan is the fewest words worth a goroutine of their own.
const maskSpan = 1 << 15

// MaskTerm is one mask of a sum: seed's mask, added or (Negate)
// subtracted.
type MaskTerm struct {
	Seed   Seed
	Negate bool
}

// AddMask adds (or, with negate, subtracts) the mask of seed to dst, word
// by word mod 2^bits. The mask is the AES-256-CTR keystream (NIST SP
// 800-38A) under the seed as a 256-bit key, the initial counter block all
// zero (incremented as one 128-bit big-endian integer, as crypto/cipher's
// CTR does), read as little-endian uint32 words, each reduced mod 2^bits:
// word i is bytes 4i…4i+3 of the stream, in counter block ⌊i/4⌋. A zero
// initial counter is safe because every seed is a fresh HKDF output used
// for one stream of at most 2^28 words (2^26 blocks), far below the 2^64
// blocks after which AES's birthday bound would matter.
func AddMask(dst []uint32, seed Seed, bits int, negate bool) error {
	return AddMasks(dst, bits, MaskTerm{Seed: seed, Negate: negate})
}

// AddMasks adds every term's mask to dst, mod 2^bits. It splits dst into
// contiguous ranges, one per worker, at most GOMAXPROCS of them; each
// worker expands every mask over its range only (CTR mode seeks to the
// range's first block), so the workers write disjoint words and the
// result does not depend on how dst was split.
func AddMasks(dst []uint32, bits int, terms ...MaskTerm) error {
	return addMasks(dst, bits, nil, terms, runtime.GOMAXPROCS(0))
}

// addMasks sets dst to dst + Σ addends + Σ ±masks mod 2^bits, with at most
// workers goroutines. Every addend has len(dst) words.
func addMasks(dst []uint32, bits int, addends [][]uint32, terms []MaskTerm, workers int) error {
	if bits < 1 || bits > 32 {
		return errf("prg.mask", ErrMismatch, "b = %d bits, want 1..32", bits)
	}
	for _, a := range addends {
		if len(a) != len(dst) {
			return errf("prg.mask", ErrMismatch, "an addend of %d words to %d", len(a), len(dst))
		}
	}
	blocks := make([]cipher.Block, len(terms))
	for k, t := range terms {
		b, err := aes.NewCipher(t.Seed[:])
		if err != nil {
			return wrap("prg.mask", fmt.Errorf("aes: %w", err))
		}
		blocks[k] = b
	}
	workers = max(1, min(workers, (len(dst)+maskSpan-1)/maskSpan))
	span := (len(dst) + workers - 1) / workers
	span = (span + 3) &^ 3 // whole counter blocks
	var wg sync.WaitGroup
	for lo := span; lo < len(dst); lo += span {
		wg.Go(func() { maskRange(dst, lo, min(lo+span, len(dst)), bits, addends, terms, blocks) })
	}
	maskRange(dst, 0, min(span, len(dst)), bits, addends, terms, blocks)
	wg.Wait()
	return nil
}

// maskRange does addMasks' work on dst[lo:hi], lo a multiple of 4.
func maskRange(dst []uint32, lo, hi, bits int, addends [][]uint32, terms []MaskTerm, blocks []cipher.Block) {
	var iv [aes.BlockSize]byte
	binary.BigEndian.PutUint64(iv[8:], uint64(lo/4))
	streams := make([]cipher.Stream, len(terms))
	for k, b := range blocks {
		streams[k] = cipher.NewCTR(b, iv[:])
	}
	m := wordMask(bits)
	buf := make([]byte, 4*min(hi-lo, maskChunk))
	for lo < hi {
		n := min(hi-lo, maskChunk)
		d := dst[lo : lo+n]
		for _, a := range addends {
			a := a[lo : lo+n]
			d := d[:len(a)]
			for i, v := range a {
				d[i] += v
			}
		}
		ks := buf[:4*n]
		for k, s := range streams {
			clear(ks)
			s.XORKeyStream(ks, ks)
			if terms[k].Negate {
				subWords(d, ks)
			} else {
				addWords(d, ks)
			}
		}
		if m != ^uint32(0) {
			for i := range d {
				d[i] &= m
			}
		}
		lo += n
	}
}

// addWords adds the little-endian words of ks to d, len(ks) = 4·len(d),
// four at a time (written so that the compiler drops the bounds checks).
func addWords(d []uint32, ks []byte) {
	for len(d) >= 4 && len(ks) >= 16 {
		d[0] += binary.LittleEndian.Uint32(ks[0:4])
		d[1] += binary.LittleEndian.Uint32(ks[4:8])
		d[2] += binary.LittleEndian.Uint32(ks[8:12])
		d[3] += binary.LittleEndian.Uint32(ks[12:16])
		d, ks = d[4:], ks[16:]
	}
	for i := range d {
		d[i] += binary.LittleEndian.Uint32(ks[4*i:])
	}
}

// subWords is addWords subtracting.
func subWords(d []uint32, ks []byte) {
	for len(d) >= 4 && len(ks) >= 16 {
		d[0] -= binary.LittleEndian.Uint32(ks[0:4])
		d[1] -= binary.LittleEndian.Uint32(ks[4:8])
		d[2] -= binary.LittleEndian.Uint32(ks[8:12])
		d[3] -= binary.LittleEndian.Uint32(ks[12:16])
		d, ks = d[4:], ks[16:]
	}
	for i := range d {
		d[i] -= binary.LittleEndian.Uint32(ks[4*i:])
	}
}

// Mask is seed's mask of n words mod 2^bits (AddMask onto zeros).
func Mask(seed Seed, n, bits int) ([]uint32, error) {
	out := make([]uint32, n)
	if err := AddMask(out, seed, bits, false); err != nil {
		return nil, err
	}
	return out, nil
}
