// Package flagval holds pflag values that keep a library's "unset" apart
// from a value given on the command line: a pointer field stays nil until
// its flag is given (Optional), and a zero field that means "the
// default" refuses an explicit zero (Positive). With them a command binds
// flags into a spec and never asks the parser which flags were typed.
package flagval

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Optional is a flag bound to a pointer field that stays nil until the
// flag is given.
type Optional[T any] struct {
	p     **T
	parse func(string) (T, error)
	typ   string
}

// NewOptional binds p, parsing values with parse; typ names the value in
// usage lines.
func NewOptional[T any](p **T, parse func(string) (T, error), typ string) Optional[T] {
	return Optional[T]{p, parse, typ}
}

func (o Optional[T]) Set(s string) error {
	v, err := o.parse(s)
	if err != nil {
		return err
	}
	*o.p = &v
	return nil
}

func (o Optional[T]) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return fmt.Sprint(**o.p)
}

func (o Optional[T]) Type() string { return o.typ }

// Float, Int, Uint, Bool and Duration are Optional for the usual types.
func Float(p **float64) Optional[float64] {
	return NewOptional(p, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, "float")
}
func Int(p **int) Optional[int]    { return NewOptional(p, strconv.Atoi, "int") }
func Bool(p **bool) Optional[bool] { return NewOptional(p, strconv.ParseBool, "bool") }
func Uint(p **uint64) Optional[uint64] {
	return NewOptional(p, func(s string) (uint64, error) { return strconv.ParseUint(s, 0, 64) }, "uint")
}
func Duration(p **time.Duration) Optional[time.Duration] {
	return NewOptional(p, time.ParseDuration, "duration")
}

// Positive is a float flag whose zero field means the library's default,
// so a given value must be positive and finite: an explicit 0 is refused
// rather than silently taken as the default.
type Positive struct {
	P    *float64
	What string // the setting, for the error
}

func (v Positive) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return err
	case !(x > 0) || math.IsInf(x, 0):
		return fmt.Errorf("%s is %v; it must be positive and finite", v.What, x)
	}
	*v.P = x
	return nil
}

func (v Positive) String() string {
	if v.P == nil || *v.P == 0 {
		return ""
	}
	return strconv.FormatFloat(*v.P, 'g', -1, 64)
}

func (Positive) Type() string { return "float" }

// OnOff is a boolean flag spelled on or off (--secagg on|off), stored
// inverted in *off so that the zero value of the setting means on.
type OnOff struct{ Off *bool }

// Set takes on or off.
func (v OnOff) Set(s string) error {
	switch s {
	case "on":
		*v.Off = false
	case "off":
		*v.Off = true
	default:
		return fmt.Errorf("%q: want on or off", s)
	}
	return nil
}

func (v OnOff) String() string {
	if v.Off != nil && *v.Off {
		return "off"
	}
	return "on"
}

// Type names the flag's values in help.
func (v OnOff) Type() string { return "on|off" }
