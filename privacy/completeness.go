package privacy

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// The completeness check: every chain against the heads the aggregator
// recorded, every bank's anchors against the aggregator's chain, and, when
// the audit is given them, every chain against the final heads known from
// outside the ledger (records.go says why each is needed). It says, in
// plain words, what it could verify, what it could not, and what shows
// that entries were lost or rewritten.

// Level says how a finding bears on the privacy claim.
type Level string

// Levels of findings.
const (
	// LevelVerified: checked, and the chain is whole as far as the
	// statement checked reaches.
	LevelVerified Level = "verified"
	// LevelUnverified: nothing the audit has confirms or refutes it.
	LevelUnverified Level = "unverified"
	// LevelEvidence: the ledger lost or changed entries; the ε of the
	// client concerned rests on an incomplete or altered chain.
	LevelEvidence Level = "evidence"
)

// Finding is one statement of the completeness check.
type Finding struct {
	Job    string `json:"job"`
	Client string `json:"client,omitempty"` // a bank, AggregatorClient, or empty for the whole job
	Level  Level  `json:"level"`
	Text   string `json:"text"`
}

// JobCompleteness is the completeness check of one job.
type JobCompleteness struct {
	Job     string `json:"job"`
	Records int    `json:"records"` // the aggregator's records accepted
	// Started: the aggregator recorded the job's start (the ledger holds
	// a record of it, or a bank's entry names one). Done: a done record.
	Started bool `json:"started"`
	Done    bool `json:"done"`
	// LastRound is the latest round the aggregator recorded;
	// VerifiedRound the latest round up to which every head of every
	// record verified (both 0 before round 1's record).
	LastRound     uint64 `json:"last_round"`
	VerifiedRound uint64 `json:"verified_round"`
	// Expected: final heads from outside the ledger were checked.
	Expected bool      `json:"expected"`
	Findings []Finding `json:"findings"`
}

// Intact reports whether the job's ledger shows no loss: no evidence, and
// a done record if the aggregator recorded the start.
func (j JobCompleteness) Intact() bool {
	if j.Started && !j.Done {
		return false
	}
	for _, f := range j.Findings {
		if f.Level == LevelEvidence {
			return false
		}
	}
	return true
}

// Completeness is the completeness check of every job audited.
type Completeness struct {
	Jobs []JobCompleteness `json:"jobs"`
	// Intact: every job is (JobCompleteness.Intact).
	Intact bool `json:"intact"`
}

// chainView is one client's accepted chain: the digest of each seq, the
// last seq, and how many entries.
type chainView struct {
	digests map[uint64]string
	last    uint64
	entries int
}

func (c *chainView) add(e *Entry) {
	d, err := e.Digest()
	if err != nil {
		return // a validated entry always encodes
	}
	if c.digests == nil {
		c.digests = map[uint64]string{}
	}
	c.digests[e.Seq] = hex.EncodeToString(d[:])
	c.last = max(c.last, e.Seq)
	c.entries++
}

// check judges a statement that the chain holds entry r: true when it
// does, else why not in plain words. what names the statement ("the
// aggregator's round-2 record names"), unit the chain's entries ("entry",
// "record"), and none says that the ledger holds none of them ("no entry
// of bank-3").
func (c *chainView) check(what, unit, none string, r Ref) (string, bool) {
	d, ok := c.digests[r.Seq]
	switch {
	case ok && d == r.Digest:
		return "", true
	case ok:
		return fmt.Sprintf("%s %s %d (digest %s), but the ledger's %s %d has digest %s: it was rewritten",
			what, unit, r.Seq, short(r.Digest), unit, r.Seq, short(d)), false
	case c.last == 0:
		return fmt.Sprintf("%s %s %d (digest %s), but the ledger holds %s: they were lost or removed",
			what, unit, r.Seq, short(r.Digest), none), false
	case r.Seq > c.last:
		return fmt.Sprintf("%s %s %d (digest %s), but the ledger ends at %s %d: entries were lost or removed",
			what, unit, r.Seq, short(r.Digest), unit, c.last), false
	}
	return fmt.Sprintf("%s %s %d (digest %s), which the ledger does not hold (a gap in the chain): entries were removed",
		what, unit, r.Seq, short(r.Digest)), false
}

// checkCompleteness runs the check over a verified reading, job by job
// (job, when set, alone). expect, when non-nil, are final heads known from
// outside the ledger; they are checked against the only job audited.
func checkCompleteness(rd Reading, job string, expect []Head) Completeness {
	byJob := map[string][]Entry{}
	for _, e := range rd.Entries {
		if job == "" || e.Job == job {
			byJob[e.Job] = append(byJob[e.Job], e)
		}
	}
	broken := map[ClientKey]bool{}
	for _, b := range rd.Breaks {
		broken[ClientKey{b.Job, b.Client}] = true
	}
	for _, r := range rd.Rejected {
		if r.Reason == RejectOutOfChain && r.Client != "" {
			broken[ClientKey{r.Job, r.Client}] = true
		}
	}
	jobs := make([]string, 0, len(byJob))
	for j := range byJob {
		jobs = append(jobs, j)
	}
	if job != "" && len(jobs) == 0 {
		jobs = append(jobs, job) // an empty ledger, or expected heads with nothing to meet them
	}
	slices.Sort(jobs)
	out := Completeness{Jobs: []JobCompleteness{}, Intact: true}
	for _, j := range jobs {
		var ex []Head
		if expect != nil {
			ex = expect
			if len(jobs) > 1 {
				ex = nil
			}
		}
		jc := checkJob(j, byJob[j], broken, rd.Signed, ex)
		if expect != nil && len(jobs) > 1 {
			jc.Findings = append(jc.Findings, Finding{Job: j, Level: LevelUnverified,
				Text: "expected heads were given, but the ledger holds several jobs: audit one job (--job) to check them"})
		}
		out.Intact = out.Intact && jc.Intact()
		out.Jobs = append(out.Jobs, jc)
	}
	return out
}

// checkJob is the check of one job's accepted entries (ledger order).
func checkJob(job string, entries []Entry, broken map[ClientKey]bool, signed bool, expect []Head) JobCompleteness {
	jc := JobCompleteness{Job: job, Expected: expect != nil, Findings: []Finding{}}
	say := func(client string, lv Level, format string, args ...any) {
		jc.Findings = append(jc.Findings, Finding{Job: job, Client: client, Level: lv, Text: fmt.Sprintf(format, args...)})
	}
	var recs []Entry
	agg := &chainView{}
	chains := map[string]*chainView{}
	for i := range entries {
		e := &entries[i]
		if e.Client == AggregatorClient {
			recs = append(recs, *e)
			agg.add(e)
			continue
		}
		c := chains[e.Client]
		if c == nil {
			c = &chainView{}
			chains[e.Client] = c
		}
		c.add(e)
	}
	banks := make([]string, 0, len(chains))
	for b := range chains {
		banks = append(banks, b)
	}
	slices.Sort(banks)
	jc.Records = len(recs)

	// Anchors: each bank's entries name records of the aggregator's chain.
	anchorBad := map[string]string{}
	anchored := false
	for i := range entries {
		e := &entries[i]
		if e.Anchor == nil || e.Client == AggregatorClient {
			continue
		}
		anchored = true
		what := fmt.Sprintf("its entry %d names the aggregator's", e.Seq)
		if why, ok := agg.check(what, "record", "no record of the aggregator", *e.Anchor); !ok {
			anchorBad[e.Client] = why // the latest such entry: the strongest statement
		}
	}
	jc.Started = len(recs) > 0 || anchored

	// The records: what each names, and how far they all verify.
	type named struct {
		rec  *Entry
		head Head
	}
	latest := map[string]named{} // per bank, the latest record naming it
	verifiedAll := true
	for i := range recs {
		r := &recs[i]
		if r.Channel == ChannelDone {
			jc.Done = true
		}
		jc.LastRound = max(jc.LastRound, r.Round)
		ok := true
		for _, h := range r.Heads {
			latest[h.Client] = named{r, h}
			c := chains[h.Client]
			if c == nil {
				c = &chainView{}
			}
			if _, good := c.check("", "entry", "", h.Ref()); !good {
				ok = false
			}
		}
		if verifiedAll = verifiedAll && ok; verifiedAll {
			jc.VerifiedRound = max(jc.VerifiedRound, r.Round)
		}
	}

	// The aggregator's own chain.
	switch {
	case len(recs) == 0 && anchored:
		say(AggregatorClient, LevelEvidence, "aggregator: no record in the ledger, but the banks' entries name its records: they were lost or removed "+
			"(or this is not the ledger the aggregator wrote to)")
	case len(recs) == 0 && len(banks) > 0:
		say("", LevelUnverified, "no record of the aggregator and no anchors in the ledger: nothing in it vouches for the completeness of any chain, "+
			"and a chain cut at its tail would go unnoticed (pass the aggregator's final heads, --expect-heads, to check)")
	case len(recs) > 0:
		state := "chain verified"
		if broken[ClientKey{job, AggregatorClient}] {
			state = "chain broken (see the breaks above)"
		}
		lv := LevelVerified
		if state != "chain verified" {
			lv = LevelEvidence
		}
		say(AggregatorClient, lv, "aggregator: %d records (%s), %s", len(recs), describeRecords(recs), state)
		if !signed {
			say(AggregatorClient, LevelUnverified, "aggregator: its records are unsigned or were not checked against a keyring: "+
				"a party with write access to the ledger could have written them")
		}
	}
	if jc.Started && !jc.Done {
		upTo := "nothing verified past the start"
		if jc.VerifiedRound > 0 {
			upTo = fmt.Sprintf("verified up to round %d only", jc.VerifiedRound)
		}
		say("", LevelUnverified, "no done record: the ledger may have lost its tail (or the job has not finished); %s", upTo)
	}

	// Every bank.
	for _, b := range banks {
		c := chains[b]
		state := "chain verified"
		if broken[ClientKey{job, b}] {
			state = "chain broken (see the breaks above)"
		}
		n, isNamed := latest[b]
		switch {
		case !isNamed && jc.Started:
			say(b, LevelUnverified, "%s: %d entries, %s; no record of the aggregator names it: the completeness of its chain cannot be verified", b, c.entries, state)
		case !isNamed:
			say(b, LevelUnverified, "%s: %d entries, %s; completeness not verifiable", b, c.entries, state)
		default:
			src := recordName(n.rec)
			if why, ok := c.check(src+" names", "entry", "no entry of "+b, n.head.Ref()); !ok {
				say(b, LevelEvidence, "%s: %s", b, why)
				break
			}
			lv := LevelVerified
			if state != "chain verified" {
				lv = LevelEvidence
			}
			say(b, lv, "%s: %d entries, %s, head matches %s", b, c.entries, state, src)
			if c.last > n.head.Seq {
				say(b, LevelUnverified, "%s: entries %d to %d come after the head %s names: no record covers them", b, n.head.Seq+1, c.last, src)
			}
		}
		if why, bad := anchorBad[b]; bad {
			say(b, LevelEvidence, "%s: %s", b, why)
		}
	}

	if expect != nil {
		checkExpected(job, expect, agg, chains, say)
	}
	return jc
}

// checkExpected checks the final heads given to the audit.
func checkExpected(job string, expect []Head, agg *chainView, chains map[string]*chainView,
	say func(client string, lv Level, format string, args ...any)) {
	const what = "the expected heads given to the audit name"
	seen := map[string]bool{}
	good := 0
	for _, h := range expect {
		seen[h.Client] = true
		c, unit, whose, none := chains[h.Client], "entry", h.Client+"'s", "no entry of "+h.Client
		if h.Client == AggregatorClient {
			c, unit, whose, none = agg, "record", "the aggregator's", "no record of the aggregator"
		}
		if c == nil {
			c = &chainView{}
		}
		if why, ok := c.check(what+" "+whose, unit, none, h.Ref()); !ok {
			say(h.Client, LevelEvidence, "%s: %s", h.Client, why)
			continue
		}
		good++
		if c.last > h.Seq {
			say(h.Client, LevelUnverified, "%s: %s %d to %d come after the expected head", h.Client, unit+"s", h.Seq+1, c.last)
		}
	}
	if len(expect) == 0 {
		say("", LevelUnverified, "the expected heads given to the audit name no chain")
	} else if good == len(expect) {
		say("", LevelVerified, "the %d expected heads given to the audit match: every chain they name reaches its final head", good)
	}
	if !seen[AggregatorClient] && len(expect) > 0 {
		say(AggregatorClient, LevelUnverified, "the expected heads given to the audit do not name the aggregator's: the loss of its last records would go unnoticed")
	}
	var missing []string
	for b := range chains {
		if !seen[b] {
			missing = append(missing, b)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		say("", LevelUnverified, "the expected heads given to the audit do not name %s: their chains are not checked against them", strings.Join(missing, ", "))
	}
}

// recordName names a record in plain words.
func recordName(r *Entry) string {
	switch {
	case r.Channel == ChannelDone:
		return "the aggregator's done record"
	case r.Round == 0:
		return "the aggregator's start record"
	}
	return fmt.Sprintf("the aggregator's round-%d record", r.Round)
}

// describeRecords summarizes the aggregator's records: "start, rounds 1–12,
// done".
func describeRecords(recs []Entry) string {
	var parts []string
	var lo, hi uint64
	inRun := false
	flush := func() {
		if !inRun {
			return
		}
		if lo == hi {
			parts = append(parts, fmt.Sprintf("round %d", lo))
		} else {
			parts = append(parts, fmt.Sprintf("rounds %d–%d", lo, hi))
		}
		inRun = false
	}
	for _, r := range recs {
		switch {
		case r.Channel == ChannelDone:
			flush()
			parts = append(parts, "done")
		case r.Round == 0:
			flush()
			parts = append(parts, "start")
		case inRun && r.Round == hi+1:
			hi = r.Round
		default:
			flush()
			lo, hi, inRun = r.Round, r.Round, true
		}
	}
	flush()
	return strings.Join(parts, ", ")
}

// writeText renders the check: per job, what was verified, what could
// not be, and the evidence, each in its own words.
func (c Completeness) writeText(b *strings.Builder) {
	for _, j := range c.Jobs {
		fmt.Fprintf(b, "\nledger completeness of job %s (chains against the aggregator's records, its records against the banks' anchors", j.Job)
		if j.Expected {
			b.WriteString(", all against the expected heads given")
		}
		b.WriteString("):\n")
		for _, f := range j.Findings {
			mark := "  "
			switch f.Level {
			case LevelEvidence:
				mark = "  EVIDENCE "
			case LevelUnverified:
				mark = "  unverified: "
			}
			fmt.Fprintf(b, "%s%s\n", mark, f.Text)
		}
		switch {
		case j.Done && j.Intact():
			b.WriteString("  the ledger is complete as far as the aggregator's records and the banks' anchors show\n")
		case !j.Started:
		case j.Intact():
		default:
			b.WriteString("  the ledger is NOT complete: the figures above rest on what is left of it\n")
		}
	}
}

// whole reports whether the check vouches for every job's whole ledger:
// each was recorded from start to done, and nothing is missing.
func (c Completeness) whole() bool {
	for _, j := range c.Jobs {
		if !j.Started || !j.Done || !j.Intact() {
			return false
		}
	}
	return c.Intact && len(c.Jobs) > 0
}
