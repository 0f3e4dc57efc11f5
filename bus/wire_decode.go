package bus

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// The copy-free receive path. A 1M-float update used to be copied three
// times on its way in (the envelope's Body, the bin blob, the float
// conversion) and allocated 12.6 MB for 4 MB of wire bytes. Now the
// envelope's blobs (Body, Ref, Sig) are sub-slices of the wire bytes, and
// a float blob is a []float32 over the same memory when it sits 4-aligned
// on a little-endian machine (one copy otherwise).
//
// Lifetime: the decoded envelope and body share the received bytes, so
// the bytes must not be reused while they live. Every transport hands a
// handler bytes it owns: nats.go (v1.55, Conn.processMsg) gives each
// delivered message a fresh slice (a copy of a small message; a large one,
// split across reads, is read into its own buffer which the parser then
// forgets), the in-memory transport copies per subscriber, and JetStream
// fetches are fresh. Nothing in this module writes into received bytes.

// openFast decodes the envelope as msgpack.Marshal writes it (a map of
// fixstr keys, each known key once, ints, strings and bins in their
// usual codes) with Body, Ref and Sig aliasing data. Anything else
// (unknown or repeated keys, unusual codes) reports false and is left to
// msgpack, so that both paths agree on every input they both accept.
// Like msgpack.Unmarshal, it ignores bytes after the map.
func openFast(data []byte) (Envelope, bool) {
	r := wireReader{b: data}
	n, ok := r.mapLen()
	if !ok || n > 16 {
		return Envelope{}, false
	}
	var env Envelope
	var seen uint16
	for range n {
		key, ok := r.fixstr()
		if !ok || len(key) != 1 {
			return Envelope{}, false
		}
		bit, ok := envKeyBit(key[0])
		if !ok || seen&bit != 0 {
			return Envelope{}, false
		}
		seen |= bit
		switch key[0] {
		case 'v':
			env.Version, ok = r.uint()
		case 'r':
			env.Round, ok = r.uint()
		case 's':
			env.Seq, ok = r.uint()
		case 't':
			env.Time, ok = r.int()
		case 'j':
			env.Job, ok = r.str()
		case 'k':
			var k string
			k, ok = r.str()
			env.Kind = Kind(k)
		case 'f':
			env.From, ok = r.str()
		case 'b':
			env.Body, ok = r.bin()
		case 'o':
			env.Ref, ok = r.bin()
		case 'g':
			env.Sig, ok = r.bin()
		}
		if !ok {
			return Envelope{}, false
		}
	}
	return env, true
}

func envKeyBit(k byte) (uint16, bool) {
	const keys = "vjkfrstbog"
	for i := range len(keys) {
		if keys[i] == k {
			return 1 << i, true
		}
	}
	return 0, false
}

// wireReader reads msgpack values off a byte slice without copying.
type wireReader struct {
	b   []byte
	off int
}

func (r *wireReader) take(n int) ([]byte, bool) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, false
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s, true
}

func (r *wireReader) byte1() (byte, bool) {
	if r.off >= len(r.b) {
		return 0, false
	}
	c := r.b[r.off]
	r.off++
	return c, true
}

// be reads a big-endian unsigned integer of size bytes.
func (r *wireReader) be(size int) (uint64, bool) {
	s, ok := r.take(size)
	if !ok {
		return 0, false
	}
	switch size {
	case 1:
		return uint64(s[0]), true
	case 2:
		return uint64(binary.BigEndian.Uint16(s)), true
	case 4:
		return uint64(binary.BigEndian.Uint32(s)), true
	}
	return binary.BigEndian.Uint64(s), true
}

func (r *wireReader) mapLen() (int, bool) {
	c, ok := r.byte1()
	switch {
	case !ok:
		return 0, false
	case c&0xf0 == 0x80:
		return int(c & 0x0f), true
	case c == 0xde:
		n, ok := r.be(2)
		return int(n), ok
	}
	return 0, false
}

func (r *wireReader) fixstr() ([]byte, bool) {
	c, ok := r.byte1()
	if !ok || c&0xe0 != 0xa0 {
		return nil, false
	}
	return r.take(int(c & 0x1f))
}

// uint reads a non-negative integer in any unsigned or positive fixint code.
func (r *wireReader) uint() (uint64, bool) {
	c, ok := r.byte1()
	switch {
	case !ok:
		return 0, false
	case c <= 0x7f:
		return uint64(c), true
	case c >= 0xcc && c <= 0xcf: // uint 8, 16, 32, 64
		return r.be(1 << (c - 0xcc))
	}
	return 0, false
}

// int reads an integer that fits an int64, in a fixint, int or uint code.
func (r *wireReader) int() (int64, bool) {
	c, ok := r.byte1()
	switch {
	case !ok:
		return 0, false
	case c <= 0x7f:
		return int64(c), true
	case c >= 0xe0:
		return int64(int8(c)), true
	case c >= 0xcc && c <= 0xcf:
		u, ok := r.be(1 << (c - 0xcc))
		return int64(u), ok && u <= math.MaxInt64
	case c >= 0xd0 && c <= 0xd3: // int 8, 16, 32, 64
		size := 1 << (c - 0xd0)
		u, ok := r.be(size)
		shift := 64 - 8*size
		return int64(u<<shift) >> shift, ok
	}
	return 0, false
}

func (r *wireReader) str() (string, bool) {
	c, ok := r.byte1()
	var n uint64
	switch {
	case !ok:
		return "", false
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c >= 0xd9 && c <= 0xdb: // str 8, 16, 32
		if n, ok = r.be(1 << (c - 0xd9)); !ok {
			return "", false
		}
	default:
		return "", false
	}
	s, ok := r.take(int(min(n, math.MaxInt32)))
	return string(s), ok
}

// bin reads a bin blob (nil for msgpack nil) as a sub-slice of the input.
func (r *wireReader) bin() ([]byte, bool) {
	c, ok := r.byte1()
	switch {
	case !ok:
		return nil, false
	case c == 0xc0:
		return nil, true
	case c >= 0xc4 && c <= 0xc6: // bin 8, 16, 32
		n, ok := r.be(1 << (c - 0xc4))
		if !ok {
			return nil, false
		}
		return r.take(int(min(n, math.MaxInt32)))
	}
	return nil, false
}

// aliasReader is the reader bodies are decoded from: msgpack reads it
// byte by byte (it is an io.ByteScanner, so the decoder adds no buffer),
// and the float blob decoders take their bytes from it directly.
type aliasReader struct {
	b   []byte
	off int
}

func (r *aliasReader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *aliasReader) ReadByte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *aliasReader) UnreadByte() error {
	if r.off == 0 {
		return errors.New("bus: unread at the start")
	}
	r.off--
	return nil
}

// next returns the next n bytes without copying.
func (r *aliasReader) next(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, io.ErrUnexpectedEOF
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s, nil
}

// unmarshalAliased is msgpack.Unmarshal with Vector and Sensitive fields
// aliasing b where they can (decodeFloats).
func unmarshalAliased(b []byte, dst any) error {
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.UsePreallocateValues(true)
	dec.Reset(&aliasReader{b: b})
	return dec.Decode(dst)
}

// decodeFloats reads a float32 blob: without copying when the decoder
// reads from an aliasReader (unmarshalAliased), else as msgpack would.
func decodeFloats(dec *msgpack.Decoder) ([]float32, error) {
	ar, ok := dec.Buffered().(*aliasReader)
	if !ok {
		b, err := dec.DecodeBytes()
		if err != nil {
			return nil, err
		}
		return Float32sFromBytes(b)
	}
	n, err := dec.DecodeBytesLen()
	if err != nil || n == -1 {
		return nil, err
	}
	b, err := ar.next(n)
	if err != nil {
		return nil, err
	}
	return float32sView(b)
}

// littleEndian reports whether this machine stores a float32 as the wire
// does.
func littleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

// float32sView returns the floats of a little-endian blob, over b's
// memory when b is 4-aligned on a little-endian machine, else copied.
func float32sView(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, errBlobLength(len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	if littleEndian() && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4), nil
	}
	return Float32sFromBytes(b)
}
