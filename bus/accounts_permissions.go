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
