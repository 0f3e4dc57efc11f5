package bus

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// Vector is a float32 vector that msgpack-encodes as one little-endian bin
// blob: an order of magnitude faster than per-element msgpack floats.
type Vector []float32

var (
	_ msgpack.CustomEncoder = Vector(nil)
	_ msgpack.CustomDecoder = (*Vector)(nil)
)

// EncodeMsgpack writes the vector as a bin blob of 4·len bytes.
func (v Vector) EncodeMsgpack(enc *msgpack.Encoder) error {
	return enc.EncodeBytes(AppendFloat32s(nil, v))
}

// DecodeMsgpack reads a bin blob whose length is a multiple of 4.
func (v *Vector) DecodeMsgpack(dec *msgpack.Decoder) error {
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	out, err := Float32sFromBytes(b)
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

// Float32sFromBytes decodes a little-endian float32 blob.
func Float32sFromBytes(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("bus: vector blob of %d bytes is not a multiple of 4", len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// firstNonFinite returns the index of the first NaN or ±Inf, or -1.
func firstNonFinite(xs []float32) int {
	for i, x := range xs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return i
		}
	}
	return -1
}
