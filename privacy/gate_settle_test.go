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

// settleStart gives an earlier life of bank-3 the chain seq 1 (model,
// round 1), seq 2 (emb, round 1), seq 3 (calibration, round 1), and starts
// the restarted life's gate on it: the gate has read the chain at seq 3.
func settleStart(t *testing.T, l Ledger) (old, g *Gate) {
	t.Helper()
	ctx := context.Background()
	old = newTestGate(t, settleConfig(), l)
	for _, req := range []Request{settleModel(1), settleEmb(1)} {
		if _, err := old.Release(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.RecordCalibration(ctx, 1, settleCalib); err != nil {
		t.Fatal(err)
	}
	g = newTestGate(t, settleConfig(), l)
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

// An earlier life of the agent appended seq 4, and the ledger stored it
// only after the restarted life's gate had read the chain at seq 3; the
// restarted gate then appends its own seq 4 and the ledger refuses it as a
// chain that has moved on. If seq 4 is the client's own release of the
// same channel and round, continuing the same chain head, the release was
// made: the gate accounts it once and returns ErrAlreadyReleased, releasing
// nothing, and carries on after it. Anything else at seq 4 stays an error.
func TestReleaseSettlesAnEarlierLifesLateAppend(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// late is what the earlier life appends as seq 4, after the
		// restarted gate read the chain.
		late func(t *testing.T, old *Gate, l Ledger)
		// act is the restarted gate's append of seq 4.
		act  func(g *Gate) (Entry, error)
		want string // "" for settled; else a phrase the error must hold
	}{
		{"its own release of the same channel and round", releaseLate(settleModel(2)), releaseAct(settleModel(2)), ""},
		{"its own calibration of the same round", calibrateLate(2), calibrateAct(2), ""},
		{"its release of another round", releaseLate(settleModel(3)), releaseAct(settleModel(2)), "its model entry of round 3, not a release of model in round 2"},
		{"its release of another channel", releaseLate(settleEmb(2)), releaseAct(settleModel(2)), "its emb entry of round 2, not a release of model in round 2"},
		{"its calibration, not a release", calibrateLate(2), releaseAct(settleModel(2)), "its calibration entry of round 2"},
		{"an entry of the round that forks the chain", func(t *testing.T, old *Gate, l Ledger) {
			if err := l.Append(ctx, signedEntry(t, strings.Repeat("0", 64), "bank-3")); err != nil {
				t.Fatal(err)
			}
		}, releaseAct(settleModel(2)), "does not continue this gate's chain head"},
		{"an entry not signed by the client", func(t *testing.T, old *Gate, l Ledger) {
			old.mu.Lock()
			prev := old.prev
			old.mu.Unlock()
			if err := l.Append(ctx, signedEntry(t, prev, "bank-9")); err != nil {
				t.Fatal(err)
			}
		}, releaseAct(settleModel(2)), "holds no valid entry with that seq"},
	}
	for _, lt := range settleLedgers {
		for _, tc := range cases {
			t.Run(lt.name+"/"+tc.name, func(t *testing.T) {
				l := lt.open(t)
				old, g := settleStart(t, l)
				tc.late(t, old, l)
				before := ledgerEntries(t, l)

				got, err := tc.act(g)
				if got.Seq != 0 {
					t.Fatalf("the refused append returned entry %+v", got)
				}
				if tc.want != "" {
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
				}
				if !errors.Is(err, ErrAlreadyReleased) || errors.Is(err, ErrLedger) {
					t.Fatalf("append over the earlier life's own entry: %v, want ErrAlreadyReleased", err)
				}
				// Accounted once: the restarted gate, the earlier life's gate
				// (which made every release) and a gate built afresh from the
				// ledger agree on everything spent and on the chain head.
				fresh := newTestGate(t, settleConfig(), l)
				for _, h := range []*Gate{old, fresh} {
					if a, b := g.Spent(0.5), h.Spent(0.5); !reflect.DeepEqual(a, b) {
						t.Fatalf("spent %+v, want %+v", a, b)
					}
					if g.seq != h.seq || g.prev != h.prev || !reflect.DeepEqual(g.streams, h.streams) || g.pending != nil {
						t.Fatalf("chain head seq %d %s streams %v pending %v; want seq %d %s streams %v",
							g.seq, short(g.prev), g.streams, g.pending, h.seq, short(h.prev), h.streams)
					}
				}
				// ...and the gate carries on after seq 4.
				r, err := g.Release(ctx, settleEmb(2))
				if err != nil || r.Entry().Seq != 5 {
					t.Fatalf("next release: seq %d, %v; want seq 5", r.Entry().Seq, err)
				}
				rd, err := ReadLedger(ctx, l, VerifyOptions{Keys: fuzzKeys{}})
				if err != nil || len(rd.Breaks) != 0 || len(rd.Rejected) != 0 || len(rd.Entries) != 5 {
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

func releaseAct(req Request) func(*Gate) (Entry, error) {
	return func(g *Gate) (Entry, error) {
		r, err := g.Release(context.Background(), req)
		if !r.IsZero() {
			return r.Entry(), err
		}
		return Entry{}, err
	}
}

func calibrateAct(round uint64) func(*Gate) (Entry, error) {
	return func(g *Gate) (Entry, error) { return g.RecordCalibration(context.Background(), round, settleCalib) }
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
			old, g := settleStart(t, l)
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
