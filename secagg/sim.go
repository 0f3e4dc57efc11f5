package secagg

// A deterministic simulation of the protocol over a faulty network, for
// tests (sim_test.go) and for whoever wires the package into the runtime.
//
// Simulate runs rounds of Client and Server over a simulated network in
// virtual time: every message goes through its wire encoding; the network
// delays each by a random number of ticks (so messages reorder), sometimes
// duplicates one and sometimes holds one far past the deadlines (a
// straggler); parties crash, never to return, at a random stage; and a
// curious server sometimes signs and sends a second list that names one
// survivor a dropout, or a list naming it both. The drivers around the
// state machines are as small as an agent core or an aggregator core can
// be: a client buffers shares that arrive before its keys, waits for its
// neighbours' shares until a deadline, masks, and answers the list; the
// server closes each stage when everyone it waits for has answered or at a
// deadline.
//
// After every delivered message the simulation checks its invariants:
//
//  1. the server never holds a self-mask share and a mask-key share of one
//     party in one round, neither in its state nor on the wire while it
//     follows the protocol;
//  2. a sum the server outputs is exactly the plain sum mod 2^b of the
//     encodings of the parties it lists as survivors, at least t of them,
//     every one of which delivered its masked input before the list;
//  3. a round that closes without a sum says ErrBelowThreshold; a round
//     in which nothing went wrong (no crash, no straggler, no curious
//     list) sums all n parties; and the list leaves out no input it need
//     not: its survivors are exactly simSummable's set, computed apart
//     from Server from what the server accepted (the mutual rule, then
//     the largest subset whose masks t survivors can remove), and the
//     round closes at its list only if that set is below t (a party that
//     crashes while sending its shares costs the inputs masked with it,
//     not the round); every accepted input is a survivor's or in
//     Server.Demoted;
//  4. no client reveals both kinds of share of one party;
//  5. no party's input is computable from what the server received (its
//     masked input, every share revealed to any list, the sums): for that
//     the server would need the party's self-mask seed and, for each of
//     its pairwise masks, one of the two mask keys, each from t shares, or
//     the sum and every other summand.
//
// Everything random comes from a PCG stream seeded by the seed: the
// schedule, the faults, the inputs, and (through ChaCha8 readers) every
// key, seed and polynomial of the parties. HPKE's ephemeral keys come from
// crypto/rand; the trace and the report never depend on them.

import (
	"container/heap"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
)

// SimConfig is one simulation. Zero fields take the defaults given.
type SimConfig struct {
	N      int // parties (≥ 2; ≤ CompleteGraphMax keeps the graph complete)
	T      int // threshold; 0: the smallest valid, N/2 + 1
	Dim    int // coordinates of an update; 0: 4
	Rounds int // rounds, one after the other; 0: 1

	Crash    float64 // chance that a live party crashes in a round; 0: 0.15, < 0: never
	Dup      float64 // chance that a message is delivered twice; 0: 0.1, < 0: never
	Straggle float64 // chance that a message arrives after every deadline; 0: 0.02, < 0: never
	Curious  float64 // chance that the server signs a second list in a round; 0: 0.2, < 0: never
	MaxDelay int     // ticks a message may take, at least 1; 0: 10

	// Trace, if not nil, receives one line per delivered message and per
	// event (crash, deadline, close).
	Trace io.Writer

	// leakyClient makes every client answer a second list as if it were
	// the first, revealing both kinds of share (a client without the
	// guard), out of invariant 4's sight: the tests use it to check that
	// invariant 5 bites.
	leakyClient bool
}

// SimReport counts what a simulation did.
type SimReport struct {
	Seed           uint64
	Rounds         int // rounds started
	Completed      int // rounds whose sum the server output
	BelowThreshold int // rounds closed without a sum (ErrBelowThreshold)
	// NoSum counts the rounds without a sum by why: "keys" (fewer than t
	// advertised), "inputs" (fewer than t masked inputs), "left out" (t or
	// more masked inputs, but fewer than t left once the inputs masked
	// with a mask no t survivors can remove are left out), "reveals"
	// (fewer than t shares at the deadline).
	NoSum map[string]int
	// Demoting counts the lists that left out inputs because they were
	// masked with a mask no t survivors could remove (most often a party's
	// that crashed while sending its shares): before Server.CloseInputs
	// demoted them, each of these rounds closed without a sum.
	Demoting    int
	LeftOut     int      // masked inputs the signed lists left out of the sum
	AllSurvived int      // completed rounds that summed all N parties
	Curious     int      // rounds in which the server signed a second list
	Crashes     [7]int   // crashes by stage (SimStage)
	Refusals    Refusals // the clients' refusals, every round
	Messages    int      // messages delivered, duplicates included
	Duplicates  int      // extra copies the network delivered
	Stragglers  int      // messages held past the deadlines
	Late        int      // messages a state machine refused as late
	Bytes       int      // wire bytes delivered
	Steps       int      // events processed
}

// Crash stages of a party, the index of SimReport.Crashes.
const (
	simBeforeAdvertise = iota + 1 // never advertises
	simAfterAdvertise             // advertises, never shares
	simMidShares                  // sends some of its shares
	simAfterShares                // shares, never sends its masked input
	simAfterInput                 // sends its masked input, never answers
	simMidUnmask                  // answers the list (the answer may be lost) and crashes
)

var simStageNames = [...]string{"", "before advertising", "after advertising", "mid-shares", "after sharing", "after its masked input", "mid-unmasking"}

// SimViolation is an invariant that failed.
type SimViolation struct {
	Seed      uint64
	Step      int
	Time      int64
	Round     uint64
	Invariant string
	Detail    string
}

func (v *SimViolation) Error() string {
	return fmt.Sprintf("secagg sim seed %d step %d t=%d round %d: invariant %q violated: %s", v.Seed, v.Step, v.Time, v.Round, v.Invariant, v.Detail)
}

// Message kinds on the simulated network.
const (
	simAdv    = "adv"
	simKeys   = "keys"
	simShare  = "share"
	simMasked = "masked"
	simList   = "list"
	simReveal = "reveal"
)

type simMsg struct {
	kind     string
	from, to string
	round    uint64
	wire     []byte
	dup      bool
	note     string // what the trace says of it
}

type simTimer int

const (
	timerStart simTimer = iota + 1
	timerShares
	timerKeys
	timerInputs
	timerReveals
	timerNextRound
)

type simEvent struct {
	at    int64
	seq   uint64
	msg   *simMsg
	timer simTimer
	node  string
	round uint64
}

type simQueue []*simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(*simEvent)) }
func (q *simQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// simIdentity is the simulation's keyring: an ed25519 key per party. It
// remembers the signatures it has verified (a broadcast advertisement is
// verified by every party and the server, and the simulation's time goes
// to curve arithmetic), so each distinct signature is checked once.
type simIdentity struct {
	pub map[string]ed25519.PublicKey
	ok  map[[32]byte]bool
}

type simSigner struct{ priv ed25519.PrivateKey }

func (s simSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.priv, msg), nil }

func (k simIdentity) Verify(party string, msg, sig []byte) error {
	pub, ok := k.pub[party]
	if !ok {
		return fmt.Errorf("no key for %q", party)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%d:", len(party), party, len(msg))
	h.Write(msg)
	h.Write(sig)
	var key [32]byte
	h.Sum(key[:0])
	if k.ok[key] {
		return nil
	}
	if !ed25519.Verify(pub, msg, sig) {
		return errors.New("bad signature")
	}
	k.ok[key] = true
	return nil
}

const simAggregator = "agg"

type sim struct {
	seed    uint64
	cfg     SimConfig
	rng     *rand.Rand
	now     int64
	seq     uint64
	q       simQueue
	rep     SimReport
	ids     []string
	ring    simIdentity
	signers map[string]Signer
	dead    map[string]bool
	rounds  map[uint64]*simRound
	order   []uint64 // rounds in start order
	viol    *SimViolation
	delay   int
}

// simClient is one party's driver in one round.
type simClient struct {
	id       string
	c        *Client
	crashAt  int
	keys     bool            // keys received and shares sent
	sentTo   map[string]bool // neighbours it shared with
	got      map[string]bool // neighbours whose shares it accepted
	early    []SealedShare   // shares before its keys
	masked   bool
	answered int // lists answered
	self     map[string]bool
	mask     map[string]bool // parties whose shares of each kind it revealed
}

type simRound struct {
	r       uint64
	cfg     Config
	enc     Encoding
	server  *Server
	stage   serverStage
	clients map[string]*simClient
	inputs  map[string][]uint32

	ads      map[string]bool // accepted advertisements
	keySet   []string        // parties in the keys broadcast
	got      map[string]bool // accepted masked inputs
	list     *SignedList
	curious  bool
	victim   string
	faults   bool // a crash, straggler or curious list touched the round
	closed   bool
	sum      []uint32
	survivor map[string]bool

	// The server's view on the wire.
	vMasked map[string]MaskedInput
	vSelf   map[string]map[string]bool // party → revealers of a self-mask share
	vMask   map[string]map[string]bool // party → revealers of a mask-key share
}

// Simulate runs one seeded simulation. It returns the report and, if an
// invariant failed, a *SimViolation (the report then counts up to the
// failing step). The same seed and configuration give the same report and
// trace on every machine.
func Simulate(seed uint64, cfg SimConfig) (SimReport, error) {
	if cfg.N < 2 || cfg.N > CompleteGraphMax {
		return SimReport{}, fmt.Errorf("secagg sim: N = %d, want 2..%d", cfg.N, CompleteGraphMax)
	}
	if cfg.T == 0 {
		cfg.T = cfg.N/2 + 1
	}
	if cfg.T < 2 || cfg.T > cfg.N || 2*cfg.T <= cfg.N {
		return SimReport{}, fmt.Errorf("secagg sim: T = %d for N = %d: want 2T > N, 2 ≤ T ≤ N", cfg.T, cfg.N)
	}
	def := func(p *float64, d float64) {
		switch {
		case *p == 0:
			*p = d
		case *p < 0:
			*p = 0
		}
	}
	def(&cfg.Crash, 0.15)
	def(&cfg.Dup, 0.1)
	def(&cfg.Straggle, 0.02)
	def(&cfg.Curious, 0.2)
	if cfg.Dim == 0 {
		cfg.Dim = 4
	}
	if cfg.Rounds == 0 {
		cfg.Rounds = 1
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 10
	}
	s := &sim{
		seed: seed, cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x5ecA66)),
		signers: map[string]Signer{}, dead: map[string]bool{}, rounds: map[uint64]*simRound{},
		ring: simIdentity{pub: map[string]ed25519.PublicKey{}, ok: map[[32]byte]bool{}}, delay: cfg.MaxDelay,
	}
	s.rep.Seed = seed
	s.rep.NoSum = map[string]int{}
	for i := range cfg.N {
		s.ids = append(s.ids, fmt.Sprintf("bank-%02d", i))
	}
	for _, id := range append([]string{simAggregator}, s.ids...) {
		var k [ed25519.SeedSize]byte
		s.fill(k[:])
		priv := ed25519.NewKeyFromSeed(k[:])
		s.ring.pub[id] = priv.Public().(ed25519.PublicKey)
		s.signers[id] = simSigner{priv: priv}
	}
	s.tracef("# secagg sim seed %d: n %d, t %d, dim %d, rounds %d, crash %.2f, dup %.2f, straggle %.2f, curious %.2f, delay 1..%d",
		seed, cfg.N, cfg.T, cfg.Dim, cfg.Rounds, cfg.Crash, cfg.Dup, cfg.Straggle, cfg.Curious, cfg.MaxDelay)
	if err := s.startRound(1); err != nil {
		return s.rep, err
	}
	for s.q.Len() > 0 && s.viol == nil {
		e := heap.Pop(&s.q).(*simEvent)
		s.now = e.at
		s.rep.Steps++
		if e.msg != nil {
			s.deliver(e.msg)
		} else {
			s.fire(e)
		}
		if s.viol == nil {
			for _, r := range s.order {
				s.check(s.rounds[r])
			}
		}
	}
	for _, r := range s.order {
		for _, id := range s.ids {
			if c := s.rounds[r].clients[id]; c != nil {
				ref := c.c.Refusals()
				for k, n := range ref {
					s.rep.Refusals[k] += n
				}
			}
		}
	}
	if s.viol != nil {
		s.tracef("VIOLATION %s", s.viol.Error())
		return s.rep, s.viol
	}
	s.tracef("# done: %d rounds, %d with a sum (%d of all n), %d below t %v, %d curious; %d messages (%d duplicates, %d stragglers, %d late), %d refusals %v",
		s.rep.Rounds, s.rep.Completed, s.rep.AllSurvived, s.rep.BelowThreshold, s.rep.NoSum, s.rep.Curious, s.rep.Messages,
		s.rep.Duplicates, s.rep.Stragglers, s.rep.Late, s.rep.Refusals.Total(), s.rep.Refusals)
	return s.rep, nil
}

func (s *sim) fill(p []byte) {
	for i := range p {
		p[i] = byte(s.rng.Uint32())
	}
}

// reader is a ChaCha8 stream seeded from the PCG: a party's randomness.
func (s *sim) reader() io.Reader {
	var k [32]byte
	s.fill(k[:])
	return rand.NewChaCha8(k)
}

func (s *sim) tracef(format string, args ...any) {
	if s.cfg.Trace != nil {
		fmt.Fprintf(s.cfg.Trace, format+"\n", args...)
	}
}

// event writes one trace line at the current time.
func (s *sim) event(round uint64, format string, args ...any) {
	if s.cfg.Trace != nil {
		fmt.Fprintf(s.cfg.Trace, "%5d r%d %s\n", s.now, round, fmt.Sprintf(format, args...))
	}
}

func (s *sim) violate(round uint64, inv, format string, args ...any) {
	if s.viol == nil {
		s.viol = &SimViolation{Seed: s.seed, Step: s.rep.Steps, Time: s.now, Round: round, Invariant: inv, Detail: fmt.Sprintf(format, args...)}
	}
}

func (s *sim) push(e *simEvent) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.q, e)
}

func (s *sim) after(ticks int64, timer simTimer, node string, round uint64) {
	s.push(&simEvent{at: s.now + ticks, timer: timer, node: node, round: round})
}

// send puts a message on the network: a random delay, sometimes a
// straggler's, sometimes a second copy.
func (s *sim) send(m *simMsg) {
	d := int64(1 + s.rng.IntN(s.delay))
	if s.rng.Float64() < s.cfg.Straggle {
		d += int64(10*s.delay + s.rng.IntN(10*s.delay))
		s.rep.Stragglers++
		if r := s.rounds[m.round]; r != nil {
			r.faults = true
		}
	}
	s.push(&simEvent{at: s.now + d, msg: m})
	if s.rng.Float64() < s.cfg.Dup {
		c := *m
		c.dup = true
		s.rep.Duplicates++
		s.push(&simEvent{at: s.now + int64(1+s.rng.IntN(2*s.delay)), msg: &c})
	}
}

func (s *sim) startRound(r uint64) error {
	n := s.cfg.N
	enc, err := NewEncoding(1, 100, n, s.cfg.Dim, 0)
	if err != nil {
		return err
	}
	cfg := Config{Job: "sim", Round: r, Aggregator: simAggregator, Parties: s.ids, Threshold: s.cfg.T,
		VectorLen: enc.Len(), Bits: enc.Bits}
	s.fill(cfg.GraphSeed[:])
	srv, err := NewServer(cfg, s.signers[simAggregator], s.ring)
	if err != nil {
		return err
	}
	rd := &simRound{r: r, cfg: cfg, enc: enc, server: srv, clients: map[string]*simClient{}, inputs: map[string][]uint32{},
		ads: map[string]bool{}, got: map[string]bool{}, survivor: map[string]bool{},
		vMasked: map[string]MaskedInput{}, vSelf: map[string]map[string]bool{}, vMask: map[string]map[string]bool{}}
	s.rounds[r] = rd
	s.order = append(s.order, r)
	s.rep.Rounds++
	var plan []string
	for _, id := range s.ids {
		x := make([]float32, s.cfg.Dim)
		for j := range x {
			x[j] = float32(s.rng.Float64() - 0.5)
		}
		w := uint64(1 + s.rng.IntN(100))
		if rd.inputs[id], err = enc.Encode(x, w, s.reader()); err != nil {
			return err
		}
		if s.dead[id] {
			plan = append(plan, id+" down")
			rd.faults = true
			continue
		}
		c, err := NewClient(cfg, id, s.signers[id], s.ring, s.reader())
		if err != nil {
			return err
		}
		sc := &simClient{id: id, c: c, sentTo: map[string]bool{}, got: map[string]bool{}, self: map[string]bool{}, mask: map[string]bool{}}
		if s.rng.Float64() < s.cfg.Crash {
			sc.crashAt = 1 + s.rng.IntN(simMidUnmask)
			rd.faults = true
			plan = append(plan, fmt.Sprintf("%s crashes %s", id, simStageNames[sc.crashAt]))
		}
		rd.clients[id] = sc
		s.after(int64(s.rng.IntN(s.delay)), timerStart, id, r)
	}
	if s.rng.Float64() < s.cfg.Curious {
		rd.curious = true
	}
	s.event(r, "start  n %d t %d b %d, %s; curious %v", n, cfg.Threshold, cfg.Bits, strings.Join(orNone(plan), ", "), rd.curious)
	// Keys close when every live party has advertised or at the deadline.
	s.after(int64(3*s.delay), timerKeys, simAggregator, r)
	return nil
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"no crash planned"}
	}
	return s
}

func (s *sim) crash(rd *simRound, c *simClient, stage int) {
	s.dead[c.id] = true
	// The crash hits every open round, not only the one whose message
	// triggered it (a late list of the last round can arrive in the next).
	for _, r := range s.order {
		if o := s.rounds[r]; !o.closed {
			o.faults = true
		}
	}
	s.rep.Crashes[stage]++
	s.event(rd.r, "crash  %s %s", c.id, simStageNames[stage])
}

// alive is the party's driver if it is up.
func (s *sim) alive(rd *simRound, id string) *simClient {
	c := rd.clients[id]
	if c == nil || s.dead[id] {
		return nil
	}
	return c
}

func (s *sim) fire(e *simEvent) {
	rd := s.rounds[e.round]
	switch e.timer {
	case timerStart:
		c := s.alive(rd, e.node)
		if c == nil {
			return
		}
		if c.crashAt == simBeforeAdvertise {
			s.crash(rd, c, simBeforeAdvertise)
			return
		}
		ad, err := c.c.Advertise()
		if err != nil {
			s.violate(rd.r, "driver", "%s advertise: %v", c.id, err)
			return
		}
		s.event(rd.r, "step   %s advertises", c.id)
		s.send(&simMsg{kind: simAdv, from: c.id, to: simAggregator, round: rd.r, wire: ad.Encode()})
		if c.crashAt == simAfterAdvertise {
			s.crash(rd, c, simAfterAdvertise)
		}
	case timerShares:
		if c := s.alive(rd, e.node); c != nil && !c.masked {
			s.event(rd.r, "timer  %s share deadline: %d of %d neighbours' shares", c.id, len(c.got), len(c.sentTo))
			s.mask(rd, c)
		}
	case timerKeys:
		if rd.stage == serverKeys {
			s.event(rd.r, "timer  agg keys deadline: %d of %d advertised", len(rd.ads), s.cfg.N)
			s.closeKeys(rd)
		}
	case timerInputs:
		if rd.stage == serverInputs {
			s.event(rd.r, "timer  agg inputs deadline: %d of %d masked inputs", len(rd.got), len(rd.keySet))
			s.closeInputs(rd)
		}
	case timerReveals:
		if rd.stage == serverUnmask {
			s.event(rd.r, "timer  agg reveal deadline")
			s.result(rd)
		}
	case timerNextRound:
		if err := s.startRound(e.round + 1); err != nil {
			s.violate(e.round+1, "driver", "start round: %v", err)
		}
	}
}

func (s *sim) deliver(m *simMsg) {
	rd := s.rounds[m.round]
	s.rep.Messages++
	s.rep.Bytes += len(m.wire)
	dup := ""
	if m.dup {
		dup = " (dup)"
	}
	head := fmt.Sprintf("recv   %s->%s %s%s", m.from, m.to, m.kind, dup)
	if m.note != "" {
		head += " " + m.note
	}
	if m.to == simAggregator {
		s.serverRecv(rd, m, head)
		return
	}
	c := s.alive(rd, m.to)
	if c == nil {
		s.event(rd.r, "%s: %s is down", head, m.to)
		return
	}
	s.clientRecv(rd, c, m, head)
}

// outcome names a state machine's answer for the trace, counting lateness.
func (s *sim) outcome(err error) string {
	var re *RefusalError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &re):
		return "refused: " + re.Reason.String()
	case errors.Is(err, ErrLate):
		s.rep.Late++
		return "late"
	case errors.Is(err, ErrBelowThreshold):
		return "below t"
	case errors.Is(err, ErrState):
		return "out of order"
	case errors.Is(err, ErrMismatch):
		return "mismatch"
	}
	return "error"
}

func (s *sim) serverRecv(rd *simRound, m *simMsg, head string) {
	switch m.kind {
	case simAdv:
		ad, err := DecodeSignedAdvertisement(m.wire)
		if err != nil {
			s.violate(rd.r, "wire", "advertisement from %s: %v", m.from, err)
			return
		}
		err = rd.server.AddAdvertisement(ad)
		s.event(rd.r, "%s: %s", head, s.outcome(err))
		switch {
		case err == nil:
			rd.ads[ad.Party] = true
			if rd.stage == serverKeys && len(rd.ads) == s.cfg.N {
				s.closeKeys(rd)
			}
		case !errors.Is(err, ErrLate):
			s.violate(rd.r, "driver", "server refused %s's advertisement: %v", m.from, err)
		}
	case simMasked:
		mi, err := DecodeMaskedInput(m.wire)
		if err != nil {
			s.violate(rd.r, "wire", "masked input from %s: %v", m.from, err)
			return
		}
		if _, ok := rd.vMasked[mi.Party]; !ok {
			rd.vMasked[mi.Party] = mi
		}
		err = rd.server.AddMaskedInput(mi)
		s.event(rd.r, "%s: %s", head, s.outcome(err))
		switch {
		case err == nil:
			rd.got[mi.Party] = true
			if rd.stage == serverInputs && len(rd.got) == len(rd.keySet) {
				s.closeInputs(rd)
			}
		case !errors.Is(err, ErrLate):
			s.violate(rd.r, "driver", "server refused %s's masked input: %v", m.from, err)
		}
	case simReveal:
		rv, err := DecodeReveal(m.wire)
		if err != nil {
			s.violate(rd.r, "wire", "reveal from %s: %v", m.from, err)
			return
		}
		for _, p := range rv.Self {
			addView(rd.vSelf, p.Party, rv.From)
		}
		for _, p := range rv.Mask {
			addView(rd.vMask, p.Party, rv.From)
		}
		err = rd.server.AddReveal(rv)
		s.event(rd.r, "%s: %s", head, s.outcome(err))
		switch {
		case err == nil:
			if rd.stage == serverUnmask && rd.server.Ready() {
				s.result(rd)
			}
		case errors.Is(err, ErrLate):
		case rd.curious && errors.Is(err, ErrMismatch):
			// An answer to the curious list: not what the list asks for.
		default:
			s.violate(rd.r, "driver", "server refused %s's reveal: %v", m.from, err)
		}
	default:
		s.violate(rd.r, "driver", "server got a %s message", m.kind)
	}
}

func addView(v map[string]map[string]bool, party, from string) {
	if v[party] == nil {
		v[party] = map[string]bool{}
	}
	v[party][from] = true
}

func (s *sim) closeKeys(rd *simRound) {
	ads, err := rd.server.Keys()
	if err != nil {
		s.closeFailed(rd, "keys", err)
		return
	}
	rd.stage = serverInputs
	var e enc
	e.tag("gfsim:keys")
	e.u32(uint32(len(ads)))
	for _, ad := range ads {
		rd.keySet = append(rd.keySet, ad.Party)
		e.blob(ad.Encode())
	}
	s.event(rd.r, "close  agg keys: %d advertised, broadcast to them", len(ads))
	for _, id := range rd.keySet {
		s.send(&simMsg{kind: simKeys, from: simAggregator, to: id, round: rd.r, wire: e.b, note: fmt.Sprintf("%d ads", len(ads))})
	}
	// Keys reach a party within one delay, its shares its neighbours
	// within another, its share deadline is two delays after its keys, its
	// masked input takes one more.
	s.after(int64(4*s.delay+2), timerInputs, simAggregator, rd.r)
}

func decodeSimKeys(b []byte) ([]SignedAdvertisement, error) {
	d := dec{b: b}
	d.tag("gfsim:keys")
	n := d.count(maxParties, "keys")
	var out []SignedAdvertisement
	for i := 0; i < n && d.err == nil; i++ {
		raw := d.blob("advertisement")
		if d.err != nil {
			break
		}
		ad, err := DecodeSignedAdvertisement(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, ad)
	}
	if err := d.done("keys"); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *sim) closeInputs(rd *simRound) {
	l, err := rd.server.CloseInputs()
	peers := map[string][]string{}
	for p := range rd.got {
		peers[p] = rd.vMasked[p].Peers
	}
	summable, forced := simSummable(rd.cfg.Parties, rd.cfg.Threshold, peers)
	if err != nil {
		if len(summable) >= rd.cfg.Threshold {
			s.violate(rd.r, "the list leaves out only what it must", "%d masked inputs of which a list must sum %d (%v), t = %d, yet no list: %v",
				len(rd.got), len(summable), sortedNames(summable), rd.cfg.Threshold, err)
			return
		}
		s.closeFailed(rd, "inputs", err)
		return
	}
	rd.stage = serverUnmask
	rd.list = &l
	for _, p := range l.Survivors {
		rd.survivor[p] = true
	}
	demoted := rd.server.Demoted()
	if !s.checkList(rd, l, demoted, summable) {
		return
	}
	left := ""
	if len(demoted) > 0 {
		left = fmt.Sprintf(" left out %v", demoted)
		s.rep.LeftOut += len(demoted)
	}
	if forced > 0 {
		s.rep.Demoting++
	}
	s.event(rd.r, "close  agg list: survivors %v dropouts %v%s", l.Survivors, l.Dropouts, left)
	// The list goes to every party that got the keys: a dropout still up
	// learns that it is one.
	for _, id := range rd.keySet {
		s.send(&simMsg{kind: simList, from: simAggregator, to: id, round: rd.r, wire: l.Encode(), note: "#1"})
	}
	if rd.curious {
		rd.faults = true
		s.rep.Curious++
		rd.victim = l.Survivors[s.rng.IntN(len(l.Survivors))]
		second := List{Job: l.Job, Round: l.Round, ConfigDigest: l.ConfigDigest}
		what := ""
		if s.rng.IntN(2) == 0 {
			// Asks again, with the victim a dropout.
			for _, p := range l.Survivors {
				if p != rd.victim {
					second.Survivors = append(second.Survivors, p)
				}
			}
			second.Dropouts = append(append([]string(nil), l.Dropouts...), rd.victim)
			sort.Strings(second.Dropouts)
			what = rd.victim + " a dropout"
		} else {
			second.Survivors = l.Survivors
			second.Dropouts = append(append([]string(nil), l.Dropouts...), rd.victim)
			sort.Strings(second.Dropouts)
			what = rd.victim + " survivor and dropout"
		}
		sig, err := s.signers[simAggregator].Sign(second.Bytes())
		if err != nil {
			s.violate(rd.r, "driver", "sign: %v", err)
			return
		}
		sl := SignedList{List: second, Sig: sig}
		s.event(rd.r, "curious agg signs a second list: %s", what)
		for _, id := range rd.keySet {
			s.send(&simMsg{kind: simList, from: simAggregator, to: id, round: rd.r, wire: sl.Encode(), note: "#2"})
		}
	}
	s.after(int64(2*s.delay+2), timerReveals, simAggregator, rd.r)
}

// checkList checks invariant 3 on a signed list: its survivors are
// simSummable's set, and every accepted input is either summed or named by
// Server.Demoted.
func (s *sim) checkList(rd *simRound, l SignedList, demoted []string, want map[string]bool) bool {
	const inv = "the list leaves out only what it must"
	if fmt.Sprint(l.Survivors) != fmt.Sprint(sortedNames(want)) {
		s.violate(rd.r, inv, "survivors %v, but the list must sum %v", l.Survivors, sortedNames(want))
		return false
	}
	out := map[string]bool{}
	for _, p := range demoted {
		if rd.survivor[p] || !rd.got[p] {
			s.violate(rd.r, inv, "%s is named demoted but is a survivor or sent no accepted input", p)
			return false
		}
		out[p] = true
	}
	for p := range rd.got {
		if !rd.survivor[p] && !out[p] {
			s.violate(rd.r, inv, "%s's input was accepted, is left out of the sum, and Demoted does not say so", p)
			return false
		}
	}
	return true
}

// simSummable is invariant 3's expectation, worked out apart from
// Server: of the parties whose masked inputs the server accepted (each with
// the peers it masked with), the set a list must sum, and how many the
// fixed point had to remove beyond the mutual rule. The mutual rule is
// CloseInputs' one choice, replayed as documented: in cohort order, a
// party that does not list back one that lists it goes. The rest is the
// largest subset that a list can sum, removed all at once in each pass
// until none goes (Server removes one at a time; the fixed point is the
// same): a party whose self mask fewer than t of the set hold (itself
// included), and every member that masked with a non-member fewer than t
// members masked with.
func simSummable(parties []string, t int, peers map[string][]string) (map[string]bool, int) {
	in := map[string]bool{}
	masked := map[string]map[string]bool{}
	for p, ps := range peers {
		in[p] = true
		masked[p] = map[string]bool{}
		for _, q := range ps {
			masked[p][q] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, u := range parties {
			for _, v := range parties {
				if in[u] && in[v] && masked[u][v] && !masked[v][u] {
					delete(in, v)
					changed = true
				}
			}
		}
	}
	forced := 0
	for {
		var out []string
		with := map[string][]string{} // non-member → the members that masked with it
		for p := range in {
			held := 1
			for q := range in {
				if q != p && masked[q][p] {
					held++
				}
			}
			if held < t {
				out = append(out, p)
			}
			for q := range masked[p] {
				if !in[q] {
					with[q] = append(with[q], p)
				}
			}
		}
		for _, ws := range with {
			if len(ws) < t {
				out = append(out, ws...)
			}
		}
		if len(out) == 0 {
			return in, forced
		}
		for _, p := range out {
			if in[p] {
				delete(in, p)
				forced++
			}
		}
	}
}

func sortedNames(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// closeFailed ends a round without a sum: it must say ErrBelowThreshold.
func (s *sim) closeFailed(rd *simRound, stage string, err error) {
	if !errors.Is(err, ErrBelowThreshold) {
		s.violate(rd.r, "below t says so", "round closed at %s without ErrBelowThreshold: %v", stage, err)
		return
	}
	if !rd.faults {
		s.violate(rd.r, "no fault, no failure", "a round without crash, straggler or curious list closed without a sum: %v", err)
		return
	}
	s.rep.BelowThreshold++
	why := stage
	switch {
	case stage == "inputs" && len(rd.got) >= rd.cfg.Threshold:
		why = "left out"
	case stage == "unmasking":
		why = "reveals"
	}
	s.rep.NoSum[why]++
	s.event(rd.r, "close  agg no sum at %s: %v", stage, err)
	s.endRound(rd)
}

func (s *sim) result(rd *simRound) {
	sum, err := rd.server.Result()
	if err != nil {
		s.closeFailed(rd, "unmasking", err)
		return
	}
	surv := rd.server.Survivors()
	if len(surv) < rd.cfg.Threshold {
		s.violate(rd.r, "sum is the survivors'", "a sum of %d survivors, t = %d", len(surv), rd.cfg.Threshold)
		return
	}
	want := make([]uint32, rd.cfg.VectorLen)
	wm := wordMask(rd.cfg.Bits)
	for _, p := range surv {
		if !rd.got[p] {
			s.violate(rd.r, "sum is the survivors'", "survivor %s whose masked input the server never accepted", p)
			return
		}
		for j, v := range rd.inputs[p] {
			want[j] = (want[j] + v) & wm
		}
	}
	for j := range want {
		if sum[j] != want[j] {
			s.violate(rd.r, "sum is the survivors'", "word %d: unmasked %d, the survivors' plain sum %d", j, sum[j], want[j])
			return
		}
	}
	if _, err := rd.enc.DecodeSum(sum, len(surv)); err != nil {
		s.violate(rd.r, "sum is the survivors'", "decode: %v", err)
		return
	}
	if !rd.faults && len(surv) != s.cfg.N {
		s.violate(rd.r, "no fault, no failure", "a round without faults summed %d of %d", len(surv), s.cfg.N)
		return
	}
	rd.sum = sum
	s.rep.Completed++
	if len(surv) == s.cfg.N {
		s.rep.AllSurvived++
	}
	h := sha256.New()
	for _, v := range sum {
		fmt.Fprintf(h, "%d,", v)
	}
	s.event(rd.r, "close  agg sum of %d = the survivors' plain sum (%x)", len(surv), h.Sum(nil)[:6])
	s.endRound(rd)
}

func (s *sim) endRound(rd *simRound) {
	rd.closed, rd.stage = true, serverClosed
	if int(rd.r) < s.cfg.Rounds {
		s.after(1, timerNextRound, simAggregator, rd.r)
	}
}

func (s *sim) clientRecv(rd *simRound, c *simClient, m *simMsg, head string) {
	switch m.kind {
	case simKeys:
		ads, err := decodeSimKeys(m.wire)
		if err != nil {
			s.violate(rd.r, "wire", "keys to %s: %v", c.id, err)
			return
		}
		if c.keys {
			s.event(rd.r, "%s: already shared", head)
			return
		}
		for _, ad := range ads {
			if err := c.c.AcceptKey(ad); err != nil {
				s.violate(rd.r, "driver", "%s refused %s's keys: %v", c.id, ad.Party, err)
				return
			}
		}
		shares, err := c.c.ShareKeys()
		if err != nil {
			s.event(rd.r, "%s: cannot share: %s", head, s.outcome(err))
			if !errors.Is(err, ErrBelowThreshold) {
				s.violate(rd.r, "driver", "%s share keys: %v", c.id, err)
			}
			return
		}
		c.keys = true
		send := len(shares)
		if c.crashAt == simMidShares {
			send = s.rng.IntN(len(shares))
		}
		s.event(rd.r, "%s: ok, shares to %d of %d neighbours", head, send, len(shares))
		for _, sh := range shares {
			c.sentTo[sh.To] = true
		}
		for _, sh := range shares[:send] {
			s.send(&simMsg{kind: simShare, from: c.id, to: sh.To, round: rd.r, wire: sh.Encode()})
		}
		if c.crashAt == simMidShares || c.crashAt == simAfterShares {
			s.crash(rd, c, c.crashAt)
			return
		}
		early := c.early
		c.early = nil
		for _, sh := range early {
			s.acceptShare(rd, c, sh, "early share from "+sh.From)
		}
		if !c.masked {
			if len(c.got) == len(c.sentTo) {
				s.mask(rd, c)
			} else {
				s.after(int64(2*s.delay), timerShares, c.id, rd.r)
			}
		}
	case simShare:
		sh, err := DecodeSealedShare(m.wire)
		if err != nil {
			s.violate(rd.r, "wire", "share to %s: %v", c.id, err)
			return
		}
		if !c.keys {
			c.early = append(c.early, sh)
			s.event(rd.r, "%s: before its keys, held", head)
			return
		}
		s.acceptShare(rd, c, sh, head)
		if !c.masked && len(c.got) == len(c.sentTo) {
			s.mask(rd, c)
		}
	case simList:
		l, err := DecodeSignedList(m.wire)
		if err != nil {
			s.violate(rd.r, "wire", "list to %s: %v", c.id, err)
			return
		}
		if !c.masked {
			s.event(rd.r, "%s: no masked input sent, ignored", head)
			return
		}
		rv, err := c.c.Unmask(l)
		leaked := false
		if err != nil && s.cfg.leakyClient && c.answered > 0 {
			rv, err, leaked = c.leak(l), nil, true
		}
		if err != nil {
			s.event(rd.r, "%s: %s", head, s.outcome(err))
			var re *RefusalError
			if !errors.As(err, &re) {
				s.violate(rd.r, "driver", "%s unmask: %v", c.id, err)
			}
			return
		}
		c.answered++
		if !leaked { // a leak goes unrecorded: invariant 5 alone must catch it
			for _, p := range rv.Self {
				c.self[p.Party] = true
			}
			for _, p := range rv.Mask {
				c.mask[p.Party] = true
			}
			for _, p := range rd.cfg.Parties {
				if c.self[p] && c.mask[p] {
					s.violate(rd.r, "a client reveals one kind", "%s revealed both kinds of share of %s", c.id, p)
					return
				}
			}
		}
		lost := c.crashAt == simMidUnmask && s.rng.IntN(2) == 0
		s.event(rd.r, "%s: reveals %d self-mask and %d mask-key shares%s", head, len(rv.Self), len(rv.Mask), map[bool]string{true: ", lost in the crash"}[lost])
		if !lost {
			s.send(&simMsg{kind: simReveal, from: c.id, to: simAggregator, round: rd.r, wire: rv.Encode(),
				note: fmt.Sprintf("%d+%d", len(rv.Self), len(rv.Mask))})
		}
		if c.crashAt == simMidUnmask {
			s.crash(rd, c, simMidUnmask)
		}
	default:
		s.violate(rd.r, "driver", "%s got a %s message", c.id, m.kind)
	}
}

func (s *sim) acceptShare(rd *simRound, c *simClient, sh SealedShare, head string) {
	err := c.c.AcceptShare(sh)
	s.event(rd.r, "%s: %s", head, s.outcome(err))
	switch {
	case err == nil:
		c.got[sh.From] = true
	case errors.Is(err, ErrLate):
	default:
		s.violate(rd.r, "driver", "%s refused %s's share: %v", c.id, sh.From, err)
	}
}

func (s *sim) mask(rd *simRound, c *simClient) {
	mi, err := c.c.MaskInput(rd.inputs[c.id])
	if err != nil {
		s.event(rd.r, "step   %s cannot mask: %s", c.id, s.outcome(err))
		if !errors.Is(err, ErrBelowThreshold) {
			s.violate(rd.r, "driver", "%s mask: %v", c.id, err)
		}
		return
	}
	c.masked = true
	s.event(rd.r, "step   %s masks with %d peers", c.id, len(mi.Peers))
	s.send(&simMsg{kind: simMasked, from: c.id, to: simAggregator, round: rd.r, wire: mi.Encode(), note: fmt.Sprintf("%d peers", len(mi.Peers))})
	if c.crashAt == simAfterInput {
		s.crash(rd, c, simAfterInput)
	}
}

// leak answers a list from the client's shares with no guard at all (the
// leakyClient fault).
func (c *simClient) leak(l SignedList) Reveal {
	k := c.c
	r := Reveal{Job: k.cfg.Job, Round: k.cfg.Round, From: k.self}
	for _, p := range l.Survivors {
		j := k.cfg.Index(p)
		if j == k.idx {
			r.Self = append(r.Self, PartyShare{Party: p, Y: k.ownSelf})
		} else if nb := k.neighbour[j]; nb != nil && nb.share != nil {
			r.Self = append(r.Self, PartyShare{Party: p, Y: nb.share.Self})
		}
	}
	for _, p := range l.Dropouts {
		if nb := k.neighbour[k.cfg.Index(p)]; nb != nil && nb.share != nil {
			r.Mask = append(r.Mask, PartyShare{Party: p, Y: nb.share.Mask})
		}
	}
	return r
}

// check runs the invariants that hold at every step.
func (s *sim) check(rd *simRound) {
	// 1. The server's state never holds both kinds for one party.
	for p := range rd.server.selfShare {
		if _, ok := rd.server.maskShare[p]; ok {
			s.violate(rd.r, "server holds one kind", "server state holds both kinds of share of %s", rd.cfg.Parties[p])
			return
		}
	}
	// On the wire too, while the server follows the protocol.
	if !rd.curious {
		for p := range rd.vSelf {
			if len(rd.vMask[p]) > 0 {
				s.violate(rd.r, "server holds one kind", "server received both kinds of share of %s", p)
				return
			}
		}
	}
	// 5. No input computable from the server's view.
	t := rd.cfg.Threshold
	known := map[string]bool{}
	for _, p := range rd.cfg.Parties {
		mi, ok := rd.vMasked[p]
		if !ok || len(rd.vSelf[p]) < t {
			continue
		}
		open := true
		if len(rd.vMask[p]) < t {
			for _, q := range mi.Peers {
				if len(rd.vMask[q]) < t {
					open = false
					break
				}
			}
		}
		if open {
			known[p] = true
		}
	}
	if rd.sum != nil {
		var hidden []string
		for _, p := range rd.server.Survivors() {
			if !known[p] {
				hidden = append(hidden, p)
			}
		}
		if len(hidden) == 1 {
			known[hidden[0]] = true
		}
	}
	for _, p := range rd.cfg.Parties {
		if known[p] {
			s.violate(rd.r, "no input computable", "the server can unmask %s's input alone (%d self-mask shares, %d mask-key shares, t = %d)",
				p, len(rd.vSelf[p]), len(rd.vMask[p]), t)
			return
		}
	}
}
