package dataget

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Array is a numeric n-dimensional array as numpy stores it: a type code
// (numpy's descr without the byte-order mark: "f4", "i8", "b1", ...), a
// shape, and the elements' little-endian bytes in C (row-major) order.
type Array struct {
	Kind  string
	Shape []int
	Data  []byte
}

// itemSize is the byte size of the element types the converters read.
// Object arrays (pickled Python values) are deliberately absent: they
// would need code execution to read.
func itemSize(kind string) (int, bool) {
	switch kind {
	case "b1", "u1", "i1":
		return 1, true
	case "i2", "u2":
		return 2, true
	case "i4", "u4", "f4":
		return 4, true
	case "i8", "u8", "f8":
		return 8, true
	}
	return 0, false
}

// maxNPYElements bounds an array's element count, so that a header that
// claims a huge shape is refused before anything is allocated.
const maxNPYElements = 1 << 31

// Len is the number of elements.
func (a Array) Len() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// newArray checks that data holds exactly the elements shape and kind
// describe, and reorders a Fortran-ordered array into C order.
func newArray(kind string, shape []int, fortran bool, data []byte) (Array, error) {
	size, ok := itemSize(kind)
	if !ok {
		return Array{}, fmt.Errorf("unsupported element type %q", kind)
	}
	n := 1
	for _, d := range shape {
		if d < 0 || (d > 0 && n > maxNPYElements/d) {
			return Array{}, fmt.Errorf("shape %v too large", shape)
		}
		n *= d
	}
	if len(data) != n*size {
		return Array{}, fmt.Errorf("shape %v of %s needs %d bytes, have %d", shape, kind, n*size, len(data))
	}
	a := Array{Kind: kind, Shape: shape, Data: data}
	if fortran && len(shape) > 1 {
		a.Data = fortranToC(shape, size, data)
	}
	return a, nil
}

// fortranToC reorders column-major element bytes into row-major order.
func fortranToC(shape []int, size int, data []byte) []byte {
	out := make([]byte, len(data))
	idx := make([]int, len(shape))
	for c := 0; c*size < len(data); c++ {
		// idx is element c's index in C order; its Fortran offset has the
		// first index varying fastest.
		f, stride := 0, 1
		for k := range shape {
			f += idx[k] * stride
			stride *= shape[k]
		}
		copy(out[c*size:(c+1)*size], data[f*size:(f+1)*size])
		for k := len(shape) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out
}

// Float32s converts a numeric array's elements to float32.
func (a Array) Float32s() ([]float32, error) {
	out := make([]float32, a.Len())
	for i := range out {
		v, err := a.float(i)
		if err != nil {
			return nil, err
		}
		out[i] = float32(v)
	}
	return out, nil
}

// Int64s converts an integer or boolean array's elements to int64.
func (a Array) Int64s() ([]int64, error) {
	if strings.HasPrefix(a.Kind, "f") {
		return nil, fmt.Errorf("want integers, have %s", a.Kind)
	}
	out := make([]int64, a.Len())
	for i := range out {
		v, err := a.int(i)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (a Array) int(i int) (int64, error) {
	d := a.Data
	le := binary.LittleEndian
	switch a.Kind {
	case "b1", "u1":
		return int64(d[i]), nil
	case "i1":
		return int64(int8(d[i])), nil
	case "i2":
		return int64(int16(le.Uint16(d[2*i:]))), nil
	case "u2":
		return int64(le.Uint16(d[2*i:])), nil
	case "i4":
		return int64(int32(le.Uint32(d[4*i:]))), nil
	case "u4":
		return int64(le.Uint32(d[4*i:])), nil
	case "i8":
		return int64(le.Uint64(d[8*i:])), nil
	case "u8":
		v := le.Uint64(d[8*i:])
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("element %d = %d overflows int64", i, v)
		}
		return int64(v), nil
	}
	return 0, fmt.Errorf("want integers, have %s", a.Kind)
}

func (a Array) float(i int) (float64, error) {
	switch a.Kind {
	case "f4":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(a.Data[4*i:]))), nil
	case "f8":
		return math.Float64frombits(binary.LittleEndian.Uint64(a.Data[8*i:])), nil
	}
	v, err := a.int(i)
	return float64(v), err
}

// ParseNPY reads one .npy file (format versions 1 to 3).
func ParseNPY(b []byte) (Array, error) {
	const magic = "\x93NUMPY"
	if len(b) < 10 || string(b[:6]) != magic {
		return Array{}, errors.New("npy: not an npy file")
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return Array{}, errors.New("npy: short header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return Array{}, fmt.Errorf("npy: unsupported format version %d", b[6])
	}
	if hlen < 0 || hlen > len(b)-start {
		return Array{}, errors.New("npy: header runs past the end")
	}
	descr, fortran, shape, err := parseNPYHeader(string(b[start : start+hlen]))
	if err != nil {
		return Array{}, fmt.Errorf("npy: header: %w", err)
	}
	kind := descr
	switch {
	case len(descr) == 3 && (descr[0] == '<' || descr[0] == '|'):
		kind = descr[1:]
	case len(descr) == 3 && descr[0] == '>' && descr[2] == '1':
		kind = descr[1:] // one-byte elements have no byte order
	default:
		return Array{}, fmt.Errorf("npy: unsupported descr %q (want little-endian numbers)", descr)
	}
	a, err := newArray(kind, shape, fortran, b[start+hlen:])
	if err != nil {
		return Array{}, fmt.Errorf("npy: %w", err)
	}
	return a, nil
}

// parseNPYHeader reads the header's Python dict literal, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (10000, 7), }.
func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	s := strings.TrimSpace(h)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return "", false, nil, errors.New("not a dict")
	}
	s = s[1 : len(s)-1]
	seen := map[string]bool{}
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" {
			break
		}
		var key string
		if key, s, err = pyString(s); err != nil {
			return "", false, nil, err
		}
		if seen[key] {
			return "", false, nil, fmt.Errorf("key %q twice", key)
		}
		seen[key] = true
		s = strings.TrimLeft(s, " ")
		if !strings.HasPrefix(s, ":") {
			return "", false, nil, fmt.Errorf("no ':' after %q", key)
		}
		s = strings.TrimLeft(s[1:], " ")
		switch key {
		case "descr":
			descr, s, err = pyString(s)
		case "fortran_order":
			switch {
			case strings.HasPrefix(s, "True"):
				fortran, s = true, s[4:]
			case strings.HasPrefix(s, "False"):
				fortran, s = false, s[5:]
			default:
				err = errors.New("fortran_order is not True or False")
			}
		case "shape":
			shape, s, err = pyIntTuple(s)
		default:
			err = fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return "", false, nil, err
		}
	}
	if !seen["descr"] || !seen["shape"] || !seen["fortran_order"] {
		return "", false, nil, errors.New("want descr, fortran_order and shape")
	}
	return descr, fortran, shape, nil
}

// pyString reads a quoted Python string without escapes from s's start.
func pyString(s string) (string, string, error) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", s, errors.New("want a quoted string")
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", s, errors.New("unterminated string")
	}
	v := s[1 : 1+end]
	if strings.ContainsRune(v, '\\') {
		return "", s, errors.New("escapes in a string")
	}
	return v, s[2+end:], nil
}

// pyIntTuple reads a tuple of non-negative integers such as (10, 7) or (3,).
func pyIntTuple(s string) ([]int, string, error) {
	if !strings.HasPrefix(s, "(") {
		return nil, s, errors.New("shape is not a tuple")
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return nil, s, errors.New("unterminated tuple")
	}
	shape := []int{}
	for f := range strings.SplitSeq(s[1:end], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return nil, s, fmt.Errorf("bad dimension %q", f)
		}
		shape = append(shape, v)
	}
	if len(shape) > 32 {
		return nil, s, errors.New("too many dimensions")
	}
	return shape, s[end+1:], nil
}

// ReadNPZ reads every array of an .npz archive (numpy.savez or
// savez_compressed), keyed by name without ".npy". limit bounds the
// uncompressed size of one member, so that a small archive cannot expand
// into gigabytes.
func ReadNPZ(b []byte, limit int64) (map[string]Array, error) {
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	out := map[string]Array{}
	for _, f := range z.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("npz: member %q is not an .npy file", f.Name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("npz: member %q twice", f.Name)
		}
		if f.UncompressedSize64 > uint64(limit) {
			return nil, fmt.Errorf("npz: member %q is %d bytes, above the limit of %d", f.Name, f.UncompressedSize64, limit)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		raw, err := io.ReadAll(io.LimitReader(rc, limit+1))
		rc.Close()
		if err == nil && int64(len(raw)) > limit {
			err = fmt.Errorf("above the limit of %d bytes", limit)
		}
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		a, err := ParseNPY(raw)
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		out[name] = a
	}
	return out, nil
}
