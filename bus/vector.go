package bus

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// Vector is a float32 vector that msgpack-encodes as one little-endian bin
// blob: an order of magnitude faster than per-element msgpack floats.
type Vector []float32

var (
	_ msgpack.CustomEncoder = Vector(nil)
	_ msgpack.CustomDecoder = (*Vector)(nil)
)

// EncodeMsgpack writes the vector as a bin blob of 4·len bytes (nil when
// empty), straight from the floats' memory on a little-endian machine.
func (v Vector) EncodeMsgpack(enc *msgpack.Encoder) error {
	if len(v) == 0 {
		return enc.EncodeNil()
	}
	if !littleEndian() {
		return enc.EncodeBytes(AppendFloat32s(nil, v))
	}
	if err := enc.EncodeBytesLen(4 * len(v)); err != nil {
		return err
	}
	_, err := enc.Writer().Write(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
	return err
}

// DecodeMsgpack reads a bin blob whose length is a multiple of 4. Decoded
// from a received message (Envelope.UnmarshalBody) the vector shares the
// message's bytes when they are aligned (wire_decode.go).
func (v *Vector) DecodeMsgpack(dec *msgpack.Decoder) error {
	out, err := decodeFloats(dec)
	if err != nil {
		return err
	}
	*v = out
	return nil
}

// AppendFloat32s appends xs to dst as little-endian IEEE-754 float32.
func AppendFloat32s(dst []byte, xs []float32) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, 4*len(xs))...)
	b := dst[n:]
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return dst
}

// Float32sFromBytes decodes a little-endian float32 blob into a new slice.
func Float32sFromBytes(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, errBlobLength(len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]float32, len(b)/4)
	if littleEndian() {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(b)), b)
		return out, nil
	}
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

func errBlobLength(n int) error {
	return fmt.Errorf("bus: vector blob of %d bytes is not a multiple of 4", n)
}

// firstNonFiniteGo returns the index of the first NaN or ±Inf, or -1. A
// float32 is not finite exactly when its exponent bits are all ones, and
// then adding one to the exponent carries into the sign bit: the loop ORs
// those carries over a block without a branch per value, and looks for
// the index only in a block that has one.
func firstNonFiniteGo(xs []float32) int {
	const exp, carry, sign = 0x7f800000, 0x00800000, 0x80000000
	const block = 256
	for start := 0; start < len(xs); start += block {
		blk := xs[start:min(start+block, len(xs))]
		var acc uint32
		for _, x := range blk {
			acc |= math.Float32bits(x)&exp + carry
		}
		if acc&sign == 0 {
			continue
		}
		for i, x := range blk {
			if math.Float32bits(x)&exp == exp {
				return start + i
			}
		}
	}
	return -1
}
