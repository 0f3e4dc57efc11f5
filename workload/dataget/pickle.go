package dataget

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// The values a pickle decodes to. Python's calls (REDUCE, NEWOBJ) and
// their BUILD state are recorded as pyCall, never run: reading a pickle
// must not execute anything it names. Byte strings and text strings are
// both Go strings (Python 2's str is bytes).
type (
	pyGlobal struct{ Module, Name string }
	pyTuple  []any
	pyList   struct{ Items []any }
	pyDict   struct{ Keys, Values []any }
	// pyCall is Fn(Args...) as the pickle asked for it, State what a
	// BUILD set on the result, Items what SETITEM(S) stored in it (a
	// collections.defaultdict is a call that is then filled like a dict).
	pyCall struct {
		Fn    pyGlobal
		Args  pyTuple
		State any
		Items *pyDict
	}
	pyMark struct{}
)

// get is the value stored under a string key, or nil.
func (d *pyDict) get(key string) any {
	for i, k := range d.Keys {
		if s, ok := k.(string); ok && s == key {
			return d.Values[i]
		}
	}
	return nil
}

// maxPickleMemo bounds the memo, which a hostile pickle could otherwise
// grow with one entry per few bytes of a huge index space.
const maxPickleMemo = 1 << 22

// pickleVM is the stack machine of Python's pickle protocols 2 to 4,
// binary opcodes only (what numpy, scipy and cPickle write).
type pickleVM struct {
	b     []byte
	pos   int
	stack []any
	marks []int
	memo  map[uint32]any
}

// Unpickle decodes one pickle. It supports the binary opcodes of
// protocols 2 to 4; text opcodes (protocol 0) are refused.
func Unpickle(b []byte) (any, error) {
	vm := &pickleVM{b: b, memo: map[uint32]any{}}
	v, err := vm.run()
	if err != nil {
		return nil, fmt.Errorf("pickle: at byte %d: %w", vm.pos, err)
	}
	return v, nil
}

func (vm *pickleVM) take(n int) ([]byte, error) {
	if n < 0 || n > len(vm.b)-vm.pos {
		return nil, errors.New("unexpected end of data")
	}
	s := vm.b[vm.pos : vm.pos+n]
	vm.pos += n
	return s, nil
}

func (vm *pickleVM) pop() (any, error) {
	if len(vm.stack) == 0 || (len(vm.marks) > 0 && len(vm.stack) == vm.marks[len(vm.marks)-1]) {
		return nil, errors.New("stack underflow")
	}
	v := vm.stack[len(vm.stack)-1]
	vm.stack = vm.stack[:len(vm.stack)-1]
	return v, nil
}

// popMark removes and returns everything above the latest MARK.
func (vm *pickleVM) popMark() ([]any, error) {
	if len(vm.marks) == 0 {
		return nil, errors.New("no mark")
	}
	m := vm.marks[len(vm.marks)-1]
	vm.marks = vm.marks[:len(vm.marks)-1]
	items := append([]any(nil), vm.stack[m:]...)
	vm.stack = vm.stack[:m]
	return items, nil
}

func (vm *pickleVM) push(v any) { vm.stack = append(vm.stack, v) }

func (vm *pickleVM) top() (any, error) {
	if len(vm.stack) == 0 || (len(vm.marks) > 0 && len(vm.stack) == vm.marks[len(vm.marks)-1]) {
		return nil, errors.New("stack underflow")
	}
	return vm.stack[len(vm.stack)-1], nil
}

func (vm *pickleVM) put(idx uint32) error {
	v, err := vm.top()
	if err != nil {
		return err
	}
	if _, ok := vm.memo[idx]; !ok && len(vm.memo) >= maxPickleMemo {
		return errors.New("memo too large")
	}
	vm.memo[idx] = v
	return nil
}

func (vm *pickleVM) fetch(idx uint32) error {
	v, ok := vm.memo[idx]
	if !ok {
		return fmt.Errorf("memo %d not set", idx)
	}
	vm.push(v)
	return nil
}

// str reads a length-prefixed string of a width-byte little-endian length.
func (vm *pickleVM) str(width int) error {
	lb, err := vm.take(width)
	if err != nil {
		return err
	}
	var n uint64
	for i := width - 1; i >= 0; i-- {
		n = n<<8 | uint64(lb[i])
	}
	if n > uint64(len(vm.b)) {
		return errors.New("string longer than the data")
	}
	s, err := vm.take(int(n))
	if err != nil {
		return err
	}
	vm.push(string(s))
	return nil
}

// line reads a newline-terminated token (GLOBAL's module and name).
func (vm *pickleVM) line() (string, error) {
	i := strings.IndexByte(string(vm.b[vm.pos:min(len(vm.b), vm.pos+256)]), '\n')
	if i < 0 {
		return "", errors.New("unterminated name")
	}
	s := string(vm.b[vm.pos : vm.pos+i])
	vm.pos += i + 1
	return s, nil
}

func (vm *pickleVM) run() (any, error) {
	for {
		op, err := vm.take(1)
		if err != nil {
			return nil, err
		}
		if err := vm.step(op[0]); err != nil {
			if errors.Is(err, errStop) {
				if len(vm.stack) != 1 || len(vm.marks) != 0 {
					return nil, fmt.Errorf("STOP with %d values and %d marks on the stack", len(vm.stack), len(vm.marks))
				}
				return vm.stack[0], nil
			}
			return nil, fmt.Errorf("opcode %q: %w", op[0], err)
		}
	}
}

var errStop = errors.New("stop")

// step runs one opcode.
func (vm *pickleVM) step(op byte) error {
	switch op {
	case '\x80': // PROTO
		v, err := vm.take(1)
		if err == nil && v[0] > 5 {
			err = fmt.Errorf("protocol %d", v[0])
		}
		return err
	case '\x95': // FRAME: a length hint only
		_, err := vm.take(8)
		return err
	case '.':
		return errStop
	case '(':
		vm.marks = append(vm.marks, len(vm.stack))
	case '1': // POP_MARK
		_, err := vm.popMark()
		return err
	case '0': // POP
		_, err := vm.pop()
		return err
	case '2': // DUP
		v, err := vm.top()
		if err == nil {
			vm.push(v)
		}
		return err
	case 'N':
		vm.push(nil)
	case '\x88':
		vm.push(true)
	case '\x89':
		vm.push(false)
	case 'K', 'M', 'J', '\x8a', 'G':
		return vm.number(op)
	case 'U', 'C', '\x8c': // SHORT_BINSTRING, SHORT_BINBYTES, SHORT_BINUNICODE
		return vm.str(1)
	case 'T', 'B', 'X': // BINSTRING, BINBYTES, BINUNICODE
		return vm.str(4)
	case '\x8e': // BINBYTES8
		return vm.str(8)
	case 'c': // GLOBAL
		mod, err := vm.line()
		if err != nil {
			return err
		}
		name, err := vm.line()
		if err != nil {
			return err
		}
		vm.push(pyGlobal{mod, name})
	case '\x93': // STACK_GLOBAL
		name, err := vm.pop()
		if err != nil {
			return err
		}
		mod, err := vm.pop()
		if err != nil {
			return err
		}
		m, ok1 := mod.(string)
		n, ok2 := name.(string)
		if !ok1 || !ok2 {
			return errors.New("STACK_GLOBAL of non-strings")
		}
		vm.push(pyGlobal{m, n})
	case 'q', 'h', 'r', 'j', '\x94':
		return vm.memoOp(op)
	default:
		return vm.build(op)
	}
	return nil
}

// number pushes an integer or float opcode's value.
func (vm *pickleVM) number(op byte) error {
	switch op {
	case 'K':
		v, err := vm.take(1)
		if err == nil {
			vm.push(int64(v[0]))
		}
		return err
	case 'M':
		v, err := vm.take(2)
		if err == nil {
			vm.push(int64(binary.LittleEndian.Uint16(v)))
		}
		return err
	case 'J':
		v, err := vm.take(4)
		if err == nil {
			vm.push(int64(int32(binary.LittleEndian.Uint32(v))))
		}
		return err
	case 'G':
		v, err := vm.take(8)
		if err == nil {
			vm.push(math.Float64frombits(binary.BigEndian.Uint64(v)))
		}
		return err
	}
	// LONG1: a little-endian two's-complement integer of n bytes.
	nb, err := vm.take(1)
	if err != nil {
		return err
	}
	if nb[0] > 8 {
		return fmt.Errorf("LONG1 of %d bytes does not fit int64", nb[0])
	}
	v, err := vm.take(int(nb[0]))
	if err != nil {
		return err
	}
	var x uint64
	for i := len(v) - 1; i >= 0; i-- {
		x = x<<8 | uint64(v[i])
	}
	if n := len(v); n > 0 && n < 8 && v[n-1]&0x80 != 0 {
		x |= ^uint64(0) << (8 * n) // sign-extend
	}
	vm.push(int64(x))
	return nil
}

func (vm *pickleVM) memoOp(op byte) error {
	switch op {
	case '\x94': // MEMOIZE
		return vm.put(uint32(len(vm.memo)))
	case 'q', 'h':
		v, err := vm.take(1)
		if err != nil {
			return err
		}
		if op == 'q' {
			return vm.put(uint32(v[0]))
		}
		return vm.fetch(uint32(v[0]))
	}
	v, err := vm.take(4)
	if err != nil {
		return err
	}
	if op == 'r' {
		return vm.put(binary.LittleEndian.Uint32(v))
	}
	return vm.fetch(binary.LittleEndian.Uint32(v))
}
