// Package memlimit is graphfed's policy for Go's soft memory limit
// (runtime/debug.SetMemoryLimit): byte sizes with units, the default of
// an in-process simulation by its parties, and which setting wins when a
// process starts (its flag, then GOMEMLIMIT, then the command's default).
package memlimit

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Sim is a simulation's default soft memory limit. The 5M-row, 8-bank
// AML job (`sim --scenario aml --size small --banks 8`) has a live heap of
// about 2 GiB at its peaks (an exchange round's releases in flight); Go's
// default GOGC=100 lets the heap grow to twice the live heap before
// collecting, which took the job to 7 GB of RSS. Held at 2.75 GiB its RSS
// peaked at 2.99e9 bytes, inside the job's 3 GiB (3.22e9), for ~8% more
// CPU (624 s against 576 s, mostly the scavenger returning pages), and its
// rounds did not slow down as the heap filled: the GC collects more often,
// not continuously. A job whose live heap nears the limit (the 30M-row
// medium world) should raise it, or pass 0 to turn it off: past the limit
// the GC runs on every allocation (capped by the runtime at half the CPU).
const Sim = 11 << 28 // 2.75 GiB

// PerParty is what a simulation's default limit grows by per party, up
// to SimMost: each in-process agent keeps about 250 KB live (its
// connection's buffers, subscriptions, gate, learner and 100-node
// subgraph), so at 10,000 parties the live heap alone passes 2.75 GiB and
// a fixed limit had the GC running on nearly every allocation: the
// 10,000-party csbm job spent half its CPU in the collector and missed its
// rounds' ledger deadlines. With the room to double the live heap that
// GOGC=100 wants, up to 7 GiB, it stays inside the job's 8 GiB.
const (
	PerParty = 480 << 10 // 480 KiB
	SimMost  = 7 << 30   // 7 GiB
)

// SimFor is a simulation's default limit for a job of parties parties.
func SimFor(parties int) int64 {
	return max(Sim, min(Sim+int64(parties)*PerParty, SimMost))
}

// Limit is the soft memory limit a process runs under and what set it.
type Limit struct {
	From  string // "--memory-limit", "GOMEMLIMIT" or "default"
	Bytes int64  // 0: none
}

// Apply sets the process's soft memory limit: flag when given (nil: not
// given; "0" or "off": none), else GOMEMLIMIT (which the runtime has
// applied already), else def bytes (0: none). It returns the limit in
// force.
func Apply(flag *string, def int64) (Limit, error) {
	l := Limit{From: "default", Bytes: def}
	switch {
	case flag != nil:
		n, err := Parse(*flag)
		if err != nil {
			return Limit{}, fmt.Errorf("--memory-limit: %w", err)
		}
		l = Limit{From: "--memory-limit", Bytes: n}
	case os.Getenv("GOMEMLIMIT") != "":
		l = Limit{From: "GOMEMLIMIT", Bytes: debug.SetMemoryLimit(-1)}
	}
	if l.Bytes <= 0 || l.Bytes == math.MaxInt64 {
		debug.SetMemoryLimit(math.MaxInt64)
		l.Bytes = 0
		return l, nil
	}
	debug.SetMemoryLimit(l.Bytes)
	return l, nil
}

// Parse reads a byte count: a number with an optional unit B, KB, MB, GB,
// TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), case
// insensitive; "off" and "0" mean none (0).
func Parse(s string) (int64, error) {
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

// Format writes n in the largest binary unit that keeps it ≥ 1, to two
// decimals.
func Format(n int64) string {
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
