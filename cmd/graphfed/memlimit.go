package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
)

// simMemoryLimit is sim's default soft memory limit. The 5M-row, 8-bank
// AML job (`sim --scenario aml --size small --banks 8`) has a live heap
// of about 2 GiB at its peaks (an exchange round's releases in flight);
// Go's default GOGC=100 lets the heap grow to twice the live heap before
// collecting, which took the job to 7 GB of RSS. Held at 2.75 GiB its RSS
// peaked at 2.99e9 bytes, inside the job's 3 GiB (3.22e9), for ~8% more
// CPU (624 s against 576 s, mostly the scavenger returning pages), and its
// rounds did not slow down as the heap filled: the GC collects more often,
// not continuously. A job whose live heap nears the limit (the 30M-row
// medium world) should raise it, or pass 0 to turn it off: past the limit
// the GC runs on every allocation (capped by the runtime at half the CPU).
const simMemoryLimit = 11 << 28 // 2.75 GiB

// simPartyMemory is what sim's default limit grows by per party, up to
// simMostMemoryLimit: each in-process agent keeps about 250 KB live (its
// connection's buffers, subscriptions, gate, learner and 100-node
// subgraph), so at 10,000 parties the live heap alone passes 2.75 GiB and
// a fixed limit had the GC running on nearly every allocation: the
// 10,000-party csbm job spent half its CPU in the collector and missed
// its rounds' ledger deadlines. With the room to double the live heap
// that GOGC=100 wants, up to 7 GiB, it stays inside the job's 8 GiB.
const (
	simPartyMemory     = 480 << 10 // 480 KiB
	simMostMemoryLimit = 7 << 30   // 7 GiB
)

// simMemoryLimitFor is sim's default limit for a job of parties parties.
func simMemoryLimitFor(parties int) int64 {
	return max(simMemoryLimit, min(simMemoryLimit+int64(parties)*simPartyMemory, simMostMemoryLimit))
}

// memoryLimit is --memory-limit: Go's soft memory limit for the process
// (runtime/debug.SetMemoryLimit), with units.
type memoryLimit struct {
	value string
	def   int64 // 0: none unless GOMEMLIMIT
}

// registerMemoryLimit adds --memory-limit to cmd with default def bytes
// (0: none); why says, in the flag's help, why that default.
func registerMemoryLimit(cmd *cobra.Command, def int64, why string) *memoryLimit {
	m := &memoryLimit{def: def}
	help := "Go soft memory limit of the process, bytes with units (2.5GiB, 3000MB; 0 or off: none); " +
		"the GOMEMLIMIT environment variable is used when the flag is not given"
	if def > 0 {
		help += fmt.Sprintf(". Default %s: %s", formatBytes(def), why)
	} else {
		help += ". Default: none"
	}
	cmd.Flags().StringVar(&m.value, "memory-limit", "", help)
	return m
}

// defaultFor replaces the default (before apply), for a command whose
// default depends on its arguments.
func (m *memoryLimit) defaultFor(def int64) { m.def = def }

// apply sets the limit, the flag first, then GOMEMLIMIT (which the runtime
// has applied already), then the default, and logs the one in force.
func (m *memoryLimit) apply(cmd *cobra.Command, log zerolog.Logger) error {
	src, limit := "default", m.def
	switch {
	case cmd.Flags().Changed("memory-limit"):
		n, err := parseBytes(m.value)
		if err != nil {
			return fmt.Errorf("--memory-limit: %w", err)
		}
		src, limit = "--memory-limit", n
	case os.Getenv("GOMEMLIMIT") != "":
		src, limit = "GOMEMLIMIT", debug.SetMemoryLimit(-1)
	}
	if limit <= 0 || limit == math.MaxInt64 {
		debug.SetMemoryLimit(math.MaxInt64)
		log.Info().Str("from", src).Msg("memory limit: none")
		return nil
	}
	debug.SetMemoryLimit(limit)
	log.Info().Str("from", src).Int64("bytes", limit).Msg("memory limit " + formatBytes(limit))
	return nil
}

// parseBytes reads a byte count: a number with an optional unit B, KB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), case
// insensitive; "off" and "0" mean none (0).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "off") {
		return 0, nil
	}
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != 'e' && r != 'E' && r != '+' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult := map[string]float64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (want B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)", s, unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || v*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("%q: want a non-negative number of bytes with a unit", s)
	}
	return int64(v * mult), nil
}

// formatBytes writes n in the largest binary unit that keeps it ≥ 1, to
// two decimals.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			return strconv.FormatFloat(math.Round(float64(n)/float64(u.size)*100)/100, 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
