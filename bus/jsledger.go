package bus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"graphfed/privacy"
)

// ledgerKind is the subject kind of ledger entries: gf.<job>.ledger.<client>.
const ledgerKind Kind = "ledger"

const (
	// DefaultLedgerDuplicates is the ledger stream's de-duplication window:
	// an Append retried within it with the same message id is stored once.
	DefaultLedgerDuplicates = 10 * time.Minute
	// DefaultLedgerTimeout bounds each request of a JetStreamLedger whose
	// context has no deadline.
	DefaultLedgerTimeout = 10 * time.Second
)

// LedgerStreamName is the JetStream stream holding job's ledger:
// GF_LEDGER_<JOB> with the job id uppercased and '-' replaced by '_'. Job
// ids are [a-z0-9-], so distinct jobs get distinct streams.
func LedgerStreamName(job string) string {
	return "GF_LEDGER_" + strings.ToUpper(strings.ReplaceAll(job, "-", "_"))
}

// LedgerSubject is the subject of client's ledger entries in job:
// gf.<job>.ledger.<client>.
func LedgerSubject(job, client string) string { return Subject(job, ledgerKind, client) }

// ledgerSubjects is the ledger stream's subject filter, gf.<job>.ledger.>.
func ledgerSubjects(job string) string { return Subject(job, ledgerKind, ">") }

// JSLedgerOptions configure OpenJetStreamLedger.
type JSLedgerOptions struct {
	// Replicas of the stream when it is created (default 1; use 3 on a
	// cluster). Binding to an existing stream with fewer replicas fails,
	// unless ReadOnly.
	Replicas int
	// Duplicates is the de-duplication window of a new stream (default
	// DefaultLedgerDuplicates).
	Duplicates time.Duration
	// Timeout bounds each request when the caller's context has no deadline
	// (default DefaultLedgerTimeout); for Entries it bounds the wait for
	// each message, not the whole read.
	Timeout time.Duration
	// ReadOnly binds to an existing stream and never creates one (audits);
	// Append fails.
	ReadOnly bool
	// Keys, when set, is the job's keyring: Append finds a client's chain
	// head among the entries signed by its key, as the gate does.
	Keys privacy.KeyVerifier
	// Parties selects the accounts layout (JobAccounts): one stream per
	// party (LedgerPartyStreamName) in the ledger account, reached through
	// LedgerAPIPrefix, never created by a party (CreateLedgerStreams is the
	// ledger administrator's). An agent lists itself, the auditor every
	// party; the ledger reads and appends for those parties only. Empty:
	// the job's single stream (LedgerStreamName) in the party's own
	// account, as on an open server.
	Parties []string
	// Limits of a stream CreateLedgerStreams makes; zero: none. Opening a
	// stream accepts any limits with discard-new.
	Limits LedgerLimits
}

// JetStreamLedger is a privacy.Ledger kept in a JetStream stream, one
// stream per job (LedgerStreamName), one message per entry on
// gf.<job>.ledger.<client>. The stream is file-backed, denies message
// deletes and purges, and has no limits that could drop an entry; opening a
// stream that is not configured so fails.
//
// Append returns once the server has acknowledged the message: that is the
// durability point. Each append carries the message id <client>.<seq> for
// de-duplication and expects the client's subject to end at the last entry
// this ledger knows of, so a writer racing on the same client, or a replay,
// is refused rather than interleaved. Append is idempotent: repeating the
// client's last stored entry exactly (a retry after a lost acknowledgement,
// from this ledger value or another) succeeds without storing it twice.
//
// Entries are encoded as FileLedger encodes them (encoding/json of
// privacy.Entry). Errors wrap privacy's kinds: ErrInvalid for an entry the
// ledger refuses, ErrCorrupt for stored messages that are not a valid,
// complete ledger, ErrLedger for failures of the server or the connection.
//
// The ledger does not own the connection. Its methods are safe for
// concurrent use.
type JetStreamLedger struct {
	js       jetstream.JetStream
	job      string
	name     string
	timeout  time.Duration
	readOnly bool
	keys     privacy.KeyVerifier
	// streams holds the job's single stream under "" or, in the accounts
	// layout, each party's own stream under its id, in order.
	streams map[string]ledgerStream
	order   []string

	mu    sync.Mutex
	heads map[string]ledgerHead // per client, loaded at its first Append
}

// ledgerStream is one bound ledger stream and its name.
type ledgerStream struct {
	st   jetstream.Stream
	name string
}

// ledgerHead is where one client's subject stands: seq and stream seq
// of the last entry of its verified chain (0, 0 before its first), and the
// stream seq of the last message on the subject, whatever it holds (the
// expected last sequence of the next append).
type ledgerHead struct {
	seq, entryStreamSeq, lastStreamSeq uint64
}

// OpenJetStreamLedger creates job's ledger stream, or binds to it if it
// exists (ReadOnly: binds only), and checks that it is append-only.
func OpenJetStreamLedger(ctx context.Context, nc *nats.Conn, job string, opts JSLedgerOptions) (*JetStreamLedger, error) {
	const op = "open"
	name := LedgerStreamName(job)
	switch {
	case !ValidID(job):
		return nil, fmt.Errorf("bus: ledger %s: %w: job %q does not match [a-z0-9-]{1,64}", op, privacy.ErrInvalid, job)
	case nc == nil:
		return nil, fmt.Errorf("bus: ledger %s: %w: nil connection", op, privacy.ErrInvalid)
	case opts.Replicas < 0 || opts.Replicas > 5:
		return nil, fmt.Errorf("bus: ledger %s: %w: %d replicas (want 1 to 5)", op, privacy.ErrInvalid, opts.Replicas)
	case opts.Duplicates < 0 || opts.Timeout < 0:
		return nil, fmt.Errorf("bus: ledger %s: %w: negative duplicates window or timeout", op, privacy.ErrInvalid)
	}
	if opts.Replicas == 0 {
		opts.Replicas = 1
	}
	if opts.Duplicates == 0 {
		opts.Duplicates = DefaultLedgerDuplicates
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultLedgerTimeout
	}
	l := &JetStreamLedger{job: job, name: name, timeout: opts.Timeout, readOnly: opts.ReadOnly, keys: opts.Keys,
		heads: map[string]ledgerHead{}, streams: map[string]ledgerStream{}}
	if len(opts.Parties) > 0 {
		return openPartyLedgers(ctx, nc, l, opts)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: ledger %s: stream %s: %w: %w", op, name, privacy.ErrLedger, err)
	}
	l.js = js
	ctx, cancel := l.bound(ctx)
	defer cancel()
	stream, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if opts.ReadOnly {
			return nil, fmt.Errorf("bus: ledger %s: %w: job %s has no ledger stream %s: %w", op, privacy.ErrLedger, job, name, jetstream.ErrStreamNotFound)
		}
		stream, err = js.CreateStream(ctx, ledgerStreamConfig(job, opts))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another writer created it first, perhaps with other settings:
			// bind and let the checks below judge it.
			stream, err = js.Stream(ctx, name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bus: ledger %s: stream %s: %w: %w", op, name, privacy.ErrLedger, err)
	}
	if err := checkLedgerStream(stream.CachedInfo().Config, ledgerSubjects(job), opts); err != nil {
		return nil, fmt.Errorf("bus: ledger %s: stream %s: %w", op, name, err)
	}
	l.streams[""] = ledgerStream{st: stream, name: name}
	l.order = []string{""}
	return l, nil
}

func ledgerStreamConfig(job string, opts JSLedgerOptions) jetstream.StreamConfig {
	return appendOnlyConfig(LedgerStreamName(job), "graphfed privacy ledger of job "+job+" (append-only)", ledgerSubjects(job), opts)
}

// appendOnlyConfig is an append-only ledger stream named name capturing
// subject.
func appendOnlyConfig(name, description, subject string, opts JSLedgerOptions) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        name,
		Description: description,
		Subjects:    []string{subject},
		Retention:   jetstream.LimitsPolicy,
		// No limits unless given, and DiscardNew: an append beyond a limit
		// fails instead of an old entry vanishing.
		MaxConsumers:      -1,
		MaxMsgs:           limitOr(opts.Limits.Msgs),
		MaxBytes:          limitOr(opts.Limits.Bytes),
		MaxMsgsPerSubject: -1,
		MaxMsgSize:        -1,
		Discard:           jetstream.DiscardNew,
		Storage:           jetstream.FileStorage,
		Replicas:          opts.Replicas,
		Duplicates:        opts.Duplicates,
		DenyDelete:        true,
		DenyPurge:         true,
	}
}

// limitOr is n as a stream limit: -1, none, unless positive.
func limitOr(n int64) int64 {
	if n > 0 {
		return n
	}
	return -1
}

// checkLedgerStream refuses a stream that could lose or rewrite entries,
// or whose subjects are not exactly job's ledger subjects: a stream that
// also captured, say, gf.<job>.update.* would fill the ledger with
// messages that are not entries, and one defined by a bank could capture
// what the bank may not read. The server never lets DenyDelete or
// DenyPurge be turned off again, but limits, retention, discard and
// subjects can be changed by a stream update, so every open checks them.
func checkLedgerStream(cfg jetstream.StreamConfig, want string, opts JSLedgerOptions) error {
	var bad []string
	switch {
	case !slices.Contains(cfg.Subjects, want):
		bad = append(bad, fmt.Sprintf("subjects %v do not include %s", cfg.Subjects, want))
	case len(cfg.Subjects) != 1:
		bad = append(bad, fmt.Sprintf("subjects %v capture more than %s", cfg.Subjects, want))
	}
	if cfg.Storage != jetstream.FileStorage {
		bad = append(bad, "storage "+cfg.Storage.String()+", not file")
	}
	if cfg.Retention != jetstream.LimitsPolicy {
		bad = append(bad, "retention "+cfg.Retention.String()+" removes consumed messages")
	}
	if !cfg.DenyDelete {
		bad = append(bad, "message deletes allowed")
	}
	if !cfg.DenyPurge || cfg.AllowRollup {
		bad = append(bad, "purges or roll-ups allowed")
	}
	if cfg.MaxAge != 0 {
		bad = append(bad, "entries expire after "+cfg.MaxAge.String())
	}
	if cfg.AllowMsgTTL {
		bad = append(bad, "per-message TTLs allowed")
	}
	limited := cfg.MaxMsgs > 0 || cfg.MaxBytes > 0 || cfg.MaxMsgsPerSubject > 0
	if limited && (cfg.Discard != jetstream.DiscardNew || cfg.MaxMsgsPerSubject > 0 && !cfg.DiscardNewPerSubject) {
		bad = append(bad, "limits that discard old entries")
	}
	if cfg.PersistMode != jetstream.DefaultPersistMode {
		bad = append(bad, "asynchronous persistence")
	}
	if cfg.Mirror != nil {
		bad = append(bad, "a mirror")
	}
	if !opts.ReadOnly {
		if cfg.Sealed {
			bad = append(bad, "sealed")
		}
		if cfg.Replicas < opts.Replicas {
			bad = append(bad, fmt.Sprintf("%d replicas, want %d", cfg.Replicas, opts.Replicas))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: not an append-only ledger: %s", privacy.ErrLedger, strings.Join(bad, "; "))
	}
	return nil
}

// Job returns the ledger's job id.
func (l *JetStreamLedger) Job() string { return l.job }

// Stream returns the name of the ledger's stream.
func (l *JetStreamLedger) Stream() string { return l.name }

// bound gives ctx the ledger's timeout unless it has a deadline.
func (l *JetStreamLedger) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, l.timeout)
}

// ledgerMsgID is an entry's de-duplication id, <client>.<seq>: unique in
// the job's stream because sequence numbers increase per client.
func ledgerMsgID(e *privacy.Entry) string {
	return e.Client + "." + strconv.FormatUint(e.Seq, 10)
}

// Append stores e and returns once the server has acknowledged it. The
// entry must be valid, belong to the ledger's job and have a sequence
// number above its client's last stored one (privacy.ErrInvalid otherwise,
// with privacy.ErrChainMoved: the gate then reads the chain and settles
// what holds that seq), or be that last stored entry exactly, which is
// success without a second copy.
func (l *JetStreamLedger) Append(ctx context.Context, e privacy.Entry) error {
	const op = "append"
	ls, err := l.on(e.Client)
	if err != nil {
		return fmt.Errorf("bus: ledger %s: %w", op, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bus: ledger %s: stream %s: %w: %w", op, ls.name, privacy.ErrLedger, err)
	}
	if l.readOnly {
		return fmt.Errorf("bus: ledger %s: stream %s: %w: the ledger was opened read-only", op, ls.name, privacy.ErrInvalid)
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("bus: ledger %s: stream %s: %w", op, ls.name, err)
	}
	if e.Job != l.job {
		return fmt.Errorf("bus: ledger %s: stream %s: %w: entry of job %s in the ledger of job %s", op, ls.name, privacy.ErrInvalid, e.Job, l.job)
	}
	data, err := privacy.EncodeEntry(e)
	if err != nil {
		return fmt.Errorf("bus: ledger %s: stream %s: %w", op, ls.name, err)
	}
	ctx, cancel := l.bound(ctx)
	defer cancel()

	l.mu.Lock()
	defer l.mu.Unlock()
	head, ok := l.heads[e.Client]
	if !ok {
		if head, err = l.loadHead(ctx, e.Client); err != nil {
			return fmt.Errorf("bus: ledger %s: %w", op, err)
		}
		l.heads[e.Client] = head
	}
	subj := LedgerSubject(l.job, e.Client)
	id := ledgerMsgID(&e)
	// Two attempts: the second follows a refresh of the client's head after
	// the server reported that the subject had moved on.
	for attempt := 0; ; attempt++ {
		if e.Seq <= head.seq {
			if e.Seq == head.seq {
				// A retry of the client's last entry, stored already?
				same, err := l.storedIs(ctx, ls, head.entryStreamSeq, subj, data)
				if err != nil {
					return fmt.Errorf("bus: ledger %s: stream %s: %w: %w", op, ls.name, privacy.ErrLedger, err)
				}
				if same {
					return nil
				}
			}
			// The chain has moved on past this writer (another writer, or
			// an earlier life of it whose append was stored late): the
			// gate reads the chain and settles what it finds there.
			return fmt.Errorf("bus: ledger %s: stream %s: %w: seq %d of job %s client %s after seq %d: %w",
				op, ls.name, privacy.ErrInvalid, e.Seq, e.Job, e.Client, head.seq, privacy.ErrChainMoved)
		}
		// Repeated while the server does not answer (a restart, a leader
		// election): the message id and the expected last sequence make a
		// repeat of a stored attempt a duplicate or a refusal, never a
		// second copy, and both are settled below.
		var ack *jetstream.PubAck
		err := retryJS(ctx, defaultRetry, func(ctx context.Context) error {
			var err error
			ack, err = l.js.Publish(ctx, subj, data,
				jetstream.WithMsgID(id),
				jetstream.WithExpectStream(ls.name),
				jetstream.WithExpectLastSequencePerSubject(head.lastStreamSeq))
			return err
		})
		if err == nil && !ack.Duplicate {
			l.heads[e.Client] = ledgerHead{seq: e.Seq, entryStreamSeq: ack.Sequence, lastStreamSeq: ack.Sequence}
			return nil
		}
		if err == nil {
			// The id is stored already: this is a retry of an append whose
			// acknowledgement was lost, if the stored entry is this one.
			return l.settleDuplicate(ctx, ls, op, &e, data, ack.Sequence)
		}
		if !wrongLastSequence(err) || attempt > 0 {
			return fmt.Errorf("bus: ledger %s: stream %s: %w: publish %s: %w", op, ls.name, privacy.ErrLedger, id, err)
		}
		// Someone stored on this subject since we last looked: an earlier
		// try of this very append, another writer, or junk (which the
		// reload skips: junk on its subject never blocks a client). The
		// first is what a loaded server makes common (an acknowledgement
		// late past retryJS's timeout, the repeat refused), and the
		// subject's last message says so in one indexed read, where the
		// reload reads the client's whole chain: 10,000 agents reloading at
		// once timed out.
		if stored, ok := l.lastIs(ctx, ls, subj, data); ok {
			l.heads[e.Client] = ledgerHead{seq: e.Seq, entryStreamSeq: stored, lastStreamSeq: stored}
			return nil
		}
		h, err := l.loadHead(ctx, e.Client)
		if err != nil {
			return fmt.Errorf("bus: ledger %s: %w", op, err)
		}
		l.heads[e.Client] = h
		head = h
	}
}

// lastIs reports whether the last message on subj is data (an entry's
// bytes name its job, client, seq and chain: no other append has them),
// and its stream sequence. A failed read is a no: the caller reloads.
func (l *JetStreamLedger) lastIs(ctx context.Context, ls ledgerStream, subj string, data []byte) (uint64, bool) {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	m, err := ls.st.GetLastMsgForSubject(ctx, subj)
	if err != nil || !bytes.Equal(m.Data, data) {
		return 0, false
	}
	return m.Sequence, true
}

// settleDuplicate handles a duplicate acknowledgement for entry e: success
// if the message stored under its id is e, on e's subject; a refusal
// otherwise, one whose chain has moved on (privacy.ErrChainMoved) when
// that message is on e's subject.
func (l *JetStreamLedger) settleDuplicate(ctx context.Context, ls ledgerStream, op string, e *privacy.Entry, data []byte, seq uint64) error {
	subj := LedgerSubject(l.job, e.Client)
	m, err := ls.st.GetMsg(ctx, seq)
	if err != nil {
		return fmt.Errorf("bus: ledger %s: stream %s: %w: after a duplicate ack: reading stream seq %d: %w", op, ls.name, privacy.ErrLedger, seq, err)
	}
	switch {
	case m.Subject != subj:
		return fmt.Errorf("bus: ledger %s: stream %s: %w: id %s is taken by a different message at stream seq %d",
			op, ls.name, privacy.ErrInvalid, ledgerMsgID(e), seq)
	case !bytes.Equal(m.Data, data):
		return fmt.Errorf("bus: ledger %s: stream %s: %w: id %s is taken by a different message at stream seq %d: %w",
			op, ls.name, privacy.ErrInvalid, ledgerMsgID(e), seq, privacy.ErrChainMoved)
	}
	h, err := l.loadHead(ctx, e.Client)
	if err != nil {
		return fmt.Errorf("bus: ledger %s: %w", op, err)
	}
	l.heads[e.Client] = h
	return nil
}

// storedIs reports whether the message at stream sequence seq is data on
// subject subj.
func (l *JetStreamLedger) storedIs(ctx context.Context, ls ledgerStream, seq uint64, subj string, data []byte) (bool, error) {
	m, err := ls.st.GetMsg(ctx, seq)
	if err != nil {
		return false, fmt.Errorf("reading stream seq %d: %w", seq, err)
	}
	return m.Subject == subj && bytes.Equal(m.Data, data), nil
}

// wrongLastSequence reports whether err is the server's refusal of an
// expected-last-sequence header.
func wrongLastSequence(err error) bool {
	var jerr jetstream.JetStreamError
	if !errors.As(err, &jerr) || jerr.APIError() == nil {
		return false
	}
	code := jerr.APIError().ErrorCode
	return code == jetstream.JSErrCodeStreamWrongLastSequence || code == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// Prepare finds client's chain head now, as its first Append would, so
// that the first append of a round costs one publish: with 10,000 agents
// the head's read inside round 1 (a stream info and a message get each)
// took some agents past the round's deadline on a loaded machine. Appends
// stay correct if the subject moves on afterwards: the expected last
// sequence catches it and the head is read again.
func (l *JetStreamLedger) Prepare(ctx context.Context, client string) error {
	if !ValidID(client) {
		return fmt.Errorf("bus: ledger prepare: %w: client %q does not match [a-z0-9-]{1,64}", privacy.ErrInvalid, client)
	}
	if _, err := l.on(client); err != nil {
		return fmt.Errorf("bus: ledger prepare: %w", err)
	}
	ctx, cancel := l.bound(ctx)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.heads[client]; ok {
		return nil
	}
	head, err := l.loadHead(ctx, client)
	if err != nil {
		return fmt.Errorf("bus: ledger prepare: %w", err)
	}
	l.heads[client] = head
	return nil
}

// loadHead reads client's subject and finds its chain head as a reader
// would: the last entry the verifier accepts (with the ledger's keys). A
// subject with no message at all (every client of a new job) is one
// indexed read.
func (l *JetStreamLedger) loadHead(ctx context.Context, client string) (ledgerHead, error) {
	ls, err := l.on(client)
	if err != nil {
		return ledgerHead{}, err
	}
	gctx, cancel := l.bound(ctx)
	_, err = ls.st.GetLastMsgForSubject(gctx, LedgerSubject(l.job, client))
	cancel()
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return ledgerHead{}, nil
	}
	// Streamed, as a reader does: junk beside the chain (up to the
	// stream's limits) costs this read time, not memory. Collecting the
	// records first held 240 MiB of junk, 595 MB at the junked bank's
	// restart in the by-hand re-run.
	var h ledgerHead
	v := privacy.NewVerifier(privacy.VerifyOptions{Keys: l.keys, Job: l.job})
	err = l.walk(ctx, ls, "records", LedgerSubject(l.job, client), func(r privacy.Record) error {
		if out := v.Step(r); out.Entry != nil && out.Entry.Client == client {
			h.seq, h.entryStreamSeq = out.Entry.Seq, r.Pos
		}
		h.lastStreamSeq = r.Pos
		return nil
	})
	if err != nil {
		return ledgerHead{}, err
	}
	return h, nil
}

// Records reads every message of the stream in stream order, undecoded:
// privacy.ReadLedger verifies them. Pos is the stream sequence, Where the
// subject, At the message's timestamp, and Job and Client the party the
// subject names ("" when the subject is not a client's ledger subject).
func (l *JetStreamLedger) Records(ctx context.Context) ([]privacy.Record, error) {
	out := []privacy.Record{}
	err := l.WalkRecords(ctx, func(r privacy.Record) error { out = append(out, r); return nil })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WalkRecords implements privacy.RecordWalker: the records of Records,
// handed to fn one at a time as they are read.
func (l *JetStreamLedger) WalkRecords(ctx context.Context, fn func(privacy.Record) error) error {
	for _, party := range l.order {
		ls := l.streams[party]
		filter := ledgerSubjects(l.job)
		if party != "" {
			filter = LedgerSubject(l.job, party)
		}
		if err := l.walk(ctx, ls, "records", filter, fn); err != nil {
			return err
		}
	}
	return nil
}

// RecordsFor reads the messages of client's ledger subject, as Records.
func (l *JetStreamLedger) RecordsFor(ctx context.Context, client string) ([]privacy.Record, error) {
	if !ValidID(client) {
		return nil, fmt.Errorf("bus: ledger records: stream %s: %w: client %q does not match [a-z0-9-]{1,64}", l.name, privacy.ErrInvalid, client)
	}
	ls, err := l.on(client)
	if err != nil {
		return nil, fmt.Errorf("bus: ledger records: %w", err)
	}
	out := []privacy.Record{}
	err = l.walk(ctx, ls, "records", LedgerSubject(l.job, client), func(r privacy.Record) error { out = append(out, r); return nil })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EntriesFor returns client's entries that verify without a keyring, in
// stream order.
func (l *JetStreamLedger) EntriesFor(ctx context.Context, client string) ([]privacy.Entry, error) {
	recs, err := l.RecordsFor(ctx, client)
	if err != nil {
		return nil, err
	}
	return privacy.Verify(recs, privacy.VerifyOptions{Job: l.job}).Entries, nil
}

// Entries returns the entries that verify without a keyring
// (privacy.ReadLedger reports what it skips), in stream order.
func (l *JetStreamLedger) Entries(ctx context.Context) ([]privacy.Entry, error) {
	rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{})
	return rd.Entries, err
}

// walk reads the messages on filter with direct message gets
// ($JS.API.STREAM.MSG.GET, next by subject), one request each, up to the
// stream's last sequence when the read began, and hands each to fn. Gets,
// not consumers: parties may not create consumers on the ledger stream at
// all, since a push consumer's deliver subject could be any subject of the
// job; in the accounts layout no party may make a consumer on a ledger
// stream at all.
func (l *JetStreamLedger) walk(ctx context.Context, ls ledgerStream, op, filter string, fn func(privacy.Record) error) error {
	fail := func(err error) error {
		return fmt.Errorf("bus: ledger %s: stream %s: %w: %w", op, ls.name, privacy.ErrLedger, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	ictx, cancel := l.bound(ctx)
	info, err := ls.st.Info(ictx)
	cancel()
	if err != nil {
		return fail(err)
	}
	last := info.State.LastSeq
	for seq := uint64(1); seq <= last; {
		gctx, cancel := l.bound(ctx)
		m, err := ls.st.GetMsg(gctx, seq, jetstream.WithGetMsgSubject(filter))
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return fail(fmt.Errorf("reading from stream seq %d of %d: %w", seq, last, err))
		}
		if m.Sequence < seq {
			return fail(fmt.Errorf("stream seq %d returned for a read from %d", m.Sequence, seq))
		}
		if m.Sequence > last {
			break
		}
		r := privacy.Record{Pos: m.Sequence, Where: "subject " + m.Subject, Data: m.Data, At: m.Time}
		r.Job, r.Client = l.filing(m.Subject)
		if err := fn(r); err != nil {
			return err
		}
		seq = m.Sequence + 1
	}
	return nil
}

// filing is the job and client a ledger subject names; for any other
// subject, the job and an impossible client, so that no entry is accepted
// from it.
func (l *JetStreamLedger) filing(subject string) (job, client string) {
	prefix := LedgerSubject(l.job, "")
	if c, ok := strings.CutPrefix(subject, prefix); ok && ValidID(c) {
		return l.job, c
	}
	return l.job, "~" + subject
}
