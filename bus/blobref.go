package bus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

// Bodies larger than a connection's inline limit travel through the
// JetStream object store by reference (DESIGN.md, Subjects and messages):
// the sender stores the msgpack body as an object of its own bucket and
// sends an envelope whose Ref names it (bucket, object, size, SHA-256 of
// the body) and whose Body is empty. The signature covers Ref, so a
// signed envelope authenticates the blob through its digest. The
// receiver's validator checks the reference before any I/O (the bucket
// must be the sender's, the size within the job's model schema), fetches
// at most that many bytes, checks the digest, and then decodes and checks
// the body as if it had come inline. Endpoint makes the decision on the
// way out and the fetch on the way in, so that no driver carries a copy.

// Reject reasons of bodies sent by reference.
const (
	ReasonBlobRef     = "blob_ref"     // malformed reference, or one the sender may not make (bucket, kind)
	ReasonBlobMissing = "blob_missing" // the object is absent, deleted or unreadable
	ReasonBlobDigest  = "blob_digest"  // the object's size or SHA-256 differs from the reference's
)

// MaxBlobSize bounds the size field of any reference (1 TiB); the job's
// model schema bounds it much lower (Schema.BlobLimit).
const MaxBlobSize = 1 << 40

// maxBlobName bounds an object name (blobObjectName's are far shorter).
const maxBlobName = 128

// BlobRef names a body stored in the object store.
type BlobRef struct {
	Bucket string `msgpack:"b"`
	Name   string `msgpack:"n"`
	Size   uint64 `msgpack:"s"`
	Digest []byte `msgpack:"d"` // SHA-256 of the body
}

// NewBlobRef is the reference to data stored as name in bucket.
func NewBlobRef(bucket, name string, data []byte) BlobRef {
	d := sha256.Sum256(data)
	return BlobRef{Bucket: bucket, Name: name, Size: uint64(len(data)), Digest: d[:]}
}

// Encode renders the reference as it travels in Envelope.Ref.
func (r BlobRef) Encode() ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	b, err := msgpack.Marshal(&r)
	if err != nil {
		return nil, fmt.Errorf("bus: encode blob reference: %w", err)
	}
	return b, nil
}

// Matches reports whether data is the body r names: its size and digest.
func (r BlobRef) Matches(data []byte) bool {
	d := sha256.Sum256(data)
	return uint64(len(data)) == r.Size && bytes.Equal(d[:], r.Digest)
}

// ParseBlobRef decodes and checks an envelope's Ref: a msgpack map of
// exactly the BlobRef fields, a valid bucket and object name, a size of 1
// to MaxBlobSize and a 32-byte digest. Failures are ReasonBlobRef rejects.
func ParseBlobRef(data []byte) (BlobRef, error) {
	fail := func(err error) (BlobRef, error) { return BlobRef{}, &RejectError{Reason: ReasonBlobRef, Err: err} }
	if err := checkMsgpack(data); err != nil {
		return fail(fmt.Errorf("blob reference: %w", err))
	}
	if !isMsgpackMapOrNil(data) || data[0] == 0xc0 {
		return fail(fmt.Errorf("blob reference: not a msgpack map"))
	}
	var r BlobRef
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields(true)
	if err := dec.Decode(&r); err != nil {
		return fail(fmt.Errorf("blob reference: %w", err))
	}
	if err := r.check(); err != nil {
		return fail(err)
	}
	return r, nil
}

func (r BlobRef) check() error {
	switch {
	case !validBucket(r.Bucket):
		return fmt.Errorf("blob reference: bucket %q is not [A-Za-z0-9_-]{1,255}", r.Bucket)
	case !validObjectName(r.Name):
		return fmt.Errorf("blob reference: object name %q is not [a-z0-9.-]{1,%d}", r.Name, maxBlobName)
	case r.Size == 0 || r.Size > MaxBlobSize:
		return fmt.Errorf("blob reference: size %d is not 1 to %d", r.Size, uint64(MaxBlobSize))
	case len(r.Digest) != sha256.Size:
		return fmt.Errorf("blob reference: digest of %d bytes, want SHA-256's %d", len(r.Digest), sha256.Size)
	}
	return nil
}

func validBucket(s string) bool {
	if len(s) == 0 || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validObjectName(s string) bool {
	if len(s) == 0 || len(s) > maxBlobName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// BlobBucketName is party's object store of bodies sent by reference in
// job: GF_BLOBS_<JOB>_<party>, the party id kept as it is (lower case), so
// that no two (job, party) pairs share a bucket: the job token has no
// lower-case letters and the party id no underscore. It lives in party's
// own account, which alone may write it (JobAccounts).
func BlobBucketName(job, party string) string { return "GF_BLOBS_" + jobToken(job) + "_" + party }

// blobStreamName is the stream behind party's blob bucket.
func blobStreamName(job, party string) string { return "OBJ_" + BlobBucketName(job, party) }

// blobObjectName names the body of env: <kind>-<round>-<seq>, unique for
// its sender since (from, kind, round, seq) is.
func blobObjectName(env *Envelope) string {
	return string(env.Kind) + "-" + strconv.FormatUint(env.Round, 10) + "-" + strconv.FormatUint(env.Seq, 10)
}

// ByReference reports whether bodies of kind may travel by reference:
// updates (bank → aggregator) and models (aggregator → banks), the only
// messages that grow with the model and whose receiver may read the
// sender's bucket. An embedding goes from bank to bank, and no bank may
// read another's bucket.
func ByReference(kind Kind) bool { return kind == KindUpdate || kind == KindModel }

// BlobStore keeps a party's bodies sent by reference and reads those of
// the parties whose buckets it may read.
type BlobStore interface {
	// Put stores data, a body of round, as object name of the party's own
	// bucket and returns its reference.
	Put(ctx context.Context, round uint64, name string, data []byte) (BlobRef, error)
	// Fetch reads the object ref names. It refuses an object whose stored
	// size is not ref.Size before reading it, and never reads more than
	// ref.Size bytes; the validator checks the digest.
	Fetch(ctx context.Context, ref BlobRef) ([]byte, error)
}

// Carriage is how a transport carries large bodies: sealed envelopes of
// updates and models above Inline bytes go by reference through Blobs;
// nothing above MaxPayload can be sent at all.
type Carriage struct {
	Blobs      BlobStore // nil: everything inline
	Inline     int       // 0: no threshold
	MaxPayload int       // the server's payload limit; 0: unknown
}

// Carrier is a transport that says how it carries large bodies
// (NATSTransport); transports that are not carry everything inline.
type Carrier interface {
	Carriage() Carriage
}

// InlineLimitFor is the default inline limit for a server payload limit,
// three quarters of it: a reference envelope is small, and the quarter left keeps every
// inline message well clear of the server's refusal.
func InlineLimitFor(maxPayload int64) int { return int(maxPayload / 4 * 3) }
