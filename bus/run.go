package bus

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A run id names one run of an aggregator process for a job: a job id can
// be run again (--resume) and a durable aggregator restarts, and the
// messages of an earlier run, signed by the same aggregator key, must not
// act on the agents of a later one. The aggregator announces its run id in
// every hello reply, round opening and done (all signed), and agents take
// a done only from the run they know (agent.RunGuard). The id starts with
// the run's start time, so that an agent can tell a later run (a restarted
// aggregator) from a replayed earlier one: "<unix nanoseconds, 16 hex
// digits>-<16 random hex digits>".

// ReasonReplay labels a message of an earlier run, or a hello not newer
// than the sender's last one, replayed at a party.
const ReasonReplay = "replay"

// NewRunID returns a fresh run id for a run started at start.
func NewRunID(start time.Time) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("bus: run id: %w", err)
	}
	return fmt.Sprintf("%016x-%s", uint64(start.UnixNano()), hex.EncodeToString(b[:])), nil
}

// RunStart is the start time encoded in run id; ok is false for a
// malformed id (an empty one included).
func RunStart(id string) (t time.Time, ok bool) {
	ts, rnd, found := strings.Cut(id, "-")
	if !found || len(ts) != 16 || len(rnd) != 16 {
		return time.Time{}, false
	}
	if _, err := hex.DecodeString(rnd); err != nil {
		return time.Time{}, false
	}
	n, err := strconv.ParseUint(ts, 16, 64)
	if err != nil || n > 1<<63-1 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(n)), true
}

// RunLater reports whether run id a started after run id b (a malformed or
// empty b is earlier than any well-formed a; a malformed a is never later).
func RunLater(a, b string) bool {
	ta, ok := RunStart(a)
	if !ok {
		return false
	}
	tb, ok := RunStart(b)
	if !ok {
		return true
	}
	return ta.After(tb)
}
