package bus

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// checkMsgpack walks one msgpack value at the start of data and fails if
// any declared length (string, binary, ext, array, map) runs past the end
// of the input, or nesting is deeper than maxMsgpackDepth.
//
// It runs before every decode of bytes from the wire because msgpack v5.4.1
// trusts declared lengths: it preallocates a declared slice length before
// reading one element (5 bytes can ask for 64 GiB), and a string or binary
// header past the end of the input grows the pooled decoder's buffer and
// keeps it. With every length bounded by the bytes that are really there,
// decoding allocates at most a small multiple of the message size.
func checkMsgpack(data []byte) error {
	_, err := skipMsgpack(data, 0, 0)
	return err
}

const maxMsgpackDepth = 64

var errMsgpackShort = errors.New("msgpack: declared length past the end of the message")

// skipMsgpack returns the offset just after the value starting at off.
func skipMsgpack(data []byte, off, depth int) (int, error) {
	if depth > maxMsgpackDepth {
		return 0, fmt.Errorf("msgpack: nesting deeper than %d", maxMsgpackDepth)
	}
	if off >= len(data) {
		return 0, errMsgpackShort
	}
	c := data[off]
	off++
	n := func(size int) (int, error) { // a big-endian length of size bytes
		if off+size > len(data) {
			return 0, errMsgpackShort
		}
		var v uint64
		switch size {
		case 1:
			v = uint64(data[off])
		case 2:
			v = uint64(binary.BigEndian.Uint16(data[off:]))
		case 4:
			v = uint64(binary.BigEndian.Uint32(data[off:]))
		}
		off += size
		if v > uint64(len(data)) {
			return 0, errMsgpackShort
		}
		return int(v), nil
	}
	raw := func(l int) (int, error) { // l bytes of payload
		if l < 0 || off+l > len(data) {
			return 0, errMsgpackShort
		}
		return off + l, nil
	}
	items := func(count int) (int, error) { // count values
		// Every value takes at least one byte: a count the rest of the
		// input cannot hold is a lie, whatever follows.
		if count > len(data)-off {
			return 0, errMsgpackShort
		}
		var err error
		for i := 0; i < count; i++ {
			if off, err = skipMsgpack(data, off, depth+1); err != nil {
				return 0, err
			}
		}
		return off, nil
	}
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3: // fixint, nil, bool
		return off, nil
	case c >= 0x80 && c <= 0x8f:
		return items(2 * int(c&0x0f))
	case c >= 0x90 && c <= 0x9f:
		return items(int(c & 0x0f))
	case c >= 0xa0 && c <= 0xbf:
		return raw(int(c & 0x1f))
	}
	switch c {
	case 0xcc, 0xd0:
		return raw(1)
	case 0xcd, 0xd1:
		return raw(2)
	case 0xca, 0xce, 0xd2:
		return raw(4)
	case 0xcb, 0xcf, 0xd3:
		return raw(8)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 (+ type byte)
		return raw(1 + 1<<(c-0xd4))
	case 0xc4, 0xd9:
		l, err := n(1)
		if err != nil {
			return 0, err
		}
		return raw(l)
	case 0xc5, 0xda:
		l, err := n(2)
		if err != nil {
			return 0, err
		}
		return raw(l)
	case 0xc6, 0xdb:
		l, err := n(4)
		if err != nil {
			return 0, err
		}
		return raw(l)
	case 0xc7, 0xc8, 0xc9: // ext 8, 16, 32
		l, err := n(1 << (c - 0xc7))
		if err != nil {
			return 0, err
		}
		return raw(1 + l)
	case 0xdc, 0xdd:
		l, err := n(2 << (c - 0xdc))
		if err != nil {
			return 0, err
		}
		return items(l)
	case 0xde, 0xdf:
		l, err := n(2 << (c - 0xde))
		if err != nil {
			return 0, err
		}
		return items(2 * l)
	}
	return 0, fmt.Errorf("msgpack: invalid byte 0x%02x", c)
}
