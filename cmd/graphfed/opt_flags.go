package main

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// optional is a flag bound to a pointer field that stays nil, the job
// library's "unset", until the flag is given: the library, not a
// flag-parser's Changed, tells a default from a choice.
type optional[T any] struct {
	p     **T
	parse func(string) (T, error)
	typ   string
}

func (o optional[T]) Set(s string) error {
	v, err := o.parse(s)
	if err != nil {
		return err
	}
	*o.p = &v
	return nil
}

func (o optional[T]) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return fmt.Sprint(**o.p)
}

func (o optional[T]) Type() string { return o.typ }

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
func parseUint(s string) (uint64, error)   { return strconv.ParseUint(s, 0, 64) }

// unsetFloat, unsetInt, unsetUint, unsetBool and unsetDuration bind a
// flag to a field that stays nil until it is given.
func unsetFloat(p **float64) optional[float64] { return optional[float64]{p, parseFloat, "float"} }
func unsetInt(p **int) optional[int]           { return optional[int]{p, strconv.Atoi, "int"} }
func unsetUint(p **uint64) optional[uint64]    { return optional[uint64]{p, parseUint, "uint"} }
func unsetBool(p **bool) optional[bool]        { return optional[bool]{p, strconv.ParseBool, "bool"} }
func unsetDuration(p **time.Duration) optional[time.Duration] {
	return optional[time.Duration]{p, time.ParseDuration, "duration"}
}

// unsetBoolVar registers a bool flag that stays nil until given and, as a
// bool flag does, stands without a value.
func unsetBoolVar(f *pflag.FlagSet, p **bool, name, usage string) {
	f.Var(unsetBool(p), name, usage)
	f.Lookup(name).NoOptDefVal = "true"
}

// positive is a float flag whose zero field means "the library's
// default", so a given value must be a positive number: an explicit 0 is
// refused here rather than silently taken as the default.
type positive struct {
	p    *float64
	what string
}

func (v positive) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return err
	case !(x > 0) || math.IsInf(x, 0):
		return fmt.Errorf("%s is %v; it must be positive and finite", v.what, x)
	}
	*v.p = x
	return nil
}

func (v positive) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (positive) Type() string { return "float" }
