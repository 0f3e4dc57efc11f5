package bus

import "fmt"

// Permissions are one party's NATS allow-lists. A user with allow-lists is
// denied everything else: a refused publish is dropped by the server, a
// refused subscription is never made, and the client hears of either only
// as an asynchronous permissions violation (ConnectOptions.OnError).
type Permissions struct {
	Publish   []string
	Subscribe []string
	// AllowResponses lets the party answer requests it received, once
	// each, without publish rights on anyone's inbox: the aggregator's
	// hello replies.
	AllowResponses bool
	// DenyPublish are subjects refused even where Publish would allow
	// them: the ledger stream's consumer requests.
	DenyPublish []string
}

// PartyPermissions returns what p may publish and subscribe to in job:
//
//   - a bank publishes only subjects that name it as the sender (hello,
//     update, metrics, bye, its ledger subject, and embeddings
//     gf.<job>.emb.<bank>.*), and reads only what is addressed to it or to
//     everyone (round, done, model.all, model.<bank>, emb.*.<bank>);
//   - the aggregator reads hellos, updates, metrics and byes, publishes
//     rounds, models and done, answers hellos, and may create the ledger
//     stream; it reads no embeddings; for its durable mode it owns the
//     job's update stream, checkpoint bucket and model store;
//   - the auditor reads the public subjects and the ledger and publishes
//     nothing on gf.<job>.
//
// For bodies sent by reference (blobref.go) each bank writes only its own
// blob bucket and reads only the aggregator's; the aggregator writes its
// own, reads every bank's of banks (the job's bank ids), and alone
// creates them all (BlobStoreOptions.Create says why). Blobs are read by
// message gets, like the ledger: no consumer on a blob stream.
//
// Every party reads the job's ledger stream through the JetStream API's
// message gets (the ledger is the job's audit record, and each agent
// replays it when its gate starts) and receives replies only under its own
// InboxPrefix. No party may create a consumer on the ledger stream, delete
// or purge it, or touch any other stream.
func PartyPermissions(job string, p Party, banks []string) (Permissions, error) {
	if !ValidID(job) {
		return Permissions{}, fmt.Errorf("bus: permissions: job %q is not [a-z0-9-]{1,64}", job)
	}
	if err := p.check(); err != nil {
		return Permissions{}, fmt.Errorf("bus: permissions: %w", err)
	}
	perm, err := rolePermissions(job, p)
	if err != nil {
		return Permissions{}, err
	}
	for _, b := range banks {
		if !ValidID(b) || b == AggregatorID {
			return Permissions{}, fmt.Errorf("bus: permissions: bank id %q is not [a-z0-9-]{1,64} or is reserved", b)
		}
	}
	perm.Publish = append(perm.Publish, blobAPI(job, p, banks)...)
	perm.DenyPublish = append(ledgerConsumerAPI(job), blobConsumerAPI(job, banks)...)
	return perm, nil
}

func rolePermissions(job string, p Party) (Permissions, error) {
	s := func(kind Kind, parts ...string) string { return Subject(job, kind, parts...) }
	inbox := InboxPrefix(p.PublicKey) + ".>"
	read := ledgerReadAPI(job)
	switch p.Role {
	case RoleBank:
		c := p.ID
		return Permissions{
			Publish: append([]string{
				s(KindHello, c), s(KindUpdate, c), s(KindEmb, c, "*"), s(KindMetrics, c), s(KindBye, c),
				LedgerSubject(job, c),
			}, read...),
			Subscribe: []string{
				s(KindRound), s(KindDone), s(KindModel, "all"), s(KindModel, c), s(KindEmb, "*", c), inbox,
			},
		}, nil
	case RoleAggregator:
		return Permissions{
			Publish: append(append([]string{
				s(KindRound), s(KindModel, "*"), s(KindDone),
				"$JS.API.STREAM.CREATE." + LedgerStreamName(job),
			}, read...), durableAggregatorAPI(job)...),
			Subscribe: []string{
				s(KindHello, "*"), s(KindUpdate, "*"), s(KindMetrics, "*"), s(KindBye, "*"), inbox,
			},
			AllowResponses: true,
		}, nil
	case RoleAuditor:
		return Permissions{
			Publish: read,
			Subscribe: []string{
				s(KindRound), s(KindDone), s(KindModel, "all"), s(KindHello, "*"), s(KindMetrics, "*"),
				s(KindBye, "*"), LedgerSubject(job, "*"), inbox,
			},
		}, nil
	}
	return Permissions{}, fmt.Errorf("bus: permissions: party %s: unknown role %q", p.ID, p.Role)
}

// ledgerReadAPI is the JetStream API a party needs to bind to the job's
// ledger stream, append to it (the append itself is a publish on the
// party's ledger subject) and read it, by message gets (STREAM.MSG.GET;
// DIRECT.GET should the stream allow direct gets). The stream name is part
// of every subject, so no other stream is reachable.
//
// No consumer API at all: the server cannot be told to refuse only push
// consumers. It parses $JS.API.CONSUMER.CREATE.<stream>[.<name>[.<filter>]]
// and $JS.API.CONSUMER.DURABLE.CREATE.<stream>.<name> from the subject,
// but the deliver subject is in the request body, which permissions do not
// see, and it delivers a push consumer's messages as the account, not as
// the party that made it. A party that may create a consumer may thus pour
// the whole ledger onto any subject of the job (gf.<job>.round, say, which
// every agent reads). Gets need no consumer, so the ledger readers use
// them and every consumer request on the ledger stream is denied.
func ledgerReadAPI(job string) []string {
	const api = "$JS.API."
	st := LedgerStreamName(job)
	return []string{
		api + "STREAM.INFO." + st,
		api + "STREAM.MSG.GET." + st,
		api + "DIRECT.GET." + st,
		api + "DIRECT.GET." + st + ".>",
	}
}

// ledgerConsumerAPI are the ledger stream's consumer requests, denied to
// every party explicitly (ledgerReadAPI's comment says why), so that no
// later allow-list entry with a wildcard can let them back in.
func ledgerConsumerAPI(job string) []string {
	const api = "$JS.API."
	st := LedgerStreamName(job)
	return []string{
		api + "CONSUMER.CREATE." + st,
		api + "CONSUMER.CREATE." + st + ".>",
		api + "CONSUMER.DURABLE.CREATE." + st + ".>",
	}
}

// durableAggregatorAPI is what the aggregator's durable mode needs: create,
// inspect and consume the job's update stream through its durable consumer
// (and acknowledge), and read and write its checkpoint bucket and model
// object store. Every subject names one of the job's three streams, so the
// aggregator can reach no other stream, and no bank gets any of these.
func durableAggregatorAPI(job string) []string {
	const api = "$JS.API."
	upd := UpdateStreamName(job)
	kvBucket, objBucket := CheckpointBucketName(job), ModelBucketName(job)
	kv, obj := "KV_"+kvBucket, "OBJ_"+objBucket
	out := []string{
		api + "CONSUMER.DURABLE.CREATE." + upd + ".*",
		"$JS.ACK." + upd + ".>",
		"$KV." + kvBucket + ".>",
		"$O." + objBucket + ".>",
		// Replacing an object purges the old one's chunks.
		api + "STREAM.PURGE." + obj,
		// Creating a bucket reads the account's JetStream limits (account
		// totals only: no stream's name or content).
		api + "INFO",
	}
	for _, st := range []string{upd, kv, obj} {
		out = append(out,
			api+"STREAM.CREATE."+st,
			api+"STREAM.UPDATE."+st,
			api+"STREAM.INFO."+st,
			api+"STREAM.MSG.GET."+st,
			api+"DIRECT.GET."+st,
			api+"DIRECT.GET."+st+".>",
			api+"CONSUMER.CREATE."+st+".>",
			api+"CONSUMER.INFO."+st+".*",
			api+"CONSUMER.MSG.NEXT."+st+".*",
			api+"CONSUMER.DELETE."+st+".*",
		)
	}
	return out
}

// blobAPI is what party p needs for bodies sent by reference: write its
// own bucket (the chunks and meta of its objects, the message gets and
// purges with which nats.go's Put and Delete replace and remove objects)
// and read, by message gets, the buckets whose bodies it receives. Only
// the aggregator may create or update a bucket stream.
func blobAPI(job string, p Party, banks []string) []string {
	const api = "$JS.API."
	read := func(party string) []string {
		st := blobStreamName(job, party)
		return []string{api + "STREAM.INFO." + st, api + "STREAM.MSG.GET." + st, api + "DIRECT.GET." + st, api + "DIRECT.GET." + st + ".>"}
	}
	write := func(party string) []string {
		return append(read(party), "$O."+BlobBucketName(job, party)+".>", api+"STREAM.PURGE."+blobStreamName(job, party))
	}
	switch p.Role {
	case RoleBank:
		return append(write(p.ID), read(AggregatorID)...)
	case RoleAggregator:
		out := append(write(AggregatorID), api+"INFO")
		for _, party := range append([]string{AggregatorID}, banks...) {
			st := blobStreamName(job, party)
			out = append(out, api+"STREAM.CREATE."+st, api+"STREAM.UPDATE."+st)
			if party != AggregatorID {
				out = append(out, read(party)...)
			}
		}
		return out
	}
	return nil
}

// blobConsumerAPI are the consumer requests on the job's blob streams,
// denied to every party for the reason ledgerConsumerAPI gives.
func blobConsumerAPI(job string, banks []string) []string {
	const api = "$JS.API."
	var out []string
	for _, party := range append([]string{AggregatorID}, banks...) {
		st := blobStreamName(job, party)
		out = append(out, api+"CONSUMER.CREATE."+st, api+"CONSUMER.CREATE."+st+".>", api+"CONSUMER.DURABLE.CREATE."+st+".>")
	}
	return out
}
