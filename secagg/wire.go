package secagg

import (
	"encoding/binary"
	"fmt"
)

// Limits of the wire encoding. Decoders refuse anything beyond them before
// allocating.
const (
	maxID      = 256     // bytes of a job or party id
	maxParties = 1 << 16 // parties in a list or cohort
	maxBlob    = 1 << 16 // bytes of a key, signature, share or ciphertext
	maxVector  = 1 << 28 // words of a masked vector
)

// Message tags: the first bytes of every encoding, so that no message of
// one kind decodes as another, and no signature over one is valid for the
// other.
const (
	tagAdvertisement = "gfsa1:adv"
	tagShare         = "gfsa1:shr"
	tagSharePlain    = "gfsa1:shp"
	tagMasked        = "gfsa2:msk" // v2: words packed at b bits
	tagList          = "gfsa1:lst"
	tagReveal        = "gfsa1:rev"
	tagConfig        = "gfsa2:cfg" // v2: AES-256-CTR masks, packed words
)

// enc appends a canonical big-endian encoding.
type enc struct{ b []byte }

func (e *enc) tag(t string)   { e.b = append(e.b, t...) }
func (e *enc) u8(v uint8)     { e.b = append(e.b, v) }
func (e *enc) u32(v uint32)   { e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64)   { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *enc) str(s string)   { e.u32(uint32(len(s))); e.b = append(e.b, s...) }
func (e *enc) blob(p []byte)  { e.u32(uint32(len(p))); e.b = append(e.b, p...) }
func (e *enc) fixed(p []byte) { e.b = append(e.b, p...) }

func (e *enc) strs(ss []string) {
	e.u32(uint32(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

// dec reads what enc writes; the first failure sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

func (d *dec) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail("%s: want %d bytes, %d left", what, n, len(d.b))
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) tag(t string) {
	if p := d.take(len(t), "tag"); d.err == nil && string(p) != t {
		d.fail("tag %q, want %q", p, t)
	}
}

func (d *dec) u8() uint8 {
	if p := d.take(1, "byte"); d.err == nil {
		return p[0]
	}
	return 0
}

func (d *dec) u32() uint32 {
	if p := d.take(4, "uint32"); d.err == nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (d *dec) u64() uint64 {
	if p := d.take(8, "uint64"); d.err == nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

func (d *dec) count(max int, what string) int {
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(max) {
		d.fail("%s: %d, at most %d", what, n, max)
		return 0
	}
	return int(n)
}

func (d *dec) str(what string) string {
	n := d.count(maxID, what)
	return string(d.take(n, what))
}

// id is str for a party or job id, which must not be empty.
func (d *dec) id(what string) string {
	s := d.str(what)
	if d.err == nil && s == "" {
		d.fail("%s: empty", what)
	}
	return s
}

func (d *dec) blob(what string) []byte {
	n := d.count(maxBlob, what)
	if p := d.take(n, what); d.err == nil {
		return append([]byte(nil), p...)
	}
	return nil
}

func (d *dec) fixed(n int, what string) []byte {
	if p := d.take(n, what); d.err == nil {
		return append([]byte(nil), p...)
	}
	return nil
}

// ids reads a strictly increasing list of non-empty ids (canonical: sorted,
// no duplicates).
func (d *dec) ids(what string) []string {
	n := d.count(maxParties, what)
	if d.err != nil {
		return nil
	}
	out := make([]string, 0, min(n, 64))
	for i := 0; i < n && d.err == nil; i++ {
		s := d.id(what)
		if d.err == nil && i > 0 && s <= out[i-1] {
			d.fail("%s: %q after %q: not sorted or duplicated", what, s, out[i-1])
		}
		out = append(out, s)
	}
	return out
}

func (d *dec) done(what string) error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%s: %d trailing bytes", what, len(d.b))
	}
	return d.err
}

// sortedUnique reports whether ss is strictly increasing.
func sortedUnique(ss []string) bool {
	for i := 1; i < len(ss); i++ {
		if ss[i] <= ss[i-1] {
			return false
		}
	}
	return true
}

// packedLen is the bytes of n words packed at bits each.
func packedLen(n, bits int) int { return (n*bits + 7) / 8 }

// packWords packs w at bits (1..32) each into dst (packedLen bytes),
// least significant bit first; every word must be below 2^bits.
func packWords(dst []byte, w []uint32, bits int) {
	if bits == 32 {
		for i, v := range w {
			binary.LittleEndian.PutUint32(dst[4*i:], v)
		}
		return
	}
	var acc uint64 // pending bits, low first
	var have int   // how many
	o := 0
	for _, v := range w {
		acc |= uint64(v) << have
		have += bits
		if have >= 32 {
			binary.LittleEndian.PutUint32(dst[o:], uint32(acc))
			o += 4
			acc >>= 32
			have -= 32
		}
	}
	for ; have > 0; have -= 8 {
		dst[o] = byte(acc)
		o++
		acc >>= 8
	}
}

// unpackWords reads n words of bits (1..32) each from src, which must be
// packedLen(n, bits) bytes; ok is false if a padding bit is set.
func unpackWords(src []byte, n, bits int) (w []uint32, ok bool) {
	w = make([]uint32, n)
	if bits == 32 {
		for i := range w {
			w[i] = binary.LittleEndian.Uint32(src[4*i:])
		}
		return w, true
	}
	m := uint64(wordMask(bits))
	var acc uint64
	var have int
	i := 0
	for k := range w {
		for have < bits {
			if i+4 <= len(src) {
				acc |= uint64(binary.LittleEndian.Uint32(src[i:])) << have
				have += 32
				i += 4
			} else {
				acc |= uint64(src[i]) << have
				have += 8
				i++
			}
		}
		w[k] = uint32(acc & m)
		acc >>= bits
		have -= bits
	}
	for ; i < len(src); i++ { // unread bytes: padding only
		acc |= uint64(src[i]) << have
		have += 8
	}
	return w, acc == 0
}
