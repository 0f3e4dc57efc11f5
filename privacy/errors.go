package privacy

import (
	"errors"
	"strings"
)

// Sentinel error kinds. Every error the package returns is an *Error whose
// Kind is one of these; test with errors.Is.
var (
	// ErrBudgetExceeded: the release would overspend an (ε, δ) budget;
	// nothing was charged, logged or released.
	ErrBudgetExceeded = errors.New("budget exceeded")
	// ErrInvalid: a malformed request, entry, configuration or argument.
	ErrInvalid = errors.New("invalid")
	// ErrCorrupt: a ledger whose content cannot be trusted (a bad record
	// in the middle of the file, not a torn final line).
	ErrCorrupt = errors.New("corrupt ledger")
	// ErrLedger: the ledger failed to store or read entries.
	ErrLedger = errors.New("ledger failure")
	// ErrClosed: the ledger was closed.
	ErrClosed = errors.New("ledger closed")
	// ErrAlreadyReleased: the ledger holds this client's own entry of the
	// release's channel and round already, at the sequence number the gate
	// was about to use: an earlier life's append that the ledger stored
	// only after this gate read its chain. The gate has accounted that
	// entry, once, and released nothing; like ErrBudgetExceeded it is an
	// outcome, not a failure (Gate.Release).
	ErrAlreadyReleased = errors.New("already released")
)

// ErrChainMoved is what a Ledger's Append refusal wraps, besides
// ErrInvalid, when the ledger already holds an entry of the entry's client
// at its sequence number or a later one: the client's chain has moved on
// past the writer's view of it. The gate resolves it by reading the chain
// again (Gate.Release); the ledger conformance suite checks every
// implementation returns it.
var ErrChainMoved = errors.New("the client's chain has moved on")

// Error is the package's error: the operation that failed, the kind (one of
// the sentinels above), a human detail and an optional cause.
//
//	privacy: release: budget exceeded for client bank-3 channel emb
type Error struct {
	Op     string // "release", "charge", "open ledger", ...
	Kind   error  // a sentinel, e.g. ErrBudgetExceeded
	Detail string // "for client bank-3 channel emb"
	Err    error  // underlying cause, may be nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("privacy: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Kind != nil {
		b.WriteString(e.Kind.Error())
	}
	if e.Detail != "" {
		b.WriteByte(' ')
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func errorf(op string, kind error, detail string) error {
	return &Error{Op: op, Kind: kind, Detail: detail}
}

func wrapErr(op string, kind error, detail string, cause error) error {
	return &Error{Op: op, Kind: kind, Detail: detail, Err: cause}
}
