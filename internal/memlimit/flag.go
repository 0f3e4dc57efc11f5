package memlimit

import (
	"fmt"

	"github.com/rs/zerolog"
)

// Flag is a --memory-limit flag's value (a pflag.Value): it knows whether
// it was given, which Apply needs to let GOMEMLIMIT win over Default.
type Flag struct {
	value   *string // nil: not given
	Default int64   // bytes; 0: none unless GOMEMLIMIT
}

func (f *Flag) String() string {
	if f.value == nil {
		return ""
	}
	return *f.value
}

func (f *Flag) Set(s string) error { f.value = &s; return nil }
func (f *Flag) Type() string       { return "string" }

// Help is the flag's usage for a default of def bytes (0: none); why
// says why that default.
func Help(def int64, why string) string {
	help := "Go soft memory limit of the process, bytes with units (2.5GiB, 3000MB; 0 or off: none); " +
		"the GOMEMLIMIT environment variable is used when the flag is not given"
	if def > 0 {
		return help + fmt.Sprintf(". Default %s: %s", Format(def), why)
	}
	return help + ". Default: none"
}

// Apply sets the process's limit from the flag (Apply) and logs the one
// in force.
func (f *Flag) Apply(log zerolog.Logger) error {
	l, err := Apply(f.value, f.Default)
	if err != nil {
		return err
	}
	if l.Bytes == 0 {
		log.Info().Str("from", l.From).Msg("memory limit: none")
		return nil
	}
	log.Info().Str("from", l.From).Int64("bytes", l.Bytes).Msg("memory limit " + Format(l.Bytes))
	return nil
}
