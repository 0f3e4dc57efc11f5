package main

import (
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/internal/memlimit"
)

// simMemoryLimit is sim's default soft memory limit (memlimit.Sim).
const simMemoryLimit = memlimit.Sim

// simMemoryLimitFor is sim's default limit for a job of parties parties.
func simMemoryLimitFor(parties int) int64 { return memlimit.SimFor(parties) }

// memoryLimit is --memory-limit, Go's soft memory limit of the process.
type memoryLimit struct{ flag memlimit.Flag }

// registerMemoryLimit adds --memory-limit to cmd with default def bytes
// (0: none); why says, in the flag's help, why that default.
func registerMemoryLimit(cmd *cobra.Command, def int64, why string) *memoryLimit {
	m := &memoryLimit{memlimit.Flag{Default: def}}
	cmd.Flags().Var(&m.flag, "memory-limit", memlimit.Help(def, why))
	return m
}

// defaultFor replaces the default (before apply), for a command whose
// default depends on its arguments.
func (m *memoryLimit) defaultFor(def int64) { m.flag.Default = def }

// apply sets the limit and logs the one in force.
func (m *memoryLimit) apply(_ *cobra.Command, log zerolog.Logger) error { return m.flag.Apply(log) }
