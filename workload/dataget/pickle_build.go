package dataget

import (
	"errors"
	"fmt"
)

// build runs the opcodes that make containers and calls.
func (vm *pickleVM) build(op byte) error {
	switch op {
	case ')':
		vm.push(pyTuple{})
	case 't':
		items, err := vm.popMark()
		if err == nil {
			vm.push(pyTuple(items))
		}
		return err
	case '\x85', '\x86', '\x87': // TUPLE1..3
		n := int(op-'\x85') + 1
		t := make(pyTuple, n)
		for i := n - 1; i >= 0; i-- {
			v, err := vm.pop()
			if err != nil {
				return err
			}
			t[i] = v
		}
		vm.push(t)
	case ']':
		vm.push(&pyList{})
	case 'a', 'e': // APPEND, APPENDS
		var items []any
		if op == 'a' {
			v, err := vm.pop()
			if err != nil {
				return err
			}
			items = []any{v}
		} else {
			var err error
			if items, err = vm.popMark(); err != nil {
				return err
			}
		}
		t, err := vm.top()
		if err != nil {
			return err
		}
		l, ok := t.(*pyList)
		if !ok {
			return fmt.Errorf("append to %T", t)
		}
		l.Items = append(l.Items, items...)
	case '}':
		vm.push(&pyDict{})
	case 's', 'u': // SETITEM, SETITEMS
		var kv []any
		if op == 's' {
			v, err := vm.pop()
			if err != nil {
				return err
			}
			k, err := vm.pop()
			if err != nil {
				return err
			}
			kv = []any{k, v}
		} else {
			var err error
			if kv, err = vm.popMark(); err != nil {
				return err
			}
		}
		if len(kv)%2 != 0 {
			return errors.New("odd number of items for a dict")
		}
		t, err := vm.top()
		if err != nil {
			return err
		}
		d, err := dictOf(t)
		if err != nil {
			return err
		}
		for i := 0; i < len(kv); i += 2 {
			d.Keys = append(d.Keys, kv[i])
			d.Values = append(d.Values, kv[i+1])
		}
	case 'R', '\x81': // REDUCE, NEWOBJ: recorded, never called
		args, err := vm.pop()
		if err != nil {
			return err
		}
		fn, err := vm.pop()
		if err != nil {
			return err
		}
		g, ok1 := fn.(pyGlobal)
		a, ok2 := args.(pyTuple)
		if !ok1 || !ok2 {
			return fmt.Errorf("call of %T with %T", fn, args)
		}
		vm.push(&pyCall{Fn: g, Args: a})
	case 'b': // BUILD
		state, err := vm.pop()
		if err != nil {
			return err
		}
		t, err := vm.top()
		if err != nil {
			return err
		}
		c, ok := t.(*pyCall)
		if !ok {
			return fmt.Errorf("build on %T", t)
		}
		c.State = state
	default:
		return errors.New("unsupported opcode")
	}
	return nil
}

// dictOf is the dict SETITEM(S) fills: a dict, or a call's items (a
// defaultdict, an OrderedDict).
func dictOf(v any) (*pyDict, error) {
	switch t := v.(type) {
	case *pyDict:
		return t, nil
	case *pyCall:
		if t.Items == nil {
			t.Items = &pyDict{}
		}
		return t.Items, nil
	}
	return nil, fmt.Errorf("setitem on %T", v)
}
