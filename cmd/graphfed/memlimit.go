package main

import (
	"fmt"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/internal/memlimit"
)

// simMemoryLimit is sim's default soft memory limit (memlimit.Sim says
// why).
const simMemoryLimit = memlimit.Sim

// simMemoryLimitFor is sim's default limit for a job of parties parties.
func simMemoryLimitFor(parties int) int64 { return memlimit.SimFor(parties) }

// memoryLimit is --memory-limit: Go's soft memory limit for the process
// (memlimit.Apply), with units. It is the flag's value, so that it knows
// whether it was given.
type memoryLimit struct {
	value *string // nil: not given
	def   int64   // 0: none unless GOMEMLIMIT
}

func (m *memoryLimit) String() string {
	if m.value == nil {
		return ""
	}
	return *m.value
}

func (m *memoryLimit) Set(s string) error { m.value = &s; return nil }
func (m *memoryLimit) Type() string       { return "string" }

// registerMemoryLimit adds --memory-limit to cmd with default def bytes
// (0: none); why says, in the flag's help, why that default.
func registerMemoryLimit(cmd *cobra.Command, def int64, why string) *memoryLimit {
	m := &memoryLimit{def: def}
	help := "Go soft memory limit of the process, bytes with units (2.5GiB, 3000MB; 0 or off: none); " +
		"the GOMEMLIMIT environment variable is used when the flag is not given"
	if def > 0 {
		help += fmt.Sprintf(". Default %s: %s", memlimit.Format(def), why)
	} else {
		help += ". Default: none"
	}
	cmd.Flags().Var(m, "memory-limit", help)
	return m
}

// defaultFor replaces the default (before apply), for a command whose
// default depends on its arguments.
func (m *memoryLimit) defaultFor(def int64) { m.def = def }

// apply sets the limit and logs the one in force.
func (m *memoryLimit) apply(_ *cobra.Command, log zerolog.Logger) error {
	l, err := memlimit.Apply(m.value, m.def)
	if err != nil {
		return err
	}
	if l.Bytes == 0 {
		log.Info().Str("from", l.From).Msg("memory limit: none")
		return nil
	}
	log.Info().Str("from", l.From).Int64("bytes", l.Bytes).Msg("memory limit " + memlimit.Format(l.Bytes))
	return nil
}
