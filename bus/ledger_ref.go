package bus

import "graphfed/privacy"

// LedgerRef names one entry of a party's ledger chain on the wire: its
// seq and hex digest (privacy.Ref). Banks report their ledger head in
// updates and final metrics; the aggregator names its latest record in
// round openings, hello replies and done, which the banks' next entries
// countersign (privacy.Entry.Anchor). nil on the wire: none.
type LedgerRef struct {
	Seq    uint64 `msgpack:"seq"`
	Digest string `msgpack:"digest"`
}

// NewLedgerRef is r on the wire: nil for the zero Ref (no entry yet).
func NewLedgerRef(r privacy.Ref) *LedgerRef {
	if r.IsZero() {
		return nil
	}
	return &LedgerRef{Seq: r.Seq, Digest: r.Digest}
}

// Ref is the entry l names; the zero Ref for nil. Whether it names an
// entry at all (privacy.Ref.Valid) is the receiver's to check.
func (l *LedgerRef) Ref() privacy.Ref {
	if l == nil {
		return privacy.Ref{}
	}
	return privacy.Ref{Seq: l.Seq, Digest: l.Digest}
}
