package secagg

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error this package returns wraps one of them or a
// cause from the standard library, inside an *Error naming the operation.
var (
	// ErrMalformed: wire bytes or a value that this package would not have
	// produced.
	ErrMalformed = errors.New("malformed")
	// ErrSignature: a signature that does not verify for the party that
	// the message names.
	ErrSignature = errors.New("signature does not verify")
	// ErrDecrypt: a sealed share that does not open (wrong recipient,
	// context or bytes).
	ErrDecrypt = errors.New("does not decrypt")
	// ErrMismatch: a message of another job, round or configuration, or
	// from or to a party outside the cohort.
	ErrMismatch = errors.New("does not match this round")
	// ErrState: a call the state machine does not accept at this stage.
	ErrState = errors.New("out of order")
	// ErrLate: a message after the stage that takes it has closed (a
	// masked input after the list is signed goes into the next round).
	ErrLate = errors.New("late")
	// ErrBelowThreshold: fewer than t parties or shares where t are
	// needed; the round closes without a sum.
	ErrBelowThreshold = errors.New("below threshold")
	// ErrRefused: a client's safety refusal (see Refusal).
	ErrRefused = errors.New("refused")
	// ErrBounds: an input outside the declared fixed-point bounds, or a sum
	// that no cohort of in-bounds inputs can produce.
	ErrBounds = errors.New("out of bounds")
)

// Error is the error type of the package: the operation, the party it
// concerns (if any) and the cause.
type Error struct {
	Op    string // e.g. "client.unmask", "shamir.combine"
	Party string // the party concerned, "" when none
	Err   error
}

func (e *Error) Error() string {
	if e.Party != "" {
		return fmt.Sprintf("secagg: %s (%s): %v", e.Op, e.Party, e.Err)
	}
	return fmt.Sprintf("secagg: %s: %v", e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// errf builds an *Error whose cause wraps kind with a formatted detail.
func errf(op string, kind error, format string, args ...any) error {
	return &Error{Op: op, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
}

// perr is errf about a party.
func perr(op, party string, kind error, format string, args ...any) error {
	return &Error{Op: op, Party: party, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
}

// wrap builds an *Error around a cause.
func wrap(op string, err error) error { return &Error{Op: op, Err: err} }

// Refusal is the reason a client refused to reveal shares. Each is counted
// in the client's Refusals.
type Refusal int

const (
	// RefusedBadList: a list that is unsigned, signed by someone other than
	// the aggregator, of another round, or naming parties outside the
	// cohort.
	RefusedBadList Refusal = iota
	// RefusedBothLists: a party listed both as survivor and as dropout.
	RefusedBothLists
	// RefusedConflictingList: a second list for the round that differs
	// from the first one answered (a curious server asking twice).
	RefusedConflictingList
	// RefusedBothKinds: answering would reveal both a self-mask share and
	// a mask-key share of one party in one round.
	RefusedBothKinds
	// RefusedBelowThreshold: fewer than t survivors listed.
	RefusedBelowThreshold
	// RefusedSelfDropped: the list names this client as a dropout or not at
	// all (its input is not in the sum; it has nothing to reveal).
	RefusedSelfDropped
	numRefusals
)

var refusalNames = [numRefusals]string{
	"bad list", "party both survivor and dropout", "conflicting second list",
	"both share kinds for one party", "fewer than t survivors", "self not a survivor",
}

func (r Refusal) String() string {
	if r < 0 || r >= numRefusals {
		return fmt.Sprintf("refusal(%d)", int(r))
	}
	return refusalNames[r]
}

// RefusalError is the error of a refused Unmask; errors.Is(err, ErrRefused).
type RefusalError struct {
	Reason Refusal
	Detail string
}

func (e *RefusalError) Error() string {
	return fmt.Sprintf("secagg: client.unmask: refused (%s): %s", e.Reason, e.Detail)
}

func (e *RefusalError) Unwrap() error { return ErrRefused }

// Refusals counts a client's refusals by reason.
type Refusals [numRefusals]int

// Total is the number of refusals of every reason.
func (r Refusals) Total() int {
	n := 0
	for _, c := range r {
		n += c
	}
	return n
}
