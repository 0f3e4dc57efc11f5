package bus

import (
	"fmt"
	"slices"
	"strings"
)

// Every party of a job that `graphfed keys` configures is its own NATS
// account: the account, not a permission list, is nats-server's unit of
// isolation. Inside one account the JetStream API answers any request with
// the account's authority, and nats-server checks the subject a client
// publishes on but never the reply subject, so a party that controls the
// bytes of any message the server sends on its behalf (a stored blob, a
// direct get) can have them delivered to any $JS.API subject of its
// account as a request. Sharing an account with another party is
// therefore sharing its streams. With one account each, a party's JetStream
// API reaches its own streams only, and what crosses between parties is
// exactly the exports and imports below: the data flow of the job and
// nothing else.
//
//   - bank B → aggregator: hello (a request, answered), update, metrics,
//     bye; service exports of the aggregator's account, each imported by
//     B for its own subject only. A service import rewrites the reply
//     subject, so the aggregator's answer (and its update stream's
//     acknowledgement, in durable mode) goes back to B's account and
//     nowhere else.
//   - aggregator → banks: round, done and model.all (stream exports to
//     every bank and the auditor), model.B (to B only).
//   - bank A → bank B: gf.<job>.emb.A.B, a stream export of A to B only,
//     for each ordered pair the job links (AccountOptions.Links).
//   - every party → ledger: its own ledger subject, a service export of
//     the ledger account; its own ledger stream's read API (stream info,
//     message get), imported under LedgerAPIPrefix. The auditor imports the
//     read API of every party's stream and may write none.
//   - blobs (bodies by reference): each bank's blob bucket's read API to
//     the aggregator, the aggregator's to every bank, under BlobAPIPrefix.
//   - secure aggregation, only with AccountOptions.SecAgg (secagg.go):
//     bank B's sa.adv.B, sa.masked.B and sa.reveal.B as its update goes;
//     sa.keys and sa.list as round goes; sa.share.A.B as emb.A.B goes, for
//     each pair of AccountOptions.SecAggPairs. A bank's user may subscribe
//     to no other bank's secure-aggregation subject.
//
// Stream imports pass the publisher's reply subject through. None of the
// subjects a party imports as a stream is captured by a stream of its
// account, and no party answers them, so such a reply leads nowhere.
//
// The ledger account holds one append-only stream per party
// (LedgerPartyStreamName). Its only user is the ledger administrator, a
// key that `graphfed keys` writes for whoever operates the NATS servers and
// that no party holds: no party, the aggregator included, can delete,
// purge, rewrite or truncate a ledger stream. The administrator can; the
// audit makes that evident (privacy's round and done records).

// Account names of a job's layout.
const (
	LedgerAccount     = "LEDGER"
	AggregatorAccount = "AGGREGATOR"
	AuditorAccount    = "AUDITOR"
)

// LedgerAdminID names the ledger administrator's credential.
const LedgerAdminID = "ledger-admin"

// LedgerAPIPrefix is where a party reaches the ledger account's JetStream
// API: its imports map LedgerAPIPrefix.<verb> to $JS.API.<verb> of the
// ledger account, for its own ledger stream only.
const LedgerAPIPrefix = "$JS.GFLEDGER.API"

// BlobAPIPrefix is where a party reaches the JetStream read API of
// owner's blob bucket in owner's account.
func BlobAPIPrefix(owner string) string { return "$JS.GFBLOBS." + owner + ".API" }

// BankAccount is bank id's account name.
func BankAccount(id string) string { return "BANK_" + id }

// AccountOf is the account party p logs in to.
func AccountOf(p Party) string {
	switch p.Role {
	case RoleAggregator:
		return AggregatorAccount
	case RoleAuditor:
		return AuditorAccount
	}
	return BankAccount(p.ID)
}

// Export is a subject an account offers to others: a service (requests,
// answered through the importer's reply) or a stream (messages).
type Export struct {
	Service  bool
	Subject  string
	Accounts []string // the only accounts that may import it
}

// Import brings another account's export into this one, at To (default:
// the same subject).
type Import struct {
	Service bool
	Account string
	Subject string
	To      string
}

// AccountUser is an NKey user of an account.
type AccountUser struct {
	ID        string // the party (or LedgerAdminID), for the comment
	PublicKey string
	// Publish, when set, is the user's publish allow-list
	// (accounts_permissions.go says why); nil: anything in its account.
	Publish []string
	// SubscribeDeny, when set, are subjects the user may not subscribe
	// to (a bank's view of the other banks' secure-aggregation subjects,
	// accounts_permissions.go); nil: no subscribe permissions at all.
	SubscribeDeny []string
}

// Account is one NATS account of a job's layout.
type Account struct {
	Name      string
	Users     []AccountUser
	JetStream bool
	Exports   []Export
	Imports   []Import
	Limits    AccountLimits // accounts_limits.go
}

// AccountOptions shape a job's account layout.
type AccountOptions struct {
	// LedgerAdmin is the ledger administrator's NKey user public key; the
	// ledger account has no user without one (its streams must then be
	// created by an operator with the server's own means).
	LedgerAdmin string
	// Links are the ordered bank pairs (from, to) that exchange
	// embeddings; nil: every ordered pair of distinct banks. A job whose
	// banks share no edge needs none.
	Links [][2]string
	// Payload is the job's payload limit, from which the accounts' limits
	// are sized (AccountLimits); 0: DefaultMaxPayload.
	Payload int
	// SecAgg adds secure aggregation's flows (secagg.go): each bank's
	// sa.adv, sa.masked and sa.reveal to the aggregator as its updates
	// go, the aggregator's sa.keys and sa.list to every bank and the
	// auditor as its rounds go, and sa.share.A.B from bank A to bank B
	// alone for each of SecAggPairs. false: none, and the layout is the
	// one of a job without secure aggregation, byte for byte.
	SecAgg bool
	// SecAggPairs are the ordered bank pairs (from, to) whose sealed
	// shares travel between them: both directions of each edge of the
	// protocol's neighbour graph (SecAggPairsOf; ParseLinks reads them as
	// --links does). nil: every ordered pair of distinct banks, the graph
	// of every cohort of up to secagg.CompleteGraphMax banks and of any
	// graph drawn afresh each round. Only with SecAgg.
	SecAggPairs [][2]string
}

// JobAccounts is the account layout of k's job: one account per party,
// the ledger account, and the exports and imports of the data flow (the
// package comment above lists them).
func JobAccounts(k *Keyring, o AccountOptions) ([]Account, error) {
	job := k.Job()
	banks := k.Banks()
	links, err := checkLinks(banks, o.Links)
	if err != nil {
		return nil, fmt.Errorf("bus: accounts of job %s: %w", job, err)
	}
	var saPairs [][2]string
	switch {
	case o.SecAgg:
		if saPairs, err = checkSecAggPairs(banks, o.SecAggPairs); err != nil {
			return nil, fmt.Errorf("bus: accounts of job %s: %w", job, err)
		}
	case o.SecAggPairs != nil:
		return nil, fmt.Errorf("bus: accounts of job %s: secure-aggregation pairs, and secure aggregation off", job)
	}
	var agg, auditor *Party
	for _, p := range k.Parties() {
		switch p.Role {
		case RoleAggregator:
			agg = &p
		case RoleAuditor:
			auditor = &p
		}
	}
	if agg == nil {
		return nil, fmt.Errorf("bus: accounts of job %s: the keyring has no aggregator", job)
	}
	s := func(kind Kind, parts ...string) string { return Subject(job, kind, parts...) }
	bankAccounts := make([]string, len(banks))
	for i, b := range banks {
		bankAccounts[i] = BankAccount(b)
	}
	readers := slices.Clone(bankAccounts)
	if auditor != nil {
		readers = append(readers, AuditorAccount)
	}

	ledger := Account{Name: LedgerAccount, JetStream: true}
	if o.LedgerAdmin != "" {
		ledger.Users = []AccountUser{{ID: LedgerAdminID, PublicKey: o.LedgerAdmin}}
	}
	aggAcct := Account{Name: AggregatorAccount, JetStream: true,
		Users: []AccountUser{{ID: agg.ID, PublicKey: agg.PublicKey}}}
	for _, kind := range []Kind{KindRound, KindDone} {
		aggAcct.Exports = append(aggAcct.Exports, Export{Subject: s(kind), Accounts: readers})
	}
	aggAcct.Exports = append(aggAcct.Exports, Export{Subject: s(KindModel, "all"), Accounts: readers})
	aggAcct.Exports = append(aggAcct.Exports, blobReadExports(job, AggregatorID, bankAccounts)...)

	writers := map[string]*Account{} // ledger writers by party id
	accounts := []*Account{&ledger, &aggAcct}
	writers[AggregatorID] = &aggAcct
	for _, b := range banks {
		acct := &Account{Name: BankAccount(b), JetStream: true}
		p, _ := k.Party(b)
		acct.Users = []AccountUser{{ID: b, PublicKey: p.PublicKey}}
		for _, kind := range []Kind{KindHello, KindUpdate, KindMetrics, KindBye} {
			aggAcct.Exports = append(aggAcct.Exports, Export{Service: true, Subject: s(kind, b), Accounts: []string{acct.Name}})
			acct.Imports = append(acct.Imports, Import{Service: true, Account: AggregatorAccount, Subject: s(kind, b)})
		}
		aggAcct.Exports = append(aggAcct.Exports, Export{Subject: s(KindModel, b), Accounts: []string{acct.Name}})
		for _, subj := range []string{s(KindRound), s(KindDone), s(KindModel, "all"), s(KindModel, b)} {
			acct.Imports = append(acct.Imports, Import{Account: AggregatorAccount, Subject: subj})
		}
		acct.Imports = append(acct.Imports, blobReadImports(job, AggregatorID, AggregatorAccount)...)
		acct.Exports = append(acct.Exports, blobReadExports(job, b, []string{AggregatorAccount})...)
		aggAcct.Imports = append(aggAcct.Imports, blobReadImports(job, b, acct.Name)...)
		writers[b] = acct
		accounts = append(accounts, acct)
	}
	peers := map[string][]string{}
	for _, l := range links {
		peers[l[0]] = append(peers[l[0]], l[1])
		from, to := writers[l[0]], writers[l[1]]
		subj := s(KindEmb, l[0], l[1])
		from.Exports = append(from.Exports, Export{Subject: subj, Accounts: []string{to.Name}})
		to.Imports = append(to.Imports, Import{Account: from.Name, Subject: subj})
	}
	for _, b := range banks {
		writers[b].Users[0].Publish = bankPublish(job, b, peers[b])
	}
	var audit *Account
	if auditor != nil {
		audit = &Account{Name: AuditorAccount, Users: []AccountUser{{ID: auditor.ID, PublicKey: auditor.PublicKey,
			Publish: auditorPublish(job, append([]string{AggregatorID}, banks...))}}}
		for _, subj := range []string{s(KindRound), s(KindDone), s(KindModel, "all")} {
			audit.Imports = append(audit.Imports, Import{Account: AggregatorAccount, Subject: subj})
		}
	}
	if o.SecAgg {
		secAggAccounts(job, banks, saPairs, readers, &aggAcct, writers, audit)
	}
	// Each writer appends on its own ledger subject and reads its own
	// stream; the auditor reads every stream.
	for _, id := range append([]string{AggregatorID}, banks...) {
		w := writers[id]
		ledger.Exports = append(ledger.Exports, Export{Service: true, Subject: LedgerSubject(job, id), Accounts: []string{w.Name}})
		w.Imports = append(w.Imports, Import{Service: true, Account: LedgerAccount, Subject: LedgerSubject(job, id)})
		who := []string{w.Name}
		if audit != nil {
			who = append(who, AuditorAccount)
		}
		for _, verb := range ledgerReadVerbs(LedgerPartyStreamName(job, id)) {
			ledger.Exports = append(ledger.Exports, Export{Service: true, Subject: "$JS.API." + verb, Accounts: who})
			w.Imports = append(w.Imports, Import{Service: true, Account: LedgerAccount, Subject: "$JS.API." + verb, To: LedgerAPIPrefix + "." + verb})
			if audit != nil {
				audit.Imports = append(audit.Imports, Import{Service: true, Account: LedgerAccount, Subject: "$JS.API." + verb, To: LedgerAPIPrefix + "." + verb})
			}
		}
	}
	if audit != nil {
		accounts = append(accounts, audit)
	}
	payload := o.Payload
	if payload == 0 {
		payload = DefaultMaxPayload
	}
	out := make([]Account, 0, len(accounts))
	for _, a := range accounts {
		a.Limits = limitsFor(a, payload, len(banks))
		out = append(out, *a)
	}
	return out, nil
}

// ledgerReadVerbs are the JetStream API verbs, without "$JS.API.", that
// read stream st: its info (state and configuration, to bind) and message
// gets by sequence or subject. No consumer: a consumer's deliver subject is
// in the request body, out of any subject rule's sight.
func ledgerReadVerbs(st string) []string {
	return []string{"STREAM.INFO." + st, "STREAM.MSG.GET." + st}
}

// blobReadVerbs read owner's blob bucket stream by message gets.
func blobReadVerbs(job, owner string) []string {
	st := blobStreamName(job, owner)
	return []string{"STREAM.INFO." + st, "STREAM.MSG.GET." + st, "DIRECT.GET." + st, "DIRECT.GET." + st + ".>"}
}

func blobReadExports(job, owner string, to []string) []Export {
	var out []Export
	for _, v := range blobReadVerbs(job, owner) {
		out = append(out, Export{Service: true, Subject: "$JS.API." + v, Accounts: to})
	}
	return out
}

func blobReadImports(job, owner, account string) []Import {
	var out []Import
	for _, v := range blobReadVerbs(job, owner) {
		out = append(out, Import{Service: true, Account: account, Subject: "$JS.API." + v, To: BlobAPIPrefix(owner) + "." + v})
	}
	return out
}

// checkLinks validates the embedding links against banks; nil means
// every ordered pair.
func checkLinks(banks []string, links [][2]string) ([][2]string, error) {
	if links == nil {
		for _, a := range banks {
			for _, b := range banks {
				if a != b {
					links = append(links, [2]string{a, b})
				}
			}
		}
		return links, nil
	}
	seen := map[[2]string]bool{}
	var out [][2]string
	for _, l := range links {
		switch {
		case !slices.Contains(banks, l[0]) || !slices.Contains(banks, l[1]):
			return nil, fmt.Errorf("link %s→%s names a party that is not a bank of the job", l[0], l[1])
		case l[0] == l[1]:
			return nil, fmt.Errorf("link %s→%s: a bank sends itself no embeddings", l[0], l[1])
		case seen[l]:
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	return out, nil
}

// ParseLinks reads embedding links as `graphfed keys --links` takes them:
// comma-separated "from:to" (one direction) or "a=b" (both), bank ids on
// either side (ids contain dashes, hence the other separators). The empty
// string is no link at all.
func ParseLinks(s string) ([][2]string, error) {
	var out [][2]string
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		a, b, both := strings.Cut(item, "=")
		if !both {
			var ok bool
			if a, b, ok = strings.Cut(item, ":"); !ok {
				a, b = "", ""
			}
		}
		if !ValidID(a) || !ValidID(b) {
			return nil, fmt.Errorf("bus: links: %q is not from:to or a=b of two ids", item)
		}
		out = append(out, [2]string{a, b})
		if both {
			out = append(out, [2]string{b, a})
		}
	}
	if out == nil {
		out = [][2]string{}
	}
	return out, nil
}

// LedgerPartyStreamName is party's own ledger stream in the accounts
// layout: GF_LEDGER_<JOB>-<PARTY>. The job token has no '-' (jobToken maps
// it to '_') and the party id no '_', so the first '-' separates them and
// no two (job, party) pairs, nor the single-stream name, coincide.
func LedgerPartyStreamName(job, party string) string {
	return LedgerStreamName(job) + "-" + strings.ToUpper(party)
}
