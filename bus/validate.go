package bus

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Reasons a received message is rejected; they label the reject counters.
const (
	ReasonGarbage   = "garbage"        // not a decodable envelope or body
	ReasonVersion   = "schema_version" // unknown envelope schema version
	ReasonOversized = "oversized"      // larger than the job's limit
	ReasonSubject   = "subject"        // subject and envelope disagree (job, kind, from)
	ReasonSender    = "unknown_sender" // sender not allowed for the subject
	ReasonShape     = "shape"          // vector length differs from the job's schema
	ReasonNonFinite = "non_finite"     // NaN or Inf in a vector
	ReasonRound     = "round"          // round number impossible for the job
	ReasonSignature = "signature"      // unsigned or wrongly signed while the job has a keyring
	// The job's contract (aggregator.Contract), judged by the round logic
	// of a signed message of a known party and counted against it.
	ReasonSchema = "schema" // a hello of another model schema or a training size above the job's
	ReasonWeight = "weight" // an update's weight above its sender's declared training size
	ReasonNorm   = "norm"   // a vector's L2 norm above what the job's clip and noise can give
	ReasonGrad   = "grad"   // a gradient estimator in a job whose learners share none
)

// MaxWeight bounds update weights and declared training sizes (sample
// counts): past it their sums could overflow and turn an average into NaN.
const MaxWeight = 1e15

// RejectError says why a message was rejected.
type RejectError struct {
	Reason string
	Err    error
}

func (e *RejectError) Error() string { return "bus: reject: " + e.Reason + ": " + e.Err.Error() }
func (e *RejectError) Unwrap() error { return e.Err }

// ReasonOf returns the reject reason of err, or "" when err is not a reject.
func ReasonOf(err error) string {
	var re *RejectError
	if errors.As(err, &re) {
		return re.Reason
	}
	return ""
}

// Schema is what a job's receivers check messages against.
type Schema struct {
	Job        string
	NumParams  int             // length of model vectors; 0: not yet known, skip the check
	EmbDim     int             // width of embedding rows; 0: skip
	MaxBytes   int             // messages above this are rejected; 0: DefaultMaxPayload
	Senders    map[string]bool // clients allowed to send non-hello kinds; nil: any valid id
	Enrol      map[string]bool // clients allowed to say hello; nil: any valid id (open enrolment)
	MaxRound   uint64          // 0: unbounded
	Aggregator string          // id the aggregator signs as; default AggregatorID
	// Keyring, when set, requires every envelope to carry its sender's
	// valid signature (Keyring.Verify); nil accepts unsigned envelopes and
	// ignores signatures, as when credentials are off.
	Keyring *Keyring
	// SecAgg, when set, accepts secure aggregation's kinds
	// (secagg_validate.go); nil: the job has none, and they are rejected.
	SecAgg *SecAggSchema
}

// Validator opens and checks received messages and counts rejects. It is
// safe for concurrent use.
type Validator struct {
	mu      sync.Mutex
	schema  Schema
	rejects map[string]uint64
	// by counts the rejects charged to a sender (RejectFrom), by sender
	// and reason.
	by map[string]map[string]uint64
}

// NewValidator returns a validator for the schema.
func NewValidator(s Schema) *Validator {
	if s.Aggregator == "" {
		s.Aggregator = AggregatorID
	}
	if s.SecAgg != nil {
		c := *s.SecAgg // the validator's own: SetSecAgg replaces it
		s.SecAgg = &c
	}
	return &Validator{schema: s, rejects: map[string]uint64{}, by: map[string]map[string]uint64{}}
}

// SetNumParams fixes the model vector length once it is known.
func (v *Validator) SetNumParams(n int) {
	v.mu.Lock()
	v.schema.NumParams = n
	v.mu.Unlock()
}

// AllowSender adds a client id to the allowed senders.
func (v *Validator) AllowSender(id string) {
	v.mu.Lock()
	if v.schema.Senders == nil {
		v.schema.Senders = map[string]bool{}
	}
	v.schema.Senders[id] = true
	v.mu.Unlock()
}

// Rejects returns a copy of the reject counters by reason.
func (v *Validator) Rejects() map[string]uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]uint64, len(v.rejects))
	for k, n := range v.rejects {
		out[k] = n
	}
	return out
}

// TotalRejects is the sum of all reject counters.
func (v *Validator) TotalRejects() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	var n uint64
	for _, c := range v.rejects {
		n += c
	}
	return n
}

// RejectSummary renders the counters as "reason=n ..." in a stable order.
func (v *Validator) RejectSummary() string {
	r := v.Rejects()
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%d", k, r[k])
	}
	return s
}

// Reject counts err, a rejection decided by a party after the message
// passed Open (a replay of an earlier run, ReasonReplay), with the other
// rejects; it returns err.
func (v *Validator) Reject(err error) error { return v.reject(err) }

// RejectFrom counts err as Reject does and charges it to from, a sender
// whose signature verified (the round logic's contract rejects).
func (v *Validator) RejectFrom(from string, err error) error {
	v.reject(err)
	reason := ReasonOf(err)
	if reason == "" {
		reason = ReasonGarbage
	}
	v.mu.Lock()
	if v.by[from] == nil {
		v.by[from] = map[string]uint64{}
	}
	v.by[from][reason]++
	v.mu.Unlock()
	return err
}

// RejectsBy returns a copy of the rejects charged to senders, by sender
// and reason.
func (v *Validator) RejectsBy() map[string]map[string]uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]map[string]uint64, len(v.by))
	for from, r := range v.by {
		out[from] = make(map[string]uint64, len(r))
		for k, n := range r {
			out[from][k] = n
		}
	}
	return out
}

func (v *Validator) reject(err error) error {
	reason := ReasonOf(err)
	if reason == "" {
		reason = ReasonGarbage
	}
	v.mu.Lock()
	v.rejects[reason]++
	v.mu.Unlock()
	return err
}

// Open decodes and checks a message received on subject: envelope schema
// version, size, agreement of subject and envelope, allowed sender, the
// sender's signature when the schema has a keyring, and for typed bodies
// vector lengths and finiteness. The decoded body is returned (one of the
// messages.go types, as a pointer). Every rejection is counted.
func (v *Validator) Open(subject string, data []byte) (Envelope, any, error) {
	return v.OpenWith(subject, data, nil)
}

// Fetch reads the body a checked reference names (BlobStore.Fetch).
type Fetch func(BlobRef) ([]byte, error)

// OpenWith is Open for a party that reads bodies sent by reference with
// fetch (nil: such envelopes are rejected). A reference is checked before
// anything is fetched (checkRef); the fetched body must match its size and
// digest, and is then decoded and checked as an inline body would be. The
// returned envelope carries the fetched body.
func (v *Validator) OpenWith(subject string, data []byte, fetch Fetch) (Envelope, any, error) {
	return v.openPre(subject, data, fetch, nil)
}

// openPre is OpenWith with the signature digest of data computed ahead
// (nil: hash here).
func (v *Validator) openPre(subject string, data []byte, fetch Fetch, pre *Prehash) (Envelope, any, error) {
	env, body, err := v.open(subject, data, fetch, pre)
	if err != nil {
		return Envelope{}, nil, v.reject(err)
	}
	return env, body, nil
}

func (v *Validator) open(subject string, data []byte, fetch Fetch, pre *Prehash) (Envelope, any, error) {
	v.mu.Lock()
	s := v.schema
	v.mu.Unlock()
	// s.SecAgg is never written through: SetSecAgg replaces the pointer.
	limit := s.MaxBytes
	if limit == 0 {
		limit = DefaultMaxPayload
	}
	if len(data) > limit {
		return Envelope{}, nil, &RejectError{ReasonOversized, fmt.Errorf("%d bytes over the %d limit", len(data), limit)}
	}
	ps, err := ParseSubject(subject)
	if err != nil {
		return Envelope{}, nil, &RejectError{ReasonSubject, err}
	}
	if IsSecAgg(ps.Kind) {
		if err := checkSecAggSubject(s, ps, subject, len(data)); err != nil {
			return Envelope{}, nil, err
		}
	}
	env, err := Open(data)
	if err != nil {
		return Envelope{}, nil, err
	}
	if env.Job != s.Job || ps.Job != s.Job {
		return Envelope{}, nil, &RejectError{ReasonSubject, fmt.Errorf("job %q on subject %q, want %q", env.Job, subject, s.Job)}
	}
	if env.Kind != ps.Kind {
		return Envelope{}, nil, &RejectError{ReasonSubject, fmt.Errorf("kind %q on subject %q", env.Kind, subject)}
	}
	if err := v.checkSender(s, ps, env); err != nil {
		return Envelope{}, nil, err
	}
	// After the sender checks, so that a message on the wrong subject is
	// counted as such, and before the body is decoded: a forged body is
	// never looked at.
	if s.Keyring != nil {
		if err := s.Keyring.verify(&env, pre.digestFor(data)); err != nil {
			return Envelope{}, nil, &RejectError{ReasonSignature, err}
		}
	}
	if s.MaxRound > 0 && env.Round > s.MaxRound+1 {
		return Envelope{}, nil, &RejectError{ReasonRound, fmt.Errorf("round %d beyond the job's %d", env.Round, s.MaxRound)}
	}
	if len(env.Ref) > 0 {
		if err := resolveRef(s, &env, fetch); err != nil {
			return Envelope{}, nil, err
		}
	}
	if IsSecAgg(env.Kind) {
		body, err := openSecAgg(s, ps, &env)
		if err != nil {
			return Envelope{}, nil, err
		}
		return env, body, nil
	}
	body, err := decodeBody(&env)
	if err != nil {
		return Envelope{}, nil, err
	}
	if err := checkBody(s, body); err != nil {
		return Envelope{}, nil, err
	}
	return env, body, nil
}

// BlobLimit is the largest body the schema accepts by reference: an
// update or model of NumParams parameters with a gradient estimator of
// the same size and the envelope's scalars (JobSize.LargestMessage's
// model term); while NumParams is unknown, DefaultMaxPayload.
func (s Schema) BlobLimit() uint64 {
	if s.NumParams > 0 {
		return uint64(2*4*s.NumParams + envelopeOverhead)
	}
	return DefaultMaxPayload
}

// resolveRef replaces env's reference by the body it names, after the
// checks that need no I/O: a well-formed reference, of a kind that may
// travel by reference, in the sender's own bucket (so a bank cannot point
// the aggregator at another party's blob), within the schema's size.
func resolveRef(s Schema, env *Envelope, fetch Fetch) error {
	ref, err := ParseBlobRef(env.Ref)
	if err != nil {
		return err
	}
	switch want := BlobBucketName(s.Job, env.From); {
	case !ByReference(env.Kind):
		return &RejectError{ReasonBlobRef, fmt.Errorf("a %s by reference; only updates and models travel so", env.Kind)}
	case len(env.Body) > 0:
		return &RejectError{ReasonBlobRef, fmt.Errorf("a %s with both a body and a reference", env.Kind)}
	case ref.Bucket != want:
		return &RejectError{ReasonBlobRef, fmt.Errorf("%s's %s refers to bucket %s, not its own %s", env.From, env.Kind, ref.Bucket, want)}
	case ref.Size > s.BlobLimit():
		return &RejectError{ReasonOversized, fmt.Errorf("%s by reference of %d bytes over the job's %d", env.Kind, ref.Size, s.BlobLimit())}
	case fetch == nil:
		return &RejectError{ReasonBlobMissing, fmt.Errorf("a %s by reference, and this party reads no object store", env.Kind)}
	}
	blob, err := fetch(ref)
	if err != nil {
		if ReasonOf(err) == "" {
			err = &RejectError{ReasonBlobMissing, fmt.Errorf("%s/%s: %w", ref.Bucket, ref.Name, err)}
		}
		return err
	}
	if !ref.Matches(blob) {
		return &RejectError{ReasonBlobDigest, fmt.Errorf("%s/%s: %d bytes whose SHA-256 is not the reference's (%d bytes)", ref.Bucket, ref.Name, len(blob), ref.Size)}
	}
	env.Body = blob
	return nil
}

func (v *Validator) checkSender(s Schema, ps ParsedSubject, env Envelope) error {
	if !ValidID(env.From) {
		return &RejectError{ReasonSender, fmt.Errorf("sender %q is not a valid id", env.From)}
	}
	if IsSecAgg(env.Kind) {
		return checkSecAggSender(s, ps, env)
	}
	switch env.Kind {
	case KindRound, KindDone:
		if env.From != s.Aggregator {
			return &RejectError{ReasonSender, fmt.Errorf("%s from %q, only the aggregator sends it", env.Kind, env.From)}
		}
		return nil
	case KindModel:
		if env.From != s.Aggregator {
			return &RejectError{ReasonSender, fmt.Errorf("model from %q, only the aggregator sends it", env.From)}
		}
		return nil
	}
	// Client kinds: the subject's <from> token must be the envelope's sender.
	if ps.From != env.From {
		return &RejectError{ReasonSubject, fmt.Errorf("sender %q published on %s.%s", env.From, env.Kind, ps.From)}
	}
	allowed := s.Senders
	if env.Kind == KindHello {
		allowed = s.Enrol
	}
	if allowed != nil && !allowed[env.From] {
		return &RejectError{ReasonSender, fmt.Errorf("unknown sender %q", env.From)}
	}
	return nil
}

func decodeBody(env *Envelope) (any, error) {
	var body any
	switch env.Kind {
	case KindHello:
		body = &Hello{}
	case KindRound:
		body = &RoundOpen{}
	case KindUpdate:
		body = &Update{}
	case KindModel:
		body = &Model{}
	case KindEmb:
		body = &Embeddings{}
	case KindMetrics:
		body = &Metrics{}
	case KindBye:
		body = &Bye{}
	case KindDone:
		body = &Done{}
	default:
		return nil, &RejectError{ReasonSubject, fmt.Errorf("unknown kind %q", env.Kind)}
	}
	if err := env.UnmarshalBody(body); err != nil {
		return nil, err
	}
	return body, nil
}

func checkBody(s Schema, body any) error {
	checkVec := func(what string, x Vector, want int) error {
		if want > 0 && len(x) != want {
			return &RejectError{ReasonShape, fmt.Errorf("%s has %d values, want %d", what, len(x), want)}
		}
		if i := firstNonFinite(x); i >= 0 {
			return &RejectError{ReasonNonFinite, fmt.Errorf("%s[%d] = %v", what, i, x[i])}
		}
		return nil
	}
	switch b := body.(type) {
	case *RoundOpen:
		if b.SecAgg != nil {
			if err := b.SecAgg.check(); err != nil {
				return &RejectError{ReasonShape, fmt.Errorf("round %d: %w", b.Round, err)}
			}
		}
	case *Update:
		if b.Masked && (b.Params.Len() > 0 || b.Grad.Len() > 0) {
			return &RejectError{ReasonShape, fmt.Errorf("a masked update carrying %d parameters and %d estimator values in the clear", b.Params.Len(), b.Grad.Len())}
		}
		if b.Params.Len() > 0 {
			if err := checkVec("update params", b.Params.Floats(), s.NumParams); err != nil {
				return err
			}
		}
		if b.Grad.Len() > 0 {
			if err := checkVec("update grad", b.Grad.Floats(), s.NumParams); err != nil {
				return err
			}
		}
		if err := checkDescriptors(s, b); err != nil {
			return err
		}
		// Weights are sample counts; past MaxWeight their sums could
		// overflow and turn the average into NaN.
		if b.Weight < 0 || b.Weight != b.Weight || b.Weight > MaxWeight {
			return &RejectError{ReasonNonFinite, fmt.Errorf("update weight %v", b.Weight)}
		}
	case *Model:
		if b.Mix && !(b.RhoBar >= 0 && b.RhoBar <= 1) {
			return &RejectError{ReasonNonFinite, fmt.Errorf("model mixing weight %v outside [0, 1]", b.RhoBar)}
		}
		if len(b.Params) > 0 {
			if err := checkVec("model params", b.Params, s.NumParams); err != nil {
				return err
			}
		}
		if len(b.Grad) > 0 {
			return checkVec("model grad", b.Grad, s.NumParams)
		}
	case *Embeddings:
		if b.Dim <= 0 || b.Data.Len() != b.Dim*len(b.NodeIDs) {
			return &RejectError{ReasonShape, fmt.Errorf("embeddings: %d values for %d nodes of width %d", b.Data.Len(), len(b.NodeIDs), b.Dim)}
		}
		if s.EmbDim > 0 && b.Dim != s.EmbDim {
			return &RejectError{ReasonShape, fmt.Errorf("embedding width %d, want %d", b.Dim, s.EmbDim)}
		}
		return checkVec("embeddings", b.Data.Floats(), 0)
	case *Hello:
		if b.NumParams < 0 || b.TrainSize < 0 {
			return &RejectError{ReasonShape, fmt.Errorf("hello with negative sizes")}
		}
	}
	return nil
}
