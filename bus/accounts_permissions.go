package bus

// The account is the boundary: what a party publishes inside its own
// account reaches another only through an export. The banks' and the
// auditor's users also get a publish allow-list of exactly their part of
// the data flow, for a second reason: visibility. A publish outside the
// data flow would otherwise go nowhere in silence; refused by the list, it
// is a permissions violation that the server logs and counts (bus.Server's
// Events), with the user and the subject. So a bank probing another
// party's subjects or the ledger's API for another stream, or the auditor
// writing on a ledger subject, leaves a line.
//
// Subscriptions are not listed: a subscription in one's own account sees
// only what reaches the account, which the imports already decide. The
// aggregator's user is not listed either: its account holds its own
// streams (updates, checkpoint, models, blobs), whose JetStream API use is
// broad, and nothing of another party.

// bankPublish is bank b's publish allow-list in job: its own subjects
// (hello, update, metrics, bye, ledger, and embeddings to the peers it is
// linked to), its own account's JetStream and object store, its own ledger
// stream's read API, and the aggregator's blob bucket's.
func bankPublish(job, b string, peers []string) []string {
	s := func(kind Kind, parts ...string) string { return Subject(job, kind, parts...) }
	out := []string{s(KindHello, b), s(KindUpdate, b), s(KindMetrics, b), s(KindBye, b), LedgerSubject(job, b)}
	for _, p := range peers {
		out = append(out, s(KindEmb, b, p))
	}
	out = append(out, "$JS.API.>", "$O.>", "$JS.ACK.>")
	for _, v := range ledgerReadVerbs(LedgerPartyStreamName(job, b)) {
		out = append(out, LedgerAPIPrefix+"."+v)
	}
	for _, v := range blobReadVerbs(job, AggregatorID) {
		out = append(out, BlobAPIPrefix(AggregatorID)+"."+v)
	}
	return out
}

// auditorPublish is the auditor's publish allow-list: the read API of
// every party's ledger stream, nothing else.
func auditorPublish(job string, parties []string) []string {
	var out []string
	for _, p := range parties {
		for _, v := range ledgerReadVerbs(LedgerPartyStreamName(job, p)) {
			out = append(out, LedgerAPIPrefix+"."+v)
		}
	}
	return out
}

// secAggAccounts adds secure aggregation's flows to a job's layout
// (AccountOptions.SecAgg): the exports and imports, and each bank's
// publish allow-list and subscribe deny-list.
//
// A bank's user may publish its own sa.adv, sa.masked and sa.reveal and
// the shares of its own pairs, and may not subscribe to any other bank's
// sa.adv, sa.masked or sa.reveal, nor to a share addressed to another
// bank. The account already keeps those from it (none is imported); the
// deny-list makes a try visible, as a permissions violation the server
// logs and counts (Server.Events), as the publish allow-list does for
// publishes. nats-server applies a deny-list at delivery as well to a
// wildcard subscription that overlaps it.
func secAggAccounts(job string, banks []string, pairs [][2]string, readers []string, agg *Account, writers map[string]*Account, audit *Account) {
	s := func(kind Kind, parts ...string) string { return Subject(job, kind, parts...) }
	for _, kind := range []Kind{KindSAKeys, KindSAList} {
		agg.Exports = append(agg.Exports, Export{Subject: s(kind), Accounts: readers})
		if audit != nil {
			audit.Imports = append(audit.Imports, Import{Account: AggregatorAccount, Subject: s(kind)})
		}
	}
	bankKinds := []Kind{KindSAAdv, KindSAMasked, KindSAReveal}
	for _, b := range banks {
		acct := writers[b]
		for _, kind := range bankKinds {
			agg.Exports = append(agg.Exports, Export{Service: true, Subject: s(kind, b), Accounts: []string{acct.Name}})
			acct.Imports = append(acct.Imports, Import{Service: true, Account: AggregatorAccount, Subject: s(kind, b)})
		}
		for _, kind := range []Kind{KindSAKeys, KindSAList} {
			acct.Imports = append(acct.Imports, Import{Account: AggregatorAccount, Subject: s(kind)})
		}
	}
	peers := map[string][]string{}
	for _, p := range pairs {
		peers[p[0]] = append(peers[p[0]], p[1])
		from, to := writers[p[0]], writers[p[1]]
		subj := s(KindSAShare, p[0], p[1])
		from.Exports = append(from.Exports, Export{Subject: subj, Accounts: []string{to.Name}})
		to.Imports = append(to.Imports, Import{Account: from.Name, Subject: subj})
	}
	for _, b := range banks {
		u := &writers[b].Users[0]
		u.Publish = append(u.Publish, bankSecAggPublish(job, b, peers[b])...)
		u.SubscribeDeny = bankSecAggDeny(job, b, banks)
	}
}

// bankSecAggPublish is what bank b may publish in secure aggregation: its
// own advertisement, masked input and reveal, and shares to its peers.
func bankSecAggPublish(job, b string, peers []string) []string {
	out := []string{Subject(job, KindSAAdv, b), Subject(job, KindSAMasked, b), Subject(job, KindSAReveal, b)}
	for _, p := range peers {
		out = append(out, Subject(job, KindSAShare, b, p))
	}
	return out
}

// bankSecAggDeny is what bank b may not subscribe to: every other bank's
// advertisement, masked input and reveal, and every share addressed to
// another bank (whoever sends it).
func bankSecAggDeny(job, b string, banks []string) []string {
	var out []string
	for _, o := range banks {
		if o == b {
			continue
		}
		out = append(out, Subject(job, KindSAAdv, o), Subject(job, KindSAMasked, o), Subject(job, KindSAReveal, o),
			Subject(job, KindSAShare, "*", o))
	}
	return out
}
