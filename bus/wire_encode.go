package bus

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// marshalBody is msgpack.Marshal for a typed body, into a buffer sized
// for its vectors up front rather than grown by doubling.
func marshalBody(body any) ([]byte, error) {
	hint := 256
	switch b := body.(type) {
	case *Update:
		hint += 4 * (b.Params.Len() + b.Grad.Len() + b.Descriptors.Len())
	case *Model:
		hint += 4 * (len(b.Params) + len(b.Grad))
	case *Embeddings:
		hint += 4*b.Data.Len() + 9*len(b.NodeIDs)
	}
	var buf bytes.Buffer
	buf.Grow(hint)
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	if err := enc.Encode(body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encode writes env in msgpack, byte for byte as msgpack.Marshal writes
// it (the same keys, in the same order, the version as a uint64, Ref and
// Sig omitted when empty), into one buffer of the exact size, with one
// liberty: the largest float blob of the body, when it has one of at
// least minAlignedBlob bytes, is placed at an offset that is a multiple
// of 4, so that a receiver can read its floats where they lie
// (float32sView) rather than copy them. The shift is made with shorter
// encodings of the version's 1 (a uint8 or uint16) and a map 16 header
// for the map's count, which every msgpack decoder reads as the same
// values; no field and no signed byte changes.
func (e *Envelope) encode() []byte {
	fields := 8
	if len(e.Ref) > 0 {
		fields++
	}
	if len(e.Sig) > 0 {
		fields++
	}
	head := 2 + strSize(e.Job) + 2 + strSize(string(e.Kind)) + 2 + strSize(e.From) + 3*(2+9) + 2 + binSize(e.Body)
	size := 1 + 11 + head - len(e.Body) // fixmap, "v" and a uint64 version: where the body starts
	versionSize, mapSize := 9, 1
	if blob := largestBlob(e.Body); blob >= 0 {
		// Shorter version encodings move the blob back by 7 (uint8) or
		// 6 (uint16) bytes, a map 16 header forward by 2.
		switch (size + blob) % 4 {
		case 1:
			versionSize, mapSize = 2, 3 // -7+2: back by 5
		case 2:
			versionSize = 3 // back by 6
		case 3:
			versionSize = 2 // back by 7
		}
	}
	total := size + (versionSize - 9) + (mapSize - 1) + len(e.Body)
	if len(e.Ref) > 0 {
		total += 2 + binSize(e.Ref)
	}
	if len(e.Sig) > 0 {
		total += 2 + binSize(e.Sig)
	}
	b := make([]byte, 0, total)
	if mapSize == 3 {
		b = append(b, 0xde, 0, byte(fields))
	} else {
		b = append(b, 0x80|byte(fields))
	}
	b = append(b, 0xa1, 'v')
	switch {
	case versionSize == 2 && e.Version <= 0xff:
		b = append(b, 0xcc, byte(e.Version))
	case versionSize == 3 && e.Version <= 0xffff:
		b = append(b, 0xcd, byte(e.Version>>8), byte(e.Version))
	default:
		b = binary.BigEndian.AppendUint64(append(b, 0xcf), e.Version)
	}
	b = appendStr(append(b, 0xa1, 'j'), e.Job)
	b = appendStr(append(b, 0xa1, 'k'), string(e.Kind))
	b = appendStr(append(b, 0xa1, 'f'), e.From)
	b = binary.BigEndian.AppendUint64(append(b, 0xa1, 'r', 0xcf), e.Round)
	b = binary.BigEndian.AppendUint64(append(b, 0xa1, 's', 0xcf), e.Seq)
	b = binary.BigEndian.AppendUint64(append(b, 0xa1, 't', 0xd3), uint64(e.Time))
	b = appendBin(append(b, 0xa1, 'b'), e.Body)
	if len(e.Ref) > 0 {
		b = appendBin(append(b, 0xa1, 'o'), e.Ref)
	}
	if len(e.Sig) > 0 {
		b = appendBin(append(b, 0xa1, 'g'), e.Sig)
	}
	return b
}

func strSize(s string) int {
	switch n := len(s); {
	case n < 32:
		return 1 + n
	case n < 256:
		return 2 + n
	case n <= math.MaxUint16:
		return 3 + n
	default:
		return 5 + n
	}
}

func appendStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 256:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// binSize is the size of p as msgpack writes a []byte: nil for nil.
func binSize(p []byte) int {
	switch n := len(p); {
	case p == nil:
		return 1
	case n < 256:
		return 2 + n
	case n <= math.MaxUint16:
		return 3 + n
	default:
		return 5 + n
	}
}

func appendBin(b []byte, p []byte) []byte {
	switch n := len(p); {
	case p == nil:
		return append(b, 0xc0)
	case n < 256:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
	return append(b, p...)
}

// minAlignedBlob is the smallest blob worth aligning: below it a copy
// costs nothing, and the envelope is exactly msgpack's.
const minAlignedBlob = 64 << 10

// largestBlob is the offset in body of the payload of the largest bin
// value at the top level of the body's map (the model or update vector),
// or -1 when there is none of at least minAlignedBlob bytes.
func largestBlob(body []byte) int {
	r := wireReader{b: body}
	n, ok := r.mapLen()
	if !ok {
		return -1
	}
	best, bestLen := -1, minAlignedBlob-1
	for range 2 * n {
		start := r.off
		if start >= len(body) {
			return -1
		}
		if c := body[start]; c >= 0xc4 && c <= 0xc6 {
			p, ok := r.bin()
			if !ok {
				return -1
			}
			if len(p) > bestLen {
				best, bestLen = r.off-len(p), len(p)
			}
			continue
		}
		end, err := skipMsgpack(body, start, 0)
		if err != nil {
			return -1
		}
		r.off = end
	}
	return best
}
