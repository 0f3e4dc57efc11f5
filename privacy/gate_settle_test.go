package privacy

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fuzzSigner signs as client with fuzzKeys.
type fuzzSigner string

func (s fuzzSigner) SignEntry(d []byte) ([]byte, error) { return fuzzKeys{}.sign(string(s), d), nil }

// settleLedgers are the ledgers the settle tests run on, each fresh.
var settleLedgers = []struct {
	name string
	open func(t *testing.T) Ledger
}{
	{"mem", func(*testing.T) Ledger { return NewMemLedger() }},
	{"file", func(t *testing.T) Ledger {
		l, err := OpenFileLedger(filepath.Join(t.TempDir(), "ledger.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}},
}

func settleModel(round uint64) Request {
	return Request{Channel: ChannelModel, Round: round, Flat: []float32{3, 4}, Dim: 2, Sigma: 2, Clip: 1}
}

func settleEmb(round uint64) Request {
	return Request{Channel: ChannelEmb, Round: round, Rows: [][]float32{{1, 0}, {0, 1}}, NodeIDs: []int64{7, 8}, Sigma: 1}
}

var settleCalib = Calibration{K: 1, N: 2, Q: []float64{90}, Rho: []float64{0.3}}

// settleConfig is bank-3's gate configuration: signed entries, a keyring,
// a fixed seed (so that noise stream indices matter) and a client budget
// that every release of the tests fits in.
func settleConfig() Config {
	seed := uint64(11)
	return Config{Job: "job-1", Client: "bank-3", Delta: 1e-5, Budget: Budget{Epsilon: 1e6}, Seed: &seed,
		Signer: fuzzSigner("bank-3"), Keys: fuzzKeys{}}
}

// settleTightConfig is settleConfig with a client budget of μ² = 2.5:
// model releases (ρ 2, σ 2) of μ² 1 each, so two fit and a third does not
// (embeddings are not charged to it).
func settleTightConfig() Config {
	cfg := settleConfig()
	cfg.Budget.Epsilon = RDP.Epsilon(2.5, cfg.Delta)
	return cfg
}

// settleChain gives the gate of an earlier life of bank-3 the chain seq 1
// (model, round 1), seq 2 (emb, round 1), seq 3 (calibration, round 1).
func settleChain(t *testing.T, cfg Config, l Ledger) *Gate {
	t.Helper()
	ctx := context.Background()
	old := newTestGate(t, cfg, l)
	for _, req := range []Request{settleModel(1), settleEmb(1)} {
		if _, err := old.Release(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.RecordCalibration(ctx, 1, settleCalib); err != nil {
		t.Fatal(err)
	}
	return old
}

// settleStart gives an earlier life of bank-3 the chain of settleChain and
// starts the restarted life's gate on it: the gate has read the chain at
// seq 3.
func settleStart(t *testing.T, cfg Config, l Ledger) (old, g *Gate) {
	t.Helper()
	old = settleChain(t, cfg, l)
	g = newTestGate(t, cfg, l)
	if g.seq != 3 {
		t.Fatalf("the restarted gate read the chain at seq %d, want 3", g.seq)
	}
	return old, g
}

// signedEntry is a model entry of round 2 at seq 4 under bank-3, linked to
// prev and signed by signer.
func signedEntry(t *testing.T, prev, signer string) Entry {
	t.Helper()
	e := Entry{Seq: 4, Job: "job-1", Client: "bank-3", Channel: ChannelModel, Round: 2, Count: 1, Dim: 2,
		Sigma: 2, Clip: 1, Rho: 2, Time: testTime, Seeded: true, Prev: prev}
	d, err := e.Digest()
	if err != nil {
		t.Fatal(err)
	}
	e.Sig = fuzzKeys{}.sign(signer, d[:])
	return e
}

// How the restarted gate's append over the earlier life's late seq 4 ends.
type settleOutcome int

const (
	// settleRefused: a ledger error wrapping ErrChainMoved, nothing
	// settled, the gate stopped on its pending entry.
	settleRefused settleOutcome = iota
	// settleAlready: ErrAlreadyReleased, seq 4 accounted, nothing appended.
	settleAlready
	// settleAfter: seq 4 accounted and the append made after it, at seq 5.
	settleAfter
	// settleBudget: seq 4 accounted, and the append made again after it is
	// refused by the budget seq 4 spent.
	settleBudget
)

// An earlier life of the agent appended seq 4, and the ledger stored it
// only after the restarted life's gate had read the chain at seq 3; the
// restarted gate then appends its own seq 4 and the ledger refuses it as a
// chain that has moved on. If seq 4 is the client's own entry, continuing
// the same chain head, and of the same channel and round, the release was
// made: the gate accounts it once and returns ErrAlreadyReleased,
// releasing nothing, and carries on after it. If it is of an earlier
// round, or a calibration of the same or an earlier round while the gate
// releases, the gate accounts it once and makes its own append after it,
// at seq 5, with its budget checked again and the noise an uninterrupted
// run adds. Anything else at seq 4 stays an error.
func TestReleaseSettlesAnEarlierLifesLateAppend(t *testing.T) {
	ctx := context.Background()
	forkedModel2 := func(t *testing.T, old *Gate, l Ledger) {
		if err := l.Append(ctx, signedEntry(t, strings.Repeat("0", 64), "bank-3")); err != nil {
			t.Fatal(err)
		}
	}
	model2SignedBy := func(signer string) func(*testing.T, *Gate, Ledger) {
		return func(t *testing.T, old *Gate, l Ledger) {
			old.mu.Lock()
			prev := old.prev
			old.mu.Unlock()
			if err := l.Append(ctx, signedEntry(t, prev, signer)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name string
		cfg  func() Config // nil: settleConfig
		// late is what the earlier life appends as seq 4, after the
		// restarted gate read the chain.
		late func(t *testing.T, old *Gate, l Ledger)
		// act is the restarted gate's append of seq 4.
		act  settleAct
		out  settleOutcome
		want string // settleRefused: a phrase the error must hold
	}{
		{name: "its own release of the same channel and round", late: releaseLate(settleModel(2)), act: releaseAct(settleModel(2)), out: settleAlready},
		{name: "its own calibration of the same round", late: calibrateLate(2), act: calibrateAct(2), out: settleAlready},

		{name: "its model release of an earlier round", late: releaseLate(settleModel(2)), act: releaseAct(settleModel(3)), out: settleAfter},
		{name: "its release of an earlier round on another channel", late: releaseLate(settleEmb(2)), act: releaseAct(settleModel(3)), out: settleAfter},
		{name: "its calibration of an earlier round, while it releases", late: calibrateLate(2), act: releaseAct(settleModel(3)), out: settleAfter},
		{name: "its calibration of the same round, while it releases that round", late: calibrateLate(2), act: releaseAct(settleModel(2)), out: settleAfter},
		{name: "its calibration of the same round, while it releases embeddings", late: calibrateLate(2), act: releaseAct(settleEmb(2)), out: settleAfter},
		{name: "its release of an earlier round, while it records a calibration", late: releaseLate(settleEmb(2)), act: calibrateAct(3), out: settleAfter},
		{name: "its release of an earlier round that spends what the append needs", cfg: settleTightConfig,
			late: releaseLate(settleModel(2)), act: releaseAct(settleModel(3)), out: settleBudget},

		{name: "its release of another round", late: releaseLate(settleModel(3)), act: releaseAct(settleModel(2)),
			want: "its model entry of round 3, not a release of model in round 2"},
		{name: "its release of another channel", late: releaseLate(settleEmb(2)), act: releaseAct(settleModel(2)),
			want: "its emb entry of round 2, not a release of model in round 2"},
		{name: "its calibration of a later round, while it releases", late: calibrateLate(3), act: releaseAct(settleModel(2)),
			want: "its calibration entry of round 3, not a release of model in round 2"},
		{name: "its release of the same round, while it records a calibration", late: releaseLate(settleEmb(2)), act: calibrateAct(2),
			want: "its emb entry of round 2, not a calibration entry of round 2"},
		{name: "its release of a later round, while it records a calibration", late: releaseLate(settleModel(3)), act: calibrateAct(2),
			want: "its model entry of round 3, not a calibration entry of round 2"},
		{name: "its own secagg record of the same round", late: secAggLate(2), act: secAggAct(2), out: settleAlready},
		{name: "its secagg record of the same round, while it releases that round", late: secAggLate(2), act: releaseAct(settleModel(2)), out: settleAfter},
		{name: "its secagg record of an earlier round, while it records one", late: secAggLate(2), act: secAggAct(3), out: settleAfter},
		{name: "its release of an earlier round, while it records a secagg record", late: releaseLate(settleModel(2)), act: secAggAct(3), out: settleAfter},
		{name: "its secagg record of a later round, while it releases", late: secAggLate(3), act: releaseAct(settleModel(2)),
			want: "its secagg entry of round 3, not a release of model in round 2"},
		{name: "its release of the same round, while it records a secagg record", late: releaseLate(settleModel(2)), act: secAggAct(2),
			want: "its model entry of round 2, not a secagg entry of round 2"},
		{name: "its calibration of the same round, while it records a secagg record", late: calibrateLate(2), act: secAggAct(2),
			want: "its calibration entry of round 2, not a secagg entry of round 2"},
		{name: "an entry of the round that forks the chain", late: forkedModel2, act: releaseAct(settleModel(2)),
			want: "does not continue this gate's chain head"},
		{name: "an entry of an earlier round that forks the chain", late: forkedModel2, act: releaseAct(settleModel(3)),
			want: "does not continue this gate's chain head"},
		{name: "an entry not signed by the client", late: model2SignedBy("bank-9"), act: releaseAct(settleModel(2)),
			want: "holds no valid entry with that seq"},
		{name: "an entry of an earlier round not signed by the client", late: model2SignedBy("bank-9"), act: releaseAct(settleModel(3)),
			want: "holds no valid entry with that seq"},
	}
	for _, lt := range settleLedgers {
		for _, tc := range cases {
			t.Run(lt.name+"/"+tc.name, func(t *testing.T) {
				cfg := settleConfig
				if tc.cfg != nil {
					cfg = tc.cfg
				}
				l := lt.open(t)
				old, g := settleStart(t, cfg(), l)
				tc.late(t, old, l)
				before := ledgerEntries(t, l)

				got, data, err := tc.act(g)
				if tc.out != settleAfter && got.Seq != 0 {
					t.Fatalf("the refused append returned entry %+v", got)
				}
				switch tc.out {
				case settleRefused:
					if err == nil || errors.Is(err, ErrAlreadyReleased) || !errors.Is(err, ErrLedger) ||
						!errors.Is(err, ErrChainMoved) || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("append over %s: %v; want a ledger error wrapping ErrChainMoved that says %q", tc.name, err, tc.want)
					}
					if after := ledgerEntries(t, l); len(after) != len(before) {
						t.Fatalf("the refused release stored something: %d entries, had %d", len(after), len(before))
					}
					// Nothing is settled: the gate stays stopped on it.
					if _, err := g.Release(ctx, settleEmb(5)); err == nil {
						t.Fatal("a gate with an unsettled append released again")
					}
					return
				case settleAlready:
					if !errors.Is(err, ErrAlreadyReleased) || errors.Is(err, ErrLedger) {
						t.Fatalf("append over the earlier life's own entry: %v, want ErrAlreadyReleased", err)
					}
				case settleBudget:
					if !errors.Is(err, ErrBudgetExceeded) || errors.Is(err, ErrLedger) || errors.Is(err, ErrAlreadyReleased) {
						t.Fatalf("append over the earlier life's entry that spent its budget: %v, want ErrBudgetExceeded", err)
					}
				case settleAfter:
					if err != nil {
						t.Fatalf("append over the earlier life's entry of an earlier round: %v", err)
					}
					if got.Seq != 5 {
						t.Fatalf("the append made after the earlier life's seq 4 has seq %d, want 5", got.Seq)
					}
				}
				// Accounted once: the restarted gate and a gate built afresh
				// from the ledger agree on everything spent and on the chain
				// head; before anything of the restarted gate's own is
				// stored, so does the earlier life's gate (which made every
				// release).
				hs := []*Gate{newTestGate(t, cfg(), l)}
				if tc.out != settleAfter {
					hs = append(hs, old)
				}
				for _, h := range hs {
					if a, b := g.Spent(0.5), h.Spent(0.5); !reflect.DeepEqual(a, b) {
						t.Fatalf("spent %+v, want %+v", a, b)
					}
					if g.seq != h.seq || g.prev != h.prev || !reflect.DeepEqual(g.streams, h.streams) || g.pending != nil || !reflect.DeepEqual(g.calib, h.calib) {
						t.Fatalf("chain head seq %d %s streams %v calibration %v pending %v; want seq %d %s streams %v calibration %v",
							g.seq, short(g.prev), g.streams, g.calib, g.pending, h.seq, short(h.prev), h.streams, h.calib)
					}
				}
				if tc.out == settleAfter {
					// The ledger and the released value are those of an
					// uninterrupted life that appended seq 4 and then this,
					// bit for bit: seq 5 is chained after seq 4, and its
					// noise stream is the one the chain gives it.
					ref := NewMemLedger()
					one := settleChain(t, cfg(), ref)
					tc.late(t, one, ref)
					want, wantData, err := tc.act(one)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(data, wantData) {
						t.Fatalf("released seq %d %s, data %v; uninterrupted seq %d %s, data %v", got.Seq, got.Channel, data, want.Seq, want.Channel, wantData)
					}
					if a, b := ledgerEntries(t, l), ledgerEntries(t, ref); !reflect.DeepEqual(a, b) {
						t.Fatalf("ledger %+v; uninterrupted %+v", a, b)
					}
				}
				// ...and the gate carries on after what the ledger holds.
				n := len(ledgerEntries(t, l))
				r, err := g.Release(ctx, settleEmb(9))
				if err != nil || r.Entry().Seq != uint64(n+1) {
					t.Fatalf("next release: seq %d, %v; want seq %d", r.Entry().Seq, err, n+1)
				}
				rd, err := ReadLedger(ctx, l, VerifyOptions{Keys: fuzzKeys{}})
				if err != nil || len(rd.Breaks) != 0 || len(rd.Rejected) != 0 || len(rd.Entries) != n+1 {
					t.Fatalf("ledger after: %d entries, breaks %v, rejects %v, %v", len(rd.Entries), rd.Breaks, rd.Rejected, err)
				}
				seen := map[streamKey]int{}
				for _, e := range rd.Entries {
					if seen[streamKey{e.Channel, e.Round, 0}]++; seen[streamKey{e.Channel, e.Round, 0}] > 1 {
						t.Fatalf("%s of round %d is in the ledger twice: %+v", e.Channel, e.Round, rd.Entries)
					}
				}
			})
		}
	}
}

// Two entries of the earlier life stored late (as two agents' lives, or a
// ledger that lags): each is judged when the append over it is refused,
// and adopted; the append is made after both.
func TestReleaseSettlesTwoLateEntriesOfEarlierRounds(t *testing.T) {
	ctx := context.Background()
	for _, lt := range settleLedgers {
		t.Run(lt.name, func(t *testing.T) {
			l := lt.open(t)
			old, g := settleStart(t, settleConfig(), l)
			releaseLate(settleModel(2))(t, old, l)
			calibrateLate(2)(t, old, l)
			r, err := g.Release(ctx, settleModel(3))
			if err != nil || r.Entry().Seq != 6 {
				t.Fatalf("release over seqs 4 and 5: seq %d, %v; want seq 6", r.Entry().Seq, err)
			}
			fresh := newTestGate(t, settleConfig(), l)
			if a, b := g.Spent(0.5), fresh.Spent(0.5); !reflect.DeepEqual(a, b) || g.seq != fresh.seq || g.prev != fresh.prev {
				t.Fatalf("spent %+v at seq %d, the ledger %+v at seq %d", a, g.seq, b, fresh.seq)
			}
		})
	}
}

// The adoption of a late entry of an earlier round is no way around the
// rules: one of a later round behind it still stops the gate, which has
// adopted what it could judge and nothing past it.
func TestReleaseSettlesNothingPastAnEntryItRefuses(t *testing.T) {
	ctx := context.Background()
	for _, lt := range settleLedgers {
		t.Run(lt.name, func(t *testing.T) {
			l := lt.open(t)
			old, g := settleStart(t, settleConfig(), l)
			releaseLate(settleModel(2))(t, old, l)
			releaseLate(settleModel(4))(t, old, l)
			_, err := g.Release(ctx, settleModel(3))
			if !errors.Is(err, ErrLedger) || !errors.Is(err, ErrChainMoved) || !strings.Contains(err.Error(), "its model entry of round 4, not a release of model in round 3") {
				t.Fatalf("release of round 3 over round 2 and round 4: %v", err)
			}
			if g.seq != 5 || g.pending == nil || g.pending.Seq != 5 {
				t.Fatalf("gate at seq %d, pending %+v; want seq 4 adopted and its own seq 5 pending", g.seq, g.pending)
			}
			if got, ok := g.LastRound(ChannelModel); !ok || got != 3 {
				t.Fatalf("last model round %d, want 3 (pending and charged)", got)
			}
		})
	}
}

type settleAct func(g *Gate) (Entry, []float32, error)

func releaseLate(req Request) func(*testing.T, *Gate, Ledger) {
	return func(t *testing.T, old *Gate, _ Ledger) {
		if _, err := old.Release(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
}

func calibrateLate(round uint64) func(*testing.T, *Gate, Ledger) {
	return func(t *testing.T, old *Gate, _ Ledger) {
		if _, err := old.RecordCalibration(context.Background(), round, settleCalib); err != nil {
			t.Fatal(err)
		}
	}
}

// settleSecAgg is bank-3's record of a round of two banks.
var settleSecAgg = SecAggRecord{Cohort: []string{"bank-3", "bank-4"}, Threshold: 2, Bits: 30, Scale: 1 << 20, Degree: 1,
	Neighbours: []string{"bank-4"}, Config: strings.Repeat("c0", 32)}

func secAggLate(round uint64) func(*testing.T, *Gate, Ledger) {
	return func(t *testing.T, old *Gate, _ Ledger) {
		if _, err := old.RecordSecAgg(context.Background(), round, settleSecAgg); err != nil {
			t.Fatal(err)
		}
	}
}

func secAggAct(round uint64) settleAct {
	return func(g *Gate) (Entry, []float32, error) {
		e, err := g.RecordSecAgg(context.Background(), round, settleSecAgg)
		return e, nil, err
	}
}

func releaseAct(req Request) settleAct {
	return func(g *Gate) (Entry, []float32, error) {
		r, err := g.Release(context.Background(), req)
		if !r.IsZero() {
			return r.Entry(), r.Data(), err
		}
		return Entry{}, nil, err
	}
}

func calibrateAct(round uint64) settleAct {
	return func(g *Gate) (Entry, []float32, error) {
		e, err := g.RecordCalibration(context.Background(), round, settleCalib)
		return e, nil, err
	}
}

func ledgerEntries(t *testing.T, l Ledger) []Entry {
	t.Helper()
	es, err := l.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// Sync brings a gate up to its chain when the chain has moved on past it
// (and only then), so that a restarted agent and its gate stand on one
// read of the ledger.
func TestGateSync(t *testing.T) {
	ctx := context.Background()
	for _, lt := range settleLedgers {
		t.Run(lt.name, func(t *testing.T) {
			l := lt.open(t)
			old, g := settleStart(t, settleConfig(), l)
			// Nothing new: the state stays as it is.
			es, err := g.Sync(ctx)
			if err != nil || len(es) != 3 || g.seq != 3 {
				t.Fatalf("sync of an unchanged chain: %d entries, seq %d, %v", len(es), g.seq, err)
			}
			// The earlier life's seq 4 lands: Sync returns it and the gate
			// continues after it, with it accounted.
			if _, err := old.Release(ctx, settleModel(2)); err != nil {
				t.Fatal(err)
			}
			es, err = g.Sync(ctx)
			if err != nil || len(es) != 4 || es[3].Round != 2 || g.seq != 4 {
				t.Fatalf("sync after a late append: %d entries, seq %d, %v", len(es), g.seq, err)
			}
			if a, b := g.Spent(0.5), old.Spent(0.5); !reflect.DeepEqual(a, b) {
				t.Fatalf("spent %+v, want %+v", a, b)
			}
			r, err := g.Release(ctx, settleModel(3))
			if err != nil || r.Entry().Seq != 5 {
				t.Fatalf("release after sync: seq %d, %v", r.Entry().Seq, err)
			}
			if rd, _ := ReadLedger(ctx, l, VerifyOptions{Keys: fuzzKeys{}}); len(rd.Breaks) != 0 || len(rd.Entries) != 5 {
				t.Fatalf("ledger after: %d entries, breaks %v", len(rd.Entries), rd.Breaks)
			}
		})
	}
}
