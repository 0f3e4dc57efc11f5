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
// them only from the run they joined (agent.RunGuard). A later run is
// followed only when it names the agent's run among those that ended
// before it took the job over (RoundOpen.Ended): a newer id alone proves
// nothing, since a second aggregator started by mistake has one too. The
// ended runs come from the job's run lease (run_lease.go,
// aggregator.AcquireLease), which passes from one run to the next only
// when the holder released it or stopped renewing it. The id starts with
// the run's start time, so that a party can tell a replayed earlier run
// from one it has not heard of: "<unix nanoseconds, 16 hex
// digits>-<16 random hex digits>".

// ReasonReplay labels a message of an earlier run, or a hello not newer
// than the sender's last one, replayed at a party.
const ReasonReplay = "replay"

// ReasonOtherRun labels a message of a run that did not take the job over
// from the agent's run (a second aggregator of the job): the agent goes on
// following its own.
const ReasonOtherRun = "other_run"

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
