package privacy

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Integrity is an audit's account of the ledger itself: how many records
// were read, which were skipped (Rejected) and which counted entries do
// not link to their predecessor (Breaks), and what that means for the
// privacy claim of each client concerned.
type Integrity struct {
	Records  int          `json:"records"`
	Signed   bool         `json:"signed"` // entries verified against the job's keyring
	Rejected []Rejection  `json:"rejected"`
	Breaks   []ChainBreak `json:"breaks"`
	// Unverified lists the clients whose claim the ledger cannot back:
	// their chain is broken, a record filed under them was skipped for a
	// reason other than garbage (see Meaning), the completeness check
	// found evidence that entries of theirs were lost or rewritten, or the
	// job's tail may be lost (no done record).
	Unverified []string `json:"unverified"`
	// Completeness is the check of every chain against the aggregator's
	// records, its chain against the banks' anchors, and all of them
	// against the expected heads when given (completeness.go).
	Completeness Completeness `json:"completeness"`
	// Intact: no client's claim is unverified and the completeness check
	// shows no loss. False when heads disagree, or when the aggregator
	// recorded the job's start but the ledger holds no done record.
	Intact bool `json:"intact"`
}

// newIntegrity summarizes a reading; job, when set, keeps the records
// known to be of that job or of no known job (garbage).
func newIntegrity(rd Reading, job string) Integrity {
	in := Integrity{Records: rd.Records, Signed: rd.Signed, Rejected: []Rejection{}, Breaks: []ChainBreak{}}
	bad := map[string]bool{}
	for _, r := range rd.Rejected {
		if job != "" && r.Job != "" && r.Job != job {
			continue
		}
		in.Rejected = append(in.Rejected, r)
		if r.Reason == RejectOutOfChain && r.Client != "" {
			bad[r.Job+"/"+r.Client] = true
		}
	}
	for _, b := range rd.Breaks {
		if job == "" || b.Job == job {
			in.Breaks = append(in.Breaks, b)
			bad[b.Job+"/"+b.Client] = true
		}
	}
	for c := range bad {
		in.Unverified = append(in.Unverified, c)
	}
	slices.Sort(in.Unverified)
	return in
}

// settle adds the completeness check's verdicts to Unverified and sets
// Intact: a client with evidence against its chain is unverified, and so
// is every client of a job that lost (or has not reached) its done record,
// since the tail of any of their chains may be gone.
func (in *Integrity) settle() {
	bad := map[string]bool{}
	for _, c := range in.Unverified {
		bad[c] = true
	}
	for _, j := range in.Completeness.Jobs {
		tail := j.Started && !j.Done
		for _, f := range j.Findings {
			if f.Client == "" || f.Client == AggregatorClient {
				continue
			}
			if f.Level == LevelEvidence || tail {
				bad[j.Job+"/"+f.Client] = true
			}
		}
	}
	in.Unverified = in.Unverified[:0]
	for c := range bad {
		in.Unverified = append(in.Unverified, c)
	}
	slices.Sort(in.Unverified)
	in.Intact = len(in.Unverified) == 0 && in.Completeness.Intact
}

// Clean reports whether every record read was a linked entry of its
// client's chain.
func (in Integrity) Clean() bool { return len(in.Rejected) == 0 && len(in.Breaks) == 0 }

// Meaning says what a skipped record means for the privacy claim.
func (r RejectReason) Meaning() string {
	switch r {
	case RejectMalformed:
		return "not an entry; it records no release and changes no ε (it shows that a party with write access stored junk)"
	case RejectMisfiled:
		return "an entry filed under another party's subject; not counted for either (a party tried to write for someone else)"
	case RejectUnsigned:
		return "carries no signature while the keyring requires one; not the party's release, not counted"
	case RejectForged:
		return "its signature does not verify with its client's key; a forgery, not counted"
	case RejectOutOfChain:
		return "a second entry for a seq already in the client's chain (replayed, rewritten or reordered); not counted. " +
			"Signed by the client's own key or unsigned in a plain run, it may hide or alter a real release: that client's ε is unverified"
	}
	return "unknown"
}

// Meaning says what a chain break means for the privacy claim.
func (k BreakKind) Meaning() string {
	switch k {
	case BreakGap:
		return "entries of this client are missing (removed): its ε is computed without them and may be understated"
	case BreakLink:
		return "the previous entry of this client was rewritten, or entries were reordered: its ε rests on altered records"
	}
	return "unknown"
}

// writeIntegrity renders the integrity section of the text report.
func (in Integrity) writeText(w io.Writer) {
	var b strings.Builder
	signed := "hash chains checked, no keyring: signatures not verified"
	if in.Signed {
		signed = "hash chains and signatures checked against the keyring"
	}
	fmt.Fprintf(&b, "\nledger integrity: %d records read, %d skipped, %d chain breaks (%s)\n",
		in.Records, len(in.Rejected), len(in.Breaks), signed)
	if in.Clean() {
		// Linked chains are not a whole ledger: a chain cut at its tail
		// links too. Only the completeness check can say the rest.
		if in.Completeness.whole() {
			b.WriteString("  every record is a linked entry of its client's chain: the figures above rest on the whole ledger\n")
		} else {
			b.WriteString("  every record read is a linked entry of its client's chain (whether the ledger is whole: see its completeness below)\n")
		}
	}
	reasons := map[RejectReason]int{}
	for _, r := range in.Rejected {
		reasons[r.Reason]++
	}
	keys := make([]RejectReason, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b RejectReason) int { return cmp.Compare(a, b) })
	for _, k := range keys {
		fmt.Fprintf(&b, "  %d %s: %s\n", reasons[k], k, k.Meaning())
	}
	for _, r := range in.Rejected {
		fmt.Fprintf(&b, "    skipped %s\n", r)
	}
	for _, br := range in.Breaks {
		fmt.Fprintf(&b, "  BREAK %s\n    meaning: %s\n", br, br.Kind.Meaning())
	}
	in.Completeness.writeText(&b)
	if len(in.Unverified) > 0 {
		fmt.Fprintf(&b, "CLAIM UNVERIFIED for %s: the ledger of these clients was tampered with or may have lost entries; their ε above is a lower bound\n",
			strings.Join(in.Unverified, ", "))
	} else if len(in.Rejected) > 0 {
		b.WriteString("  the skipped records change no client's ε: the claim above stands\n")
	}
	if !in.Intact {
		b.WriteString("ledger integrity: NOT INTACT\n")
	}
	io.WriteString(w, b.String())
}
