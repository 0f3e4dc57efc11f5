package bus

import (
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// SchemaVersion is the envelope schema this build writes and accepts.
// Schema 2 signs a BLAKE3 digest of the fields (signature.go); schema 1
// signed a SHA-256 one. A party of another schema is refused with its
// version, not with a signature that fails.
const SchemaVersion = 2

// Envelope wraps every message on the bus. (From, Kind, Round, Seq) is unique
// per job and doubles as JetStream's Nats-Msg-Id for de-duplication.
type Envelope struct {
	Version uint64 `msgpack:"v"` // wide, so a large wire value cannot wrap to a valid one
	Job     string `msgpack:"j"`
	Kind    Kind   `msgpack:"k"`
	From    string `msgpack:"f"`
	Round   uint64 `msgpack:"r"`
	Seq     uint64 `msgpack:"s"`
	Time    int64  `msgpack:"t"` // unix nanoseconds at the sender
	Body    []byte `msgpack:"b"` // the msgpack-encoded typed body
	// Ref, instead of Body, names the body stored in the object store
	// (an encoded BlobRef, blobref.go); empty for a body sent inline.
	Ref []byte `msgpack:"o,omitempty"`
	Sig []byte `msgpack:"g,omitempty"`

	// frame, when set by marshalBody, is the buffer Body lies in, with
	// room for the rest of the envelope around it (encode).
	frame []byte
}

// MsgID is the de-duplication id of the envelope.
func (e *Envelope) MsgID() string {
	return fmt.Sprintf("%s.%s.%d.%d", e.From, e.Kind, e.Round, e.Seq)
}

// SentAt is the sender's clock at publication.
func (e *Envelope) SentAt() time.Time { return time.Unix(0, e.Time) }

// Seal encodes body into the envelope and the envelope into wire bytes.
func Seal(env Envelope, body any) ([]byte, error) {
	frame, b, err := marshalBody(body)
	if err != nil {
		return nil, fmt.Errorf("bus: seal %s body: %w", env.Kind, err)
	}
	env.Version = SchemaVersion
	env.Body, env.frame = b, frame
	return env.encode(), nil
}

// Open decodes wire bytes into an envelope without looking at the body. It
// checks only what every message must satisfy: decodability and the schema
// version; Validator.Open adds the job's checks. The envelope's Body, Ref
// and Sig may share data's bytes (wire_decode.go): edit a copy.
func Open(data []byte) (Envelope, error) {
	var env Envelope
	if err := checkMsgpack(data); err != nil {
		return Envelope{}, &RejectError{Reason: ReasonGarbage, Err: err}
	}
	// The usual encoding is read without copying the body (it then shares
	// data's bytes: wire_decode.go); any other goes through msgpack.
	if fast, ok := openFast(data); ok {
		env = fast
	} else if err := msgpack.Unmarshal(data, &env); err != nil {
		return Envelope{}, &RejectError{Reason: ReasonGarbage, Err: err}
	}
	if env.Version != SchemaVersion {
		return Envelope{}, &RejectError{Reason: ReasonVersion,
			Err: fmt.Errorf("schema version %d, want %d", env.Version, SchemaVersion)}
	}
	return env, nil
}

// UnmarshalBody decodes the envelope's body into dst. Its vectors may share
// the body's bytes (wire_decode.go).
func (e *Envelope) UnmarshalBody(dst any) error {
	if err := checkMsgpack(e.Body); err != nil {
		return &RejectError{Reason: ReasonGarbage, Err: fmt.Errorf("%s body: %w", e.Kind, err)}
	}
	// Bodies are msgpack maps (or nil). The decoder would also fill a
	// struct from an array, by field position, and then an LPSFed body
	// could decode while its base message, which has fewer fields, does
	// not: the generic validator and an LPSFed aggregator would disagree
	// about the same bytes.
	if !isMsgpackMapOrNil(e.Body) {
		return &RejectError{Reason: ReasonGarbage, Err: fmt.Errorf("%s body: not a msgpack map", e.Kind)}
	}
	if err := unmarshalAliased(e.Body, dst); err != nil {
		return &RejectError{Reason: ReasonGarbage, Err: fmt.Errorf("%s body: %w", e.Kind, err)}
	}
	return nil
}

// isMsgpackMapOrNil reports whether b starts with a msgpack map header
// (fixmap, map 16, map 32) or nil.
func isMsgpackMapOrNil(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	c := b[0]
	return c&0xf0 == 0x80 || c == 0xde || c == 0xdf || c == 0xc0
}
