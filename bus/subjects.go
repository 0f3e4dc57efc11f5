package bus

import (
	"fmt"
	"strings"
)

// Kind is the message kind, the third subject token.
type Kind string

const (
	KindHello   Kind = "hello"   // gf.<job>.hello.<client>: join request/reply
	KindRound   Kind = "round"   // gf.<job>.round: the aggregator opens a round
	KindUpdate  Kind = "update"  // gf.<job>.update.<client>: a client's model update
	KindModel   Kind = "model"   // gf.<job>.model.all or gf.<job>.model.<client>
	KindEmb     Kind = "emb"     // gf.<job>.emb.<from>.<to>: boundary embeddings
	KindMetrics Kind = "metrics" // gf.<job>.metrics.<client>: evaluation scores (aggregate counts only)
	KindBye     Kind = "bye"     // gf.<job>.bye.<client>: a client leaves cleanly
	KindDone    Kind = "done"    // gf.<job>.done: the aggregator finished the job

	// Secure aggregation (secagg.go; off unless the job turns it on). Their
	// subjects have the namespace token "sa" before the kind's own:
	// gf.<job>.sa.<kind>[.<from>[.<to>]].
	KindSAAdv    Kind = "sa.adv"    // gf.<job>.sa.adv.<bank>: a bank's signed key advertisement
	KindSAKeys   Kind = "sa.keys"   // gf.<job>.sa.keys: the aggregator's collected advertisements
	KindSAShare  Kind = "sa.share"  // gf.<job>.sa.share.<from>.<to>: a sealed share for one neighbour
	KindSAMasked Kind = "sa.masked" // gf.<job>.sa.masked.<bank>: a bank's masked input
	KindSAList   Kind = "sa.list"   // gf.<job>.sa.list: the aggregator's signed survivor and dropout list
	KindSAReveal Kind = "sa.reveal" // gf.<job>.sa.reveal.<bank>: a survivor's revealed shares
)

// secAggNamespace is the subject token before a secure-aggregation kind's
// own (KindSAAdv's "adv").
const secAggNamespace = "sa"

// AggregatorID is the sender id the aggregator uses.
const AggregatorID = "aggregator"

// ValidID reports whether s is a valid job or client id: [a-z0-9-]{1,64}.
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Subject builds gf.<job>.<kind>[.<parts>...]; every part must be a valid id
// (or "all" for a broadcast, which is also a valid id).
func Subject(job string, kind Kind, parts ...string) string {
	var b strings.Builder
	b.WriteString("gf.")
	b.WriteString(job)
	b.WriteByte('.')
	b.WriteString(string(kind))
	for _, p := range parts {
		b.WriteByte('.')
		b.WriteString(p)
	}
	return b.String()
}

// ParsedSubject is a subject split into its tokens.
type ParsedSubject struct {
	Job  string
	Kind Kind
	From string // empty when absent
	To   string // empty when absent
}

// ParseSubject splits and validates gf.<job>.<kind>[.<from>[.<to>]]; a
// secure-aggregation kind is two tokens, gf.<job>.sa.<kind>[.<from>[.<to>]],
// whose Kind is "sa.<kind>".
func ParseSubject(subj string) (ParsedSubject, error) {
	t := strings.Split(subj, ".")
	if len(t) >= 4 && t[0] == "gf" && t[2] == secAggNamespace {
		t = append(t[:2:2], append([]string{t[2] + "." + t[3]}, t[4:]...)...)
	}
	if len(t) < 3 || len(t) > 5 || t[0] != "gf" {
		return ParsedSubject{}, fmt.Errorf("bus: subject %q: want gf.<job>.<kind>[.<from>[.<to>]]", subj)
	}
	p := ParsedSubject{Job: t[1], Kind: Kind(t[2])}
	if len(t) > 3 {
		p.From = t[3]
	}
	if len(t) > 4 {
		p.To = t[4]
	}
	for _, id := range []string{p.Job, p.From, p.To} {
		if id != "" && !ValidID(id) {
			return ParsedSubject{}, fmt.Errorf("bus: subject %q: token %q is not [a-z0-9-]{1,64}", subj, id)
		}
	}
	return p, nil
}
