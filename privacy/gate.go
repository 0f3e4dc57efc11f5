package privacy

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Config configures one agent's gate for one job.
type Config struct {
	Job, Client string         // [a-z0-9-]{1,64}
	Delta       float64        // δ of every budget and report, in (0, 1)
	Budget      Budget         // zero: no cap
	Accountant  AccountantKind // zero: RDP
	// Seed fixes the noise for reproducible simulation; nil (the default)
	// draws the CSPRNG seed from crypto/rand. Under a fixed seed each
	// release draws from its own stream, derived from (seed, client,
	// channel, round, index of the release on that channel in that round),
	// so that a gate rebuilt from the ledger after a crash adds the noise
	// an uninterrupted run would have. Every entry released under a fixed
	// seed is marked Seeded: the run makes no privacy claim.
	Seed *uint64
	// Signer, when set, signs every entry the gate appends with the
	// client's key. Keys, when set, is the job's keyring: the gate rebuilds
	// only from entries signed by its client's key. Both nil in a plain
	// simulation, where entries are still hash-chained.
	Signer EntrySigner
	Keys   KeyVerifier
	// NodeKey, when set, is the secret the gate keys node ids with in the
	// ledger (nodekey.go). Unset, a Signer that is a SecretDeriver derives
	// it from the client's seed (DeriveNodeKey); without one the key is
	// InsecureNodeKey's, which protects nothing.
	NodeKey []byte
}

// Request is one value to release.
type Request struct {
	Channel Channel // ChannelModel, ChannelGrad, ChannelMargin, ChannelDescriptor or ChannelEmb
	Round   uint64
	// The rows, either as Rows or as a row-major Flat slice of Dim-long
	// rows. Every row is clipped to norm Clip separately; embedding rows
	// are normalized to the unit sphere.
	Rows [][]float32
	Flat []float32
	Dim  int
	// NodeIDs: one distinct id per row, required for embeddings (they are
	// accounted per node), optional elsewhere.
	NodeIDs []int64
	Sigma   float64 // noise standard deviation per coordinate, > 0
	Clip    float64 // L2 clip per row, > 0; embeddings: 0 or 1 (unit sphere)
}

// Gate is the only way to produce a Released. It is safe for concurrent
// use; releases are serialized (each waits for its ledger append).
type Gate struct {
	mu     sync.Mutex
	cfg    Config
	ledger Ledger
	clock  func() time.Time
	noise  *noiseSource // nil under a fixed seed: per-release streams instead
	chainState
	// pending is an entry whose append failed: it is charged, and it may
	// or may not be stored, so the next append repeats it first (every
	// ledger takes an exact repeat of a stored entry as success) and the
	// chain never forks around it.
	pending *Entry
	reading Reading // what NewGate's read of the ledger skipped and flagged
	// keyer turns node ids into the keyed ids the ledger holds.
	keyer *nodeKeyer
	// anchor is the aggregator's latest record the client has received
	// (SetAnchor), named by every entry it makes from then on; it outlives
	// an adopted chain state, which may only know an older one.
	anchor *Ref
}

// chainState is what a gate knows of its client's chain: a pure function
// of the chain's entries (replayChain), advanced by each of its own.
type chainState struct {
	acct *Accountant
	// streams counts the releases charged per (channel, round), replayed
	// from the ledger: the next release's stream index under a fixed seed.
	streams map[streamKey]uint64
	seq     uint64       // last sequence number used by this job and client
	prev    string       // hex digest of the entry with seq: the next entry's Prev
	calib   *Calibration // the latest recorded calibration
	anchor  *Ref         // the anchor of the client's latest entry that has one
}

// replayChain builds a gate's chain state from the entries of a ledger
// read: cfg's client's entries are applied to a fresh accountant in order,
// and the last of them is the chain head. An entry the accountant refuses
// is an error (the caller's ErrCorrupt).
func replayChain(cfg Config, entries []Entry) (chainState, error) {
	acct, err := NewAccountant(cfg.Accountant, cfg.Delta, cfg.Budget)
	if err != nil {
		return chainState{}, err
	}
	st := chainState{acct: acct, streams: map[streamKey]uint64{}}
	for _, e := range entries {
		if e.Client != cfg.Client {
			continue
		}
		if err := acct.Apply(e); err != nil {
			return chainState{}, err
		}
		d, err := e.Digest()
		if err != nil {
			return chainState{}, err
		}
		st.seq, st.prev = e.Seq, hex.EncodeToString(d[:])
		if e.Anchor != nil && (st.anchor == nil || e.Anchor.Seq > st.anchor.Seq) {
			a := *e.Anchor
			st.anchor = &a
		}
		if e.Channel == ChannelCalibration {
			st.noteCalibration(cfg.Budget.NodeQ, e.clone().Calibration)
		}
		if e.Channel.releases() {
			st.streams[streamKey{e.Channel, e.Round, 0}]++
		}
	}
	return st, nil
}

// NewGate builds a gate. It reads the ledger through Verify and replays
// the client's own chain of cfg.Job into the accountant, so a restarted
// agent keeps its spent budget, and continues its sequence numbers and
// hash chain. Records the verifier rejects (garbage, forgeries, other
// parties' junk) are skipped, never fatal; Reading reports them. clock may
// be nil (time.Now).
func NewGate(ctx context.Context, cfg Config, l Ledger, clock func() time.Time) (*Gate, error) {
	const op = "new gate"
	if !validID(cfg.Job) || !validID(cfg.Client) {
		return nil, errorf(op, ErrInvalid, fmt.Sprintf("job %q and client %q must match [a-z0-9-]{1,64}", cfg.Job, cfg.Client))
	}
	if l == nil {
		return nil, errorf(op, ErrInvalid, "nil ledger")
	}
	if cfg.Accountant == 0 {
		cfg.Accountant = RDP
	}
	if clock == nil {
		clock = time.Now
	}
	if _, err := NewAccountant(cfg.Accountant, cfg.Delta, cfg.Budget); err != nil {
		return nil, err
	}
	key, secret, err := nodeKeyFor(cfg)
	if err != nil {
		return nil, wrapErr(op, ErrInvalid, "node-id key of "+cfg.Client, err)
	}
	rd, err := ReadLedger(ctx, l, VerifyOptions{Keys: cfg.Keys, Job: cfg.Job})
	if err != nil {
		return nil, wrapErr(op, ErrLedger, "reading entries", err)
	}
	st, err := replayChain(cfg, rd.Entries)
	if err != nil {
		return nil, wrapErr(op, ErrCorrupt, "replaying ledger", err)
	}
	g := &Gate{cfg: cfg, ledger: l, clock: clock, chainState: st, keyer: newNodeKeyer(key, secret), anchor: st.anchor}
	if cfg.Seed == nil {
		g.noise = newNoiseSource(nil)
	}
	rd.Entries = nil
	g.reading = rd
	return g, nil
}

// readChain reads the ledger as NewGate does and returns the whole
// reading and the gate's client's entries in it. It touches only the
// gate's configuration and ledger, which never change: no lock needed.
func (g *Gate) readChain(ctx context.Context) (Reading, []Entry, error) {
	rd, err := ReadLedger(ctx, g.ledger, VerifyOptions{Keys: g.cfg.Keys, Job: g.cfg.Job})
	if err != nil {
		return Reading{}, nil, err
	}
	own := rd.Entries[:0:0]
	for _, e := range rd.Entries {
		if e.Client == g.cfg.Client {
			own = append(own, e)
		}
	}
	return rd, own, nil
}

// adopt rebuilds the gate's chain state from entries of a ledger read
// (the client's own are replayed, as NewGate replays them) and forgets a
// pending entry: the entries hold the chain as it now stands, past it.
// Called with mu held.
func (g *Gate) adopt(entries []Entry) error {
	st, err := replayChain(g.cfg, entries)
	if err != nil {
		return err
	}
	g.chainState, g.pending = st, nil
	if a := st.anchor; a != nil && (g.anchor == nil || a.Seq > g.anchor.Seq) {
		g.anchor = a
	}
	return nil
}

// Sync reads the ledger again and returns the gate's client's chain in it,
// as Entries does; when that chain has moved on past the gate's head (an
// append of an earlier life of the agent that the ledger stored only after
// this gate read its chain), the gate first rebuilds its state from it, so
// that the entry is accounted and the next release follows it. A
// restarted agent rebuilds its own state from the chain Sync returns: the
// agent and its gate then stand on one read of the ledger.
func (g *Gate) Sync(ctx context.Context) ([]Entry, error) {
	const op = "sync"
	g.mu.Lock()
	defer g.mu.Unlock()
	rd, own, err := g.readChain(ctx)
	if err != nil {
		return nil, wrapErr(op, ErrLedger, "reading entries", err)
	}
	if n := len(own); n > 0 {
		// A pending entry has the gate's head seq and may or may not be
		// stored: a chain holding that seq settles it either way.
		if head := own[n-1].Seq; head > g.seq || g.pending != nil && head >= g.pending.Seq {
			if err := g.adopt(rd.Entries); err != nil {
				return nil, wrapErr(op, ErrCorrupt, "replaying ledger", err)
			}
		}
	}
	return own, nil
}

// Reading is what the gate's start-up read of the ledger found besides
// the entries it replayed: the records it skipped and the chain breaks it
// flagged, over the whole job, each with its position in the ledger.
func (g *Gate) Reading() Reading {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.reading
	r.Rejected = append([]Rejection(nil), r.Rejected...)
	r.Breaks = append([]ChainBreak(nil), r.Breaks...)
	return r
}

// seal links e to the client's chain (Prev) and signs it. Called with mu
// held; it does not advance the chain (commit does).
func (g *Gate) seal(e *Entry) (string, error) {
	e.Prev, e.Sig = g.prev, nil
	if e.Seq == 1 {
		e.Prev = ""
	}
	d, err := e.Digest()
	if err != nil {
		return "", err
	}
	if g.cfg.Signer != nil {
		if e.Sig, err = g.cfg.Signer.SignEntry(d[:]); err != nil {
			return "", wrapErr("sign entry", ErrLedger, fmt.Sprintf("seq %d", e.Seq), err)
		}
	}
	return hex.EncodeToString(d[:]), nil
}

// appendEntry appends e after any pending entry; a failure leaves e
// pending. Called with mu held, after the chain has advanced to e. It
// appends once: transient failures are repeated beneath the gate, by the
// ledger (the bus package's RetryLedger, which says why there), so that
// a repeat is this very entry and the gate sees one append, acknowledged
// or failed.
func (g *Gate) appendEntry(ctx context.Context, e Entry) error {
	if err := g.flushPending(ctx); err != nil {
		return err
	}
	if err := g.ledger.Append(ctx, e.clone()); err != nil {
		p := e.clone()
		g.pending = &p
		return err
	}
	return nil
}

// flushPending repeats the append of an entry whose append failed.
func (g *Gate) flushPending(ctx context.Context) error {
	if g.pending == nil {
		return nil
	}
	if err := g.ledger.Append(ctx, g.pending.clone()); err != nil {
		return fmt.Errorf("repeating the failed append of seq %d: %w", g.pending.Seq, err)
	}
	g.pending = nil
	return nil
}

// Release validates the request, clips every row (normalizes embeddings),
// checks the budget, charges the accountant, appends the ledger entry
// durably, and only then adds Gaussian noise and returns the value.
//
// A release that would exceed a budget returns an error wrapping
// ErrBudgetExceeded: nothing is charged, logged or returned. If the ledger
// append fails the accountant stays charged (the entry may have reached
// storage before the failure; over-counting is the safe side) and nothing
// is returned. If the ledger refuses it because the client's chain has
// moved on past the gate (an earlier life's append stored after this gate
// read its chain), the gate reads the chain again and judges the entry
// holding the seq (settleMoved): the client's own release of the same
// channel and round is accounted instead, and the error wraps
// ErrAlreadyReleased (the release was made, by that life, and is not made
// again); its own entry of an earlier round, or its calibration of this
// round or an earlier one, is accounted and the release is made after it,
// at the next seq, its budget checked as the chain now stands (an error
// wrapping ErrBudgetExceeded if that entry spent what it needed). Anything
// else there stays an error.
func (g *Gate) Release(ctx context.Context, req Request) (Released, error) {
	const op = "release"
	if !req.Channel.releases() {
		return Released{}, errorf(op, ErrInvalid, fmt.Sprintf("channel %q is not a release channel", req.Channel))
	}
	if !finitePos(req.Sigma) {
		return Released{}, errorf(op, ErrInvalid, fmt.Sprintf("sigma %v must be positive and finite", req.Sigma))
	}
	clip, emb := req.Clip, req.Channel == ChannelEmb
	switch {
	case emb && (clip == 0 || clip == 1):
		clip = 1
	case emb:
		return Released{}, errorf(op, ErrInvalid, fmt.Sprintf("embedding clip %v: embeddings are normalized to the unit sphere (clip 0 or 1)", clip))
	case !finitePos(clip):
		return Released{}, errorf(op, ErrInvalid, fmt.Sprintf("clip %v must be positive and finite", clip))
	}
	data, rows, dim, err := gatherRows(&req)
	if err != nil {
		return Released{}, wrapErr(op, ErrInvalid, "channel "+string(req.Channel), err)
	}
	if emb && len(req.NodeIDs) != rows {
		return Released{}, errorf(op, ErrInvalid, fmt.Sprintf("%d node ids for %d embedding rows", len(req.NodeIDs), rows))
	}
	if req.NodeIDs != nil && len(req.NodeIDs) != rows {
		return Released{}, errorf(op, ErrInvalid, fmt.Sprintf("%d node ids for %d rows", len(req.NodeIDs), rows))
	}
	for i := 0; i < rows; i++ {
		if err := clipRow(data[i*dim:(i+1)*dim], clip, emb); err != nil {
			return Released{}, wrapErr(op, ErrInvalid, fmt.Sprintf("row %d", i), err)
		}
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	// An earlier entry whose append failed goes first: nothing new is
	// charged while the ledger cannot take it.
	if err := g.flushPending(ctx); err != nil {
		return Released{}, wrapErr(op, ErrLedger, "", err)
	}
	for settled := 0; ; settled++ {
		// The ledger holds keyed node ids (nodekey.go); the value
		// returned keeps the wire's.
		e := Entry{
			Seq: g.seq + 1, Job: g.cfg.Job, Client: g.cfg.Client, Channel: req.Channel, Round: req.Round,
			NodeIDs: g.keyer.ids(req.NodeIDs), Count: rows, Dim: dim,
			Sigma: req.Sigma, Clip: clip, Rho: Sensitivity(req.Channel, clip, rows),
			Time: g.clock().UTC(), Seeded: g.cfg.Seed != nil, Anchor: g.anchorCopy(),
		}
		if len(e.NodeIDs) == 0 {
			e.NodeIDs = nil
		}
		digest, err := g.seal(&e)
		if err != nil {
			return Released{}, err
		}
		// After an adopted entry (below) this is checked again, against
		// the chain as it now stands: that entry may have spent budget.
		if err := g.acct.Charge(e); err != nil {
			return Released{}, err // budget exceeded or invalid: nothing charged
		}
		g.seq, g.prev = e.Seq, digest
		// The stream index advances with the charge: a release whose append
		// failed may be in the ledger, and its stream must not be reused.
		sk := streamKey{req.Channel, req.Round, 0}
		sk.k = g.streams[sk]
		g.streams[streamKey{req.Channel, req.Round, 0}]++
		err = g.appendEntry(ctx, e)
		if err == nil {
			noise := g.noise
			if g.cfg.Seed != nil {
				noise = releaseSource(*g.cfg.Seed, g.cfg.Client, sk)
			}
			noise.addGaussian(data, req.Sigma)
			ids := append([]int64(nil), req.NodeIDs...)
			if len(ids) == 0 {
				ids = nil
			}
			return Released{entry: e, data: data, ids: ids}, nil
		}
		if !errors.Is(err, ErrChainMoved) {
			return Released{}, wrapErr(op, ErrLedger, fmt.Sprintf("append seq %d", e.Seq), err)
		}
		if retry, err := g.settleMoved(ctx, op, e, err, settled); !retry {
			return Released{}, err
		}
		// The entry holding e's seq is adopted: e is made again after it.
		// The gate's state is the chain's, rebuilt without e, so the next
		// pass draws e's stream index from the chain, as a gate built from
		// the ledger would (the adopted entry is of another channel or
		// round: not e's stream), and under a fixed seed adds the noise an
		// uninterrupted run adds. e itself was never stored (its seq holds
		// that entry) and no noise was drawn for it.
	}
}

// RecordCalibration appends a calibration entry carrying the metric-DP
// distances measured on this client's released embeddings (see
// Calibrate), durably, so that an audit can evaluate per-node ε from the
// ledger alone. A refusal because the chain has moved on is settled as in
// Release: the client's own calibration of the round is ErrAlreadyReleased,
// its own entry of an earlier round is accounted and the calibration is
// recorded after it.
func (g *Gate) RecordCalibration(ctx context.Context, round uint64, c Calibration) (Entry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, err := g.appendRecord(ctx, "record calibration", func(seq uint64) Entry {
		return Entry{
			Seq: seq, Job: g.cfg.Job, Client: g.cfg.Client, Channel: ChannelCalibration, Round: round,
			Time: g.clock().UTC(), Seeded: g.cfg.Seed != nil, Calibration: &c, Anchor: g.anchorCopy(),
		}.clone()
	})
	if err != nil {
		return Entry{}, err
	}
	g.noteCalibration(g.cfg.Budget.NodeQ, e.Calibration)
	return e, nil
}

// appendRecord appends the entry that build makes for the next seq: a
// record that spends no budget (calibration, secure aggregation, the
// aggregator's round and done records). Pending appends are flushed
// first, and a chain that moved on is settled as in Release: build is
// called again for the seq after the adopted entry. g.mu must be held.
func (g *Gate) appendRecord(ctx context.Context, op string, build func(seq uint64) Entry) (Entry, error) {
	if err := g.flushPending(ctx); err != nil {
		return Entry{}, wrapErr(op, ErrLedger, "", err)
	}
	for settled := 0; ; settled++ {
		e := build(g.seq + 1)
		if err := e.Validate(); err != nil {
			return Entry{}, err
		}
		digest, err := g.seal(&e)
		if err != nil {
			return Entry{}, err
		}
		g.seq, g.prev = e.Seq, digest
		err = g.appendEntry(ctx, e)
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, ErrChainMoved) {
			return Entry{}, wrapErr(op, ErrLedger, fmt.Sprintf("append seq %d", e.Seq), err)
		}
		if retry, err := g.settleMoved(ctx, op, e, err, settled); !retry {
			return Entry{}, err
		}
	}
}

// maxSettled bounds the entries one append adopts (settleMoved) before it
// gives up. An agent killed with one append in flight leaves at most one
// such entry; the bound only keeps a ledger that keeps moving the chain
// from holding a release forever.
const maxSettled = 8

// settleMoved resolves the ledger's refusal of e's append because the
// client's chain has moved on past the gate's view of it (cause wraps
// ErrChainMoved); e is pending and charged, and settled entries were
// adopted for it already. It is how the gate reads the ledger's "a retry
// that finds its own entry" a level up: the ledger accepts an exact repeat
// of its last entry, and the gate, which knows what e releases, reads its
// chain again and judges s, the entry holding e's seq:
//
//   - s must be the client's own entry, accepted by the job's keyring as
//     NewGate accepts entries, continuing the very chain head e continues
//     (s.Prev = e.Prev). No such entry, or a fork, is an error.
//   - s of e's channel and round is an earlier life's release of what e
//     releases, whose append the ledger stored only after this gate read
//     its chain: the gate adopts it and returns ErrAlreadyReleased,
//     releasing nothing.
//   - s of an earlier round than e's (any channel), or a calibration or
//     secagg record of e's round or an earlier one while e is a release,
//     is an earlier life's entry that this life, already at e, has moved
//     past (neither releases anything): the gate adopts it and returns retry,
//     and the caller makes e again at the next seq, chained after s.
//   - s of a later round, or of e's round on another channel (a release
//     while e is a calibration or secagg record among them), is not an entry this life has
//     moved past: an error.
//
// Adopting s rebuilds the gate's state from the chain up to and including
// s (s accounted once, e dropped, nothing pending); what may follow s is
// judged the same way when the next append is refused in turn. An error
// leaves e pending, as any failed append does. Called with mu held.
func (g *Gate) settleMoved(ctx context.Context, op string, e Entry, cause error, settled int) (retry bool, err error) {
	what := fmt.Sprintf("append seq %d (%s, round %d) of client %s", e.Seq, e.Channel, e.Round, e.Client)
	if settled >= maxSettled {
		return false, wrapErr(op, ErrLedger, fmt.Sprintf("%s refused as the chain moved on, after adopting %d earlier entries of the client for this append: giving up; nothing released",
			what, settled), cause)
	}
	_, own, err := g.readChain(ctx)
	if err != nil {
		return false, wrapErr(op, ErrLedger, fmt.Sprintf("%s refused as the chain moved on (%v), and reading the chain again failed", what, cause), err)
	}
	i := -1
	for j := range own {
		if own[j].Seq == e.Seq {
			i = j
		}
	}
	if i < 0 {
		return false, wrapErr(op, ErrLedger, fmt.Sprintf("%s refused as the chain moved on, but the chain read again holds no valid entry with that seq (%d entries of the client)",
			what, len(own)), cause)
	}
	s := own[i]
	if s.Prev != e.Prev {
		return false, wrapErr(op, ErrLedger, fmt.Sprintf("%s refused: the ledger holds the client's seq %d already as a %s entry of round %d that does not continue this gate's chain head (prev %s, want %s): a fork; nothing released",
			what, s.Seq, s.Channel, s.Round, short(s.Prev), short(e.Prev)), cause)
	}
	same := s.Channel == e.Channel && s.Round == e.Round
	// A round record comes before the done record of its round, as a
	// calibration or a secure-aggregation record (neither releases
	// anything) before a release.
	earlier := s.Round < e.Round || (s.Channel == ChannelCalibration || s.Channel == ChannelSecAgg) && e.Channel.releases() && s.Round <= e.Round ||
		s.Channel == ChannelRound && e.Channel == ChannelDone && s.Round <= e.Round
	if !same && !earlier {
		want := fmt.Sprintf("a release of %s in round %d", e.Channel, e.Round)
		if !e.Channel.releases() {
			want = fmt.Sprintf("a %s entry of round %d", e.Channel, e.Round)
		}
		why := "of a later round than this append's"
		if s.Round == e.Round {
			why = "of this append's round on another channel"
		}
		return false, wrapErr(op, ErrLedger, fmt.Sprintf("%s refused: the ledger holds the client's seq %d already as its %s entry of round %d, not %s; "+
			"an entry %s is not one this gate adopts (only its own of an earlier round, or a calibration or secagg record before a release); "+
			"nothing released (an earlier life's entry stored after this gate read its chain, or another writer with the client's identity)",
			what, s.Seq, s.Channel, s.Round, want, why), cause)
	}
	if err := g.adopt(own[:i+1]); err != nil {
		return false, wrapErr(op, ErrCorrupt, what+": replaying ledger", err)
	}
	if same {
		return false, errorf(op, ErrAlreadyReleased, fmt.Sprintf("%s of round %d by client %s: seq %d in the ledger is the client's own earlier release of it "+
			"(an earlier life's append, stored after this gate read its chain): accounted once, from the ledger; not released again",
			e.Channel, e.Round, e.Client, s.Seq))
	}
	return true, nil
}

// anchorCopy is a copy of the anchor for a new entry (nil for none).
// Called with mu held.
func (g *Gate) anchorCopy() *Ref {
	if g.anchor == nil {
		return nil
	}
	a := *g.anchor
	return &a
}

// noteCalibration keeps c as the latest calibration and, under a node
// budget held at a measured percentile (nodeQ, Budget.NodeQ), moves the
// node cap to c's distance at that percentile: the next release is
// checked at the ρ of the embeddings it releases, not at a planned one.
func (st *chainState) noteCalibration(nodeQ float64, c *Calibration) {
	st.calib = c
	if nodeQ > 0 {
		for i, x := range c.Q {
			if x == nodeQ {
				st.acct.setNodeRho(c.Rho[i])
			}
		}
	}
}

// NodeSigma is σ0 for the next embedding release under a planned node
// budget (Budget.NodeEpsilon with NodeReleases): the σ that spreads what
// is left of the node budget, at the distance the cap is held at now (the
// latest calibration's ρ at NodeQ, else NodeRho), evenly over the planned
// releases not yet made by the most-released node,
//
//	σ = sqrt(left / (μ*²/ρ² − Σ 1/σ_i²)),
//
// so a run whose ρ never changes releases R times at
// SigmaForEpsilon(NodeEpsilon, δ, ρ, R), and one whose ρ grows spends its
// budget exactly by its last planned release instead of running out early.
// The release it is used for then fits the cap at that ρ. ok is false
// without a planned node budget; the error wraps ErrBudgetExceeded when
// the planned releases are made or nothing is left at the current ρ.
func (g *Gate) NodeSigma() (sigma float64, ok bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.acct.Budget()
	if b.NodeEpsilon <= 0 || b.NodeReleases <= 0 {
		return 0, false, nil
	}
	_, worst, _ := g.acct.WorstNode()
	left := b.NodeReleases - int(worst.Releases)
	room := g.acct.nodeCap - worst.Mu2
	if left <= 0 || !(room > 0) {
		return 0, true, errorf("node sigma", ErrBudgetExceeded, fmt.Sprintf(
			"for client %s channel emb: %d of %d planned releases made; node budget ε=%g at ρ=%g (δ=%g), μ² room %.3g",
			g.cfg.Client, worst.Releases, b.NodeReleases, b.NodeEpsilon, b.NodeRho, g.cfg.Delta, max(room, 0)))
	}
	// A hair above the exact solution, so that rounding in the sum of the
	// increments 1/σ² cannot refuse the release it was chosen for.
	return math.Sqrt(float64(left)/room) * (1 + 1e-9), true, nil
}

// NodeBudget is the node budget as currently held: NodeRho is the
// distance of the latest calibration at NodeQ when NodeQ is set.
func (g *Gate) NodeBudget() Budget {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.acct.Budget()
}

// Entries returns the gate's client's chain in the ledger, verified as
// NewGate verifies it, in ledger order. It only reads; Sync also brings
// the gate up to the chain it returns.
func (g *Gate) Entries(ctx context.Context) ([]Entry, error) {
	_, own, err := g.readChain(ctx)
	if err != nil {
		return nil, wrapErr("entries", ErrLedger, "reading entries", err)
	}
	return own, nil
}

// LastRound is the latest round of the client's releases on channel ch
// that the gate has accounted (false before any): those its chain held
// when read, its own, and those of an earlier life it adopted when the
// ledger refused one of its appends (Release). A release whose append
// failed counts: it is charged and may be stored. It reads no ledger.
func (g *Gate) LastRound(ch Channel) (uint64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var last uint64
	found := false
	for k, n := range g.streams {
		if k.channel == ch && n > 0 {
			last, found = max(last, k.round), true
		}
	}
	return last, found
}

// RhoAt is the metric distance at percentile q (in (0,100]) of the latest recorded
// calibration; false before the first or when q was not measured.
func (g *Gate) RhoAt(q float64) (float64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calib == nil {
		return 0, false
	}
	for i, x := range g.calib.Q {
		if x == q {
			return g.calib.Rho[i], true
		}
	}
	return 0, false
}

// Spending is what a gate's client has spent, at δ = Delta.
type Spending struct {
	Delta float64
	// Channels: ε of each model, grad, margin or descriptor channel on its own.
	Channels map[Channel]float64
	// Client: ε of the composition of all of them (what Budget.Epsilon caps).
	Client float64
	// Rho is the metric distance the node figures are evaluated at.
	Rho float64
	// WorstNode: ε at Rho of the node with the most embedding privacy loss,
	// WorstNodeID its id and WorstNodeReleases its number of releases.
	WorstNode         float64
	WorstNodeID       int64
	WorstNodeReleases uint64
	Seeded            bool // a fixed seed: the figures are not a privacy claim
}

// Spent reports the ε spent so far, with node figures at distance rho.
func (g *Gate) Spent(rho float64) Spending {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := Spending{Delta: g.cfg.Delta, Channels: map[Channel]float64{}, Rho: rho, Seeded: g.cfg.Seed != nil}
	for _, ch := range []Channel{ChannelModel, ChannelGrad, ChannelMargin, ChannelDescriptor} {
		if st := g.acct.Channel(ChannelKey{g.cfg.Job, g.cfg.Client, ch}); st.Releases > 0 {
			s.Channels[ch] = g.acct.Epsilon(st, 1)
		}
	}
	s.Client = g.acct.Epsilon(g.acct.Client(ClientKey{g.cfg.Job, g.cfg.Client}), 1)
	if k, st, ok := g.acct.WorstNode(); ok && !math.IsNaN(rho) {
		s.WorstNode, s.WorstNodeID, s.WorstNodeReleases = g.acct.Epsilon(st, rho), k.ID, st.Releases
	}
	return s
}
