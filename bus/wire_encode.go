package bus

import (
	"encoding/binary"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// headRoom is the room marshalBody leaves before a body for the
// envelope's head, which is at most 3+11+3·(2+5+64)+33+2+5 bytes for ids of
// at most 64 characters; tailRoom the room after it for a signature.
const (
	headRoom = 320
	tailRoom = 2 + 2 + 64
)

// marshalBody is msgpack.Marshal for a typed body, into a buffer sized
// for its vectors up front rather than grown by doubling, with room
// before the body for the envelope's head and after it for a signature:
// encode then writes the envelope around the body where it lies, instead
// of copying a 4 MiB model into a second buffer. frame is the whole
// buffer, the body frame[headRoom:].
func marshalBody(body any) (frame, b []byte, err error) {
	hint := 256
	switch b := body.(type) {
	case *Update:
		hint += 4 * (b.Params.Len() + b.Grad.Len() + b.Descriptors.Len())
	case *Model:
		hint += 4 * (len(b.Params) + len(b.Grad))
	case *Embeddings:
		hint += 4*b.Data.Len() + 9*len(b.NodeIDs)
	}
	w := &appendWriter{b: make([]byte, headRoom, headRoom+hint+tailRoom)}
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(w)
	if err := enc.Encode(body); err != nil {
		return nil, nil, err
	}
	return w.b, w.b[headRoom:], nil
}

// appendWriter is the msgpack encoder's writer: an append to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *appendWriter) WriteByte(c byte) error {
	w.b = append(w.b, c)
	return nil
}

// encode writes env in msgpack, byte for byte as msgpack.Marshal writes
// it (the same keys, in the same order, the version as a uint64, Ref and
// Sig omitted when empty), with one liberty: the largest float blob of
// the body, when it has one of at least minAlignedBlob bytes, is placed at
// an offset that is a multiple of 4, so that a receiver can read its
// floats where they lie (float32sView) rather than copy them. The shift is
// made with shorter encodings of the version's 1 (a uint8 or uint16) and
// a map 16 header for the map's count, which every msgpack decoder reads
// as the same values; no field and no signed byte changes.
//
// A body from marshalBody is written around where it lies (its frame);
// any other is copied into one buffer of the exact size.
func (e *Envelope) encode() []byte {
	var head [headRoom]byte
	h := e.appendHead(head[:0])
	if f := e.frame; len(h) <= headRoom && len(e.Body) > 0 && len(f) == headRoom+len(e.Body) && &f[headRoom] == &e.Body[0] {
		start := headRoom - len(h)
		copy(f[start:], h)
		return e.appendTail(f[start:])
	}
	b := make([]byte, 0, len(h)+len(e.Body)+tailSize(e))
	return e.appendTail(append(append(b, h...), e.Body...))
}

// appendHead appends the envelope up to its body: every field before it
// and the body's bin header, aligned as encode says.
func (e *Envelope) appendHead(b []byte) []byte {
	fields := 8
	if len(e.Ref) > 0 {
		fields++
	}
	if len(e.Sig) > 0 {
		fields++
	}
	// Where the body starts with a fixmap and a uint64 version.
	size := 1 + 11 + 2 + strSize(e.Job) + 2 + strSize(string(e.Kind)) + 2 + strSize(e.From) + 3*(2+9) + 2 + binSize(e.Body) - len(e.Body)
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
	return appendBinHeader(append(b, 0xa1, 'b'), e.Body)
}

// appendTail appends the fields after the body: Ref and Sig when set.
func (e *Envelope) appendTail(b []byte) []byte {
	if len(e.Ref) > 0 {
		b = append(appendBinHeader(append(b, 0xa1, 'o'), e.Ref), e.Ref...)
	}
	if len(e.Sig) > 0 {
		b = append(appendBinHeader(append(b, 0xa1, 'g'), e.Sig), e.Sig...)
	}
	return b
}

func tailSize(e *Envelope) int {
	n := 0
	if len(e.Ref) > 0 {
		n += 2 + binSize(e.Ref)
	}
	if len(e.Sig) > 0 {
		n += 2 + binSize(e.Sig)
	}
	return n
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

// appendBinHeader appends the header msgpack writes before p's bytes
// (nil for nil).
func appendBinHeader(b []byte, p []byte) []byte {
	switch n := len(p); {
	case p == nil:
		return append(b, 0xc0)
	case n < 256:
		return append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
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
