package bus

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"

	"graphfed/secagg"
)

// Secure aggregation's transport (issue 31). Package secagg is the
// protocol's pure core; this file carries its six messages on the bus,
// off unless a job turns it on (Schema.SecAgg for the validator,
// AccountOptions.SecAgg for the account layout):
//
//	gf.<job>.sa.adv.<bank>          bank → aggregator  KindSAAdv     secagg.SignedAdvertisement
//	gf.<job>.sa.keys                aggregator → all   KindSAKeys    SecAggKeys (the round's advertisements)
//	gf.<job>.sa.share.<from>.<to>   bank → bank        KindSAShare   secagg.SealedShare
//	gf.<job>.sa.masked.<bank>       bank → aggregator  KindSAMasked  secagg.MaskedInput
//	gf.<job>.sa.list                aggregator → all   KindSAList    secagg.SignedList
//	gf.<job>.sa.reveal.<bank>       bank → aggregator  KindSAReveal  secagg.Reveal
//
// Each travels in an ordinary envelope (signed, validated, counted) whose
// body is SecAggBody: the message in secagg's canonical encoding. The
// validator decodes it and checks it against the envelope and the subject
// (job, round, sender, and a share's recipient, which must be the
// receiving party), so that what an Endpoint hands its party is one of the
// secagg types above, already consistent with who signed it and where it
// arrived. Whether the message is acceptable to the protocol (signatures
// of advertisements and lists, disjoint lists, the stage of the round) is
// secagg.Client's and secagg.Server's to judge, and to count.
//
// In the accounts layout (accounts.go) the bank kinds are service imports
// of the bank's own subject, as updates are; keys and list are stream
// exports of the aggregator to every bank and the auditor, as round is;
// a share is a stream export of its sender to its recipient alone, for
// each ordered pair of the neighbour graph, as embeddings are. A bank's
// user may publish on its own subjects and its own pairs only, and may not
// subscribe to any other bank's secure-aggregation subject
// (accounts_permissions.go).

// SecAggKinds are the secure-aggregation kinds, in protocol order.
func SecAggKinds() []Kind {
	return []Kind{KindSAAdv, KindSAKeys, KindSAShare, KindSAMasked, KindSAList, KindSAReveal}
}

// IsSecAgg reports whether kind is a secure-aggregation kind.
func IsSecAgg(kind Kind) bool {
	switch kind {
	case KindSAAdv, KindSAKeys, KindSAShare, KindSAMasked, KindSAList, KindSAReveal:
		return true
	}
	return false
}

// secAggFromAggregator reports whether kind is the aggregator's.
func secAggFromAggregator(kind Kind) bool { return kind == KindSAKeys || kind == KindSAList }

// SecAggSubject is the subject a message of kind travels on: the
// aggregator's kinds (keys, list) take no party, a bank's (adv, masked,
// reveal) its own id, a share its sender and recipient.
func SecAggSubject(job string, kind Kind, parties ...string) (string, error) {
	want := 1
	switch {
	case !IsSecAgg(kind):
		return "", fmt.Errorf("bus: %s is not a secure-aggregation kind", kind)
	case secAggFromAggregator(kind):
		want = 0
	case kind == KindSAShare:
		want = 2
	}
	if len(parties) != want {
		return "", fmt.Errorf("bus: a %s subject names %d parties, not %d", kind, want, len(parties))
	}
	for _, p := range append([]string{job}, parties...) {
		if !ValidID(p) {
			return "", fmt.Errorf("bus: %s subject: %q is not [a-z0-9-]{1,64}", kind, p)
		}
	}
	if want == 2 && parties[0] == parties[1] {
		return "", fmt.Errorf("bus: a share from %s to itself", parties[0])
	}
	return Subject(job, kind, parties...), nil
}

// SecAggSubjects are the subjects party subscribes to in a job with secure
// aggregation: a bank the aggregator's keys and list and the shares
// addressed to it; the aggregator every bank's advertisement, masked input
// and reveal.
func SecAggSubjects(job, party string) []string {
	if party == AggregatorID {
		return []string{Subject(job, KindSAAdv, "*"), Subject(job, KindSAMasked, "*"), Subject(job, KindSAReveal, "*")}
	}
	return []string{Subject(job, KindSAKeys), Subject(job, KindSAList), Subject(job, KindSAShare, "*", party)}
}

// SecAggBody is the envelope body of every secure-aggregation kind: the
// message in package secagg's canonical encoding, or for KindSAKeys one
// encoded advertisement per party.
type SecAggBody struct {
	Msg []byte   `msgpack:"m,omitempty"`
	Ads [][]byte `msgpack:"ads,omitempty"`
}

// SecAggKeys is the aggregator's KindSAKeys message: the advertisements it
// collected for Round (secagg.Server.Keys), as the validator opens it.
type SecAggKeys struct {
	Round uint64
	Ads   []secagg.SignedAdvertisement
}

// SecAggOutgoing is the envelope that party from of job sends for msg, one
// of secagg's messages (a value or a pointer): SignedAdvertisement,
// SealedShare, MaskedInput and Reveal from a bank; SecAggKeys (or a
// []secagg.SignedAdvertisement with its round) and SignedList from the
// aggregator. The kind, subject and round come from the message, which
// must be of job and sent by from: the subject is always the sender's own
// (a share's, its own pair), so that a party's core cannot address a
// message on someone else's subject by mistake.
func SecAggOutgoing(job, from string, msg any) (Outgoing, error) {
	var (
		kind    Kind
		round   uint64
		mjob    string
		sender  = from
		parties []string
		body    SecAggBody
	)
	switch m := deref(msg).(type) {
	case secagg.SignedAdvertisement:
		kind, round, mjob, sender, parties, body.Msg = KindSAAdv, m.Round, m.Job, m.Party, []string{m.Party}, m.Encode()
	case secagg.SealedShare:
		kind, round, mjob, sender, parties, body.Msg = KindSAShare, m.Round, m.Job, m.From, []string{m.From, m.To}, m.Encode()
	case secagg.MaskedInput:
		kind, round, mjob, sender, parties, body.Msg = KindSAMasked, m.Round, m.Job, m.Party, []string{m.Party}, m.Encode()
	case secagg.Reveal:
		kind, round, mjob, sender, parties, body.Msg = KindSAReveal, m.Round, m.Job, m.From, []string{m.From}, m.Encode()
	case secagg.SignedList:
		kind, round, mjob, sender, body.Msg = KindSAList, m.Round, m.Job, AggregatorID, m.Encode()
	case SecAggKeys:
		kind, round, mjob, sender = KindSAKeys, m.Round, job, AggregatorID
		if len(m.Ads) == 0 {
			return Outgoing{}, fmt.Errorf("bus: %s keys of round %d: no advertisement", from, round)
		}
		for _, a := range m.Ads {
			if a.Job != job || a.Round != round {
				return Outgoing{}, fmt.Errorf("bus: %s keys of job %s round %d: an advertisement of %s for job %q round %d", from, job, round, a.Party, a.Job, a.Round)
			}
			body.Ads = append(body.Ads, a.Encode())
		}
	default:
		return Outgoing{}, fmt.Errorf("bus: %T is not a secure-aggregation message", msg)
	}
	switch {
	case mjob != job:
		return Outgoing{}, fmt.Errorf("bus: %s's %s is of job %q, not %s", from, kind, mjob, job)
	case sender != from:
		return Outgoing{}, fmt.Errorf("bus: %s would send a %s of %s", from, kind, sender)
	}
	subj, err := SecAggSubject(job, kind, parties...)
	if err != nil {
		return Outgoing{}, err
	}
	return Outgoing{Subject: subj, Kind: kind, Round: round, Body: &body}, nil
}

// deref turns a pointer to one of SecAggOutgoing's types into its value.
func deref(msg any) any {
	switch m := msg.(type) {
	case *secagg.SignedAdvertisement:
		return *m
	case *secagg.SealedShare:
		return *m
	case *secagg.MaskedInput:
		return *m
	case *secagg.Reveal:
		return *m
	case *secagg.SignedList:
		return *m
	case *SecAggKeys:
		return *m
	}
	return msg
}

// PublishSecAgg publishes a secure-aggregation message of the endpoint's
// party (SecAggOutgoing) on its own subject.
func (e *Endpoint) PublishSecAgg(ctx context.Context, msg any) error {
	o, err := SecAggOutgoing(e.job, e.id, msg)
	if err != nil {
		return err
	}
	return e.Publish(ctx, o.Subject, o.Kind, o.Round, o.Body)
}

// Signatures inside the protocol (advertisements, lists) are made with the
// party's NKey, as its envelopes are, over a SHA-256 digest of a domain
// string and secagg's canonical bytes: never the raw bytes, so that no
// other signature of the same key (an envelope, a ledger entry, the NATS
// login nonce the server chooses) can be taken for one.
const secAggSigDomain = "graphfed secagg signature v1\x00"

func secAggDigest(msg []byte) []byte {
	h := sha256.New()
	h.Write([]byte(secAggSigDomain))
	h.Write(msg)
	return h.Sum(nil)
}

type secAggSigner struct{ s *Signer }

func (g secAggSigner) Sign(msg []byte) ([]byte, error) {
	sig, err := g.s.kp.Sign(secAggDigest(msg))
	if err != nil {
		return nil, fmt.Errorf("bus: secagg signature as %s: %w", g.s.id, err)
	}
	return sig, nil
}

// SecAggSigner is s as secagg's Signer: the party's identity signing its
// advertisements (a bank) or its lists (the aggregator).
func SecAggSigner(s *Signer) secagg.Signer { return secAggSigner{s} }

type secAggVerifier struct{ k *Keyring }

func (v secAggVerifier) Verify(party string, msg, sig []byte) error {
	e, ok := v.k.entries[party]
	switch {
	case !ok:
		return fmt.Errorf("no key registered for %q", party)
	case e.party.Role != RoleBank && e.party.Role != RoleAggregator:
		return fmt.Errorf("%s is the %s, which signs nothing in secure aggregation", party, e.party.Role)
	case len(sig) == 0:
		return fmt.Errorf("unsigned")
	}
	if err := e.key.Verify(secAggDigest(msg), sig); err != nil {
		return fmt.Errorf("signature does not verify with %s's key: %w", party, err)
	}
	return nil
}

// SecAggVerifier is k as secagg's Verifier: a signature must be the
// party's, with the key k lists for it, and the party a bank or the
// aggregator of k's job.
func SecAggVerifier(k *Keyring) secagg.Verifier { return secAggVerifier{k} }

// SecAggPairsOf are the ordered pairs of cfg's neighbour graph, both
// directions of each edge: the account layout's share pairs
// (AccountOptions.SecAggPairs) for a job that fixes its graph (its
// GraphSeed and cohort). A graph drawn afresh every round needs every
// pair (nil pairs), which is also the graph of every cohort of up to
// secagg.CompleteGraphMax parties.
func SecAggPairsOf(cfg *secagg.Config) ([][2]string, error) {
	g, err := cfg.Graph()
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for i, a := range cfg.Parties {
		for _, j := range g.Neighbours(i) {
			out = append(out, [2]string{a, cfg.Parties[j]})
		}
	}
	return out, nil
}

// checkSecAggPairs validates share pairs against banks; nil means every
// ordered pair.
func checkSecAggPairs(banks []string, pairs [][2]string) ([][2]string, error) {
	if pairs == nil {
		for _, a := range banks {
			for _, b := range banks {
				if a != b {
					pairs = append(pairs, [2]string{a, b})
				}
			}
		}
		return pairs, nil
	}
	seen := map[[2]string]bool{}
	var out [][2]string
	for _, p := range pairs {
		switch {
		case !slices.Contains(banks, p[0]) || !slices.Contains(banks, p[1]):
			return nil, fmt.Errorf("secure-aggregation pair %s→%s names a party that is not a bank of the job", p[0], p[1])
		case p[0] == p[1]:
			return nil, fmt.Errorf("secure-aggregation pair %s→%s: a bank sends itself no shares", p[0], p[1])
		case seen[p]:
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}
