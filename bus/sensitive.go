package bus

import (
	"github.com/vmihailenco/msgpack/v5"

	"graphfed/privacy"
)

// Sensitive is a float vector derived from a client's private data (model
// parameters, gradient estimators, margins, embeddings). Outside this
// package it can only be made from a privacy.Released, which only the
// privacy gate constructs: a sensitive publish that skips the gate does not
// compile. Receivers read it with Floats.
//
// It travels as one little-endian blob, like Vector.
type Sensitive struct {
	v []float32
}

// FromReleased carries a gated release onto the wire.
func FromReleased(r privacy.Released) Sensitive { return Sensitive{v: r.Data()} }

// Floats returns the received values (owned by the message: they may
// share its bytes, wire_decode.go).
func (s Sensitive) Floats() []float32 { return s.v }

// Len is the number of values.
func (s Sensitive) Len() int { return len(s.v) }

// IsZero reports an empty vector. msgpack's omitempty asks it: without
// it a struct with no exported fields counts as empty, and an omitempty
// Sensitive (Update.Rho, Update.Margin) would never reach the wire.
func (s Sensitive) IsZero() bool { return len(s.v) == 0 }

var (
	_ msgpack.CustomEncoder = Sensitive{}
	_ msgpack.CustomDecoder = (*Sensitive)(nil)
)

// EncodeMsgpack writes the blob.
func (s Sensitive) EncodeMsgpack(enc *msgpack.Encoder) error { return Vector(s.v).EncodeMsgpack(enc) }

// DecodeMsgpack reads the blob.
func (s *Sensitive) DecodeMsgpack(dec *msgpack.Decoder) error {
	var v Vector
	if err := v.DecodeMsgpack(dec); err != nil {
		return err
	}
	s.v = v
	return nil
}
