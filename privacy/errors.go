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
)

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
