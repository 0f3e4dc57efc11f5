package main

import (
	"github.com/spf13/pflag"

	"graphfed/internal/flagval"
)

// Flags bound to fields that stay unset (nil) until given, and to zero
// fields whose given value must be positive (internal/flagval).
func unsetFloat(p **float64) pflag.Value           { return flagval.Float(p) }
func unsetInt(p **int) pflag.Value                 { return flagval.Int(p) }
func unsetUint(p **uint64) pflag.Value             { return flagval.Uint(p) }
func positive(p *float64, what string) pflag.Value { return flagval.Positive{P: p, What: what} }

// unsetBoolVar registers a bool flag that stays nil until given and, as a
// bool flag does, stands without a value.
func unsetBoolVar(f *pflag.FlagSet, p **bool, name, usage string) {
	f.Var(flagval.Bool(p), name, usage)
	f.Lookup(name).NoOptDefVal = "true"
}
