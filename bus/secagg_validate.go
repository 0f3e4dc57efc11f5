package bus

import (
	"fmt"

	"graphfed/secagg"
)

// SecAggSchema turns secure aggregation's kinds on for a validator
// (Schema.SecAgg). Without it every secure-aggregation message is
// rejected (ReasonSubject), as any unknown kind is.
type SecAggSchema struct {
	// Self is the receiving party: a share must be addressed to it (the
	// <to> token of gf.<job>.sa.share.<from>.<to>, and the share's own
	// To). NewEndpoint sets it to the endpoint's id; a validator without
	// one accepts no share.
	Self string
	// Cohort bounds the parties of a round, from which the sizes of keys,
	// lists, reveals and masked inputs' peer lists are bounded; 0: the
	// schema's Senders when set, else MaxSecAggCohort. At most
	// MaxSecAggCohort.
	Cohort int
	// Words is the exact length in 32-bit words of a masked vector
	// (secagg.Encoding.Len: the vector and its weight slot; a job that
	// masks CE-FedGNN's W and G in one vector, 2·NumParams + 1). 0: not
	// checked exactly, and bounded by NumParams + 2 once NumParams is
	// known.
	Words int
	// Vectors is how many vectors of NumParams values a masked input
	// carries (2: CE-FedGNN's W and G), for the bound while Words is not
	// known; 0: 1.
	Vectors int
}

// MaxSecAggCohort bounds a secure-aggregation cohort on the bus.
const MaxSecAggCohort = 1024

// Bounds of the parts of secure-aggregation messages (secagg's canonical
// encodings, with ids of at most 64 bytes and Ed25519 signatures), from
// which SecAggLimit sizes each kind. TestSecAggLimits checks them against
// real messages of 64-byte ids.
const (
	// secAggEnvelope: the envelope's fields, its signature and the
	// msgpack framing around a secagg message.
	secAggEnvelope = 1024
	// secAggHead: a message's tag, job, round, sender, digest or seed
	// commitment, counts and (for a list) signature.
	secAggHead = 512
	// secAggID: one length-prefixed id in a list of parties.
	secAggID = 4 + 64
	// secAggAdv: one encoded signed advertisement (about 400 bytes)
	// with its msgpack framing in a list of them.
	secAggAdv = 640
	// secAggShare: one sealed share (about 430 bytes).
	secAggShare = 768
	// secAggPartyShare: one revealed share of a reveal.
	secAggPartyShare = secAggID + 2*secagg.ElementSize
)

// secAggCohort is the cohort bound of s.
func (s Schema) secAggCohort() int {
	n := MaxSecAggCohort
	switch {
	case s.SecAgg != nil && s.SecAgg.Cohort > 0:
		n = s.SecAgg.Cohort
	case s.Senders != nil:
		n = len(s.Senders)
	}
	return min(max(n, 1), MaxSecAggCohort)
}

// secAggWords bounds a masked vector's words; 0: unknown.
func (s Schema) secAggWords() int {
	if s.SecAgg != nil && s.SecAgg.Words > 0 {
		return s.SecAgg.Words
	}
	if s.NumParams > 0 {
		v := 1
		if s.SecAgg != nil && s.SecAgg.Vectors > 1 {
			v = s.SecAgg.Vectors
		}
		return v*s.NumParams + 2
	}
	return 0
}

// SecAggLimit is the largest message of kind the schema accepts, in bytes
// of the sealed envelope: a masked input 4 bytes a word of its vector and
// a header with its peers, keys, lists and reveals a fixed part and a part
// per party of the cohort, an advertisement and a share a fixed bound;
// never above the job's limit (MaxBytes). 0 for a kind that is not
// secure aggregation's.
func (s Schema) SecAggLimit(kind Kind) int {
	limit := s.MaxBytes
	if limit == 0 {
		limit = DefaultMaxPayload
	}
	n := s.secAggCohort()
	var l int
	switch kind {
	case KindSAAdv:
		l = secAggEnvelope + secAggAdv
	case KindSAKeys:
		l = secAggEnvelope + n*secAggAdv
	case KindSAShare:
		l = secAggEnvelope + secAggShare
	case KindSAMasked:
		w := s.secAggWords()
		if w == 0 {
			return limit
		}
		l = secAggEnvelope + secAggHead + n*secAggID + 4*w
	case KindSAList:
		l = secAggEnvelope + secAggHead + n*secAggID
	case KindSAReveal:
		l = secAggEnvelope + secAggHead + n*secAggPartyShare
	default:
		return 0
	}
	return min(l, limit)
}

// SetSecAgg turns secure aggregation on (or, with nil, off) for the
// validator, for example once the job's cohort is known. A nil Self keeps
// the one the validator had.
func (v *Validator) SetSecAgg(sa *SecAggSchema) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if sa == nil {
		v.schema.SecAgg = nil
		return
	}
	c := *sa
	if c.Self == "" && v.schema.SecAgg != nil {
		c.Self = v.schema.SecAgg.Self
	}
	v.schema.SecAgg = &c
}

// checkSecAggSubject is what a secure-aggregation message's subject and
// size must be before its envelope is decoded: the job must have secure
// aggregation on, the message fit its kind's limit, and the subject have
// the kind's shape.
func checkSecAggSubject(s Schema, ps ParsedSubject, subject string, size int) error {
	if s.SecAgg == nil {
		return &RejectError{ReasonSubject, fmt.Errorf("%s on %s: secure aggregation is off in job %s", ps.Kind, subject, s.Job)}
	}
	if l := s.SecAggLimit(ps.Kind); size > l {
		return &RejectError{ReasonOversized, fmt.Errorf("a %s of %d bytes over its limit of %d", ps.Kind, size, l)}
	}
	var ok bool
	switch {
	case secAggFromAggregator(ps.Kind):
		ok = ps.From == ""
	case ps.Kind == KindSAShare:
		ok = ps.From != "" && ps.To != "" && ps.From != ps.To
	default:
		ok = ps.From != "" && ps.To == ""
	}
	if !ok {
		return &RejectError{ReasonSubject, fmt.Errorf("subject %s is not of a %s", subject, ps.Kind)}
	}
	return nil
}

// checkSecAggSender is checkSender for the secure-aggregation kinds: the
// aggregator's kinds from the aggregator; a bank's on its own subject, by
// an allowed sender; a share on the sender's own pair, addressed to the
// receiving party.
func checkSecAggSender(s Schema, ps ParsedSubject, env Envelope) error {
	if secAggFromAggregator(env.Kind) {
		if env.From != s.Aggregator {
			return &RejectError{ReasonSender, fmt.Errorf("%s from %q, only the aggregator sends it", env.Kind, env.From)}
		}
		return nil
	}
	if ps.From != env.From {
		return &RejectError{ReasonSubject, fmt.Errorf("sender %q published on %s.%s", env.From, env.Kind, ps.From)}
	}
	if env.From == s.Aggregator || s.Senders != nil && !s.Senders[env.From] {
		return &RejectError{ReasonSender, fmt.Errorf("unknown sender %q of a %s", env.From, env.Kind)}
	}
	if env.Kind == KindSAShare && (s.SecAgg.Self == "" || ps.To != s.SecAgg.Self) {
		return &RejectError{ReasonSubject, fmt.Errorf("a share from %s to %s received by %q", ps.From, ps.To, s.SecAgg.Self)}
	}
	return nil
}

// openSecAgg decodes a secure-aggregation envelope's body into its secagg
// message and checks it against the envelope and the subject: the job, the
// round, the sender (and a share's recipient) the message names must be
// the envelope's, and its lists of parties no longer than the cohort.
func openSecAgg(s Schema, ps ParsedSubject, env *Envelope) (any, error) {
	var b SecAggBody
	if err := env.UnmarshalBody(&b); err != nil {
		return nil, err
	}
	if (env.Kind == KindSAKeys) != (len(b.Ads) > 0) || (env.Kind == KindSAKeys) == (len(b.Msg) > 0) {
		return nil, &RejectError{ReasonGarbage, fmt.Errorf("%s body: want exactly one of a message and advertisements", env.Kind)}
	}
	n := s.secAggCohort()
	garbage := func(err error) error { return &RejectError{ReasonGarbage, fmt.Errorf("%s body: %w", env.Kind, err)} }
	// agree checks the ids and the round the message names.
	agree := func(job string, round uint64, ids ...string) error {
		if job != s.Job {
			return &RejectError{ReasonSubject, fmt.Errorf("a %s of job %q in job %s", env.Kind, job, s.Job)}
		}
		if round != env.Round {
			return &RejectError{ReasonRound, fmt.Errorf("a %s of round %d in an envelope of round %d", env.Kind, round, env.Round)}
		}
		want := []string{env.From, ps.To}
		for i, id := range ids {
			if id != want[i] {
				return &RejectError{ReasonSubject, fmt.Errorf("a %s naming %q where its envelope and subject say %q", env.Kind, id, want[i])}
			}
		}
		return nil
	}
	tooMany := func(what string, k int) error {
		if k > n {
			return &RejectError{ReasonShape, fmt.Errorf("%s of %d parties in a cohort of at most %d", what, k, n)}
		}
		return nil
	}
	switch env.Kind {
	case KindSAAdv:
		a, err := secagg.DecodeSignedAdvertisement(b.Msg)
		if err != nil {
			return nil, garbage(err)
		}
		return &a, agree(a.Job, a.Round, a.Party)
	case KindSAKeys:
		if err := tooMany("keys", len(b.Ads)); err != nil {
			return nil, err
		}
		k := &SecAggKeys{Round: env.Round}
		seen := map[string]bool{}
		for _, raw := range b.Ads {
			a, err := secagg.DecodeSignedAdvertisement(raw)
			if err != nil {
				return nil, garbage(err)
			}
			if err := agree(a.Job, a.Round); err != nil {
				return nil, err
			}
			if seen[a.Party] || s.Senders != nil && !s.Senders[a.Party] {
				return nil, &RejectError{ReasonSender, fmt.Errorf("keys with an advertisement of %q twice or of no sender of the job", a.Party)}
			}
			seen[a.Party] = true
			k.Ads = append(k.Ads, a)
		}
		return k, nil
	case KindSAShare:
		sh, err := secagg.DecodeSealedShare(b.Msg)
		if err != nil {
			return nil, garbage(err)
		}
		return &sh, agree(sh.Job, sh.Round, sh.From, sh.To)
	case KindSAMasked:
		m, err := secagg.DecodeMaskedInput(b.Msg)
		if err != nil {
			return nil, garbage(err)
		}
		if err := agree(m.Job, m.Round, m.Party); err != nil {
			return nil, err
		}
		if err := tooMany("a masked input's peers", len(m.Peers)); err != nil {
			return nil, err
		}
		if w := s.secAggWords(); w > 0 && (len(m.Vector) > w || s.SecAgg.Words > 0 && len(m.Vector) != w) {
			return nil, &RejectError{ReasonShape, fmt.Errorf("masked vector of %d words, want %d", len(m.Vector), w)}
		}
		return &m, nil
	case KindSAList:
		l, err := secagg.DecodeSignedList(b.Msg)
		if err != nil {
			return nil, garbage(err)
		}
		if err := agree(l.Job, l.Round); err != nil {
			return nil, err
		}
		return &l, tooMany("a list", len(l.Survivors)+len(l.Dropouts))
	case KindSAReveal:
		r, err := secagg.DecodeReveal(b.Msg)
		if err != nil {
			return nil, garbage(err)
		}
		if err := agree(r.Job, r.Round, r.From); err != nil {
			return nil, err
		}
		return &r, tooMany("a reveal", len(r.Self)+len(r.Mask))
	}
	return nil, &RejectError{ReasonSubject, fmt.Errorf("unknown kind %q", env.Kind)}
}
