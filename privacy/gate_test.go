package privacy

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
)

var testTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTestGate(t testing.TB, cfg Config, l Ledger) *Gate {
	t.Helper()
	if cfg.Job == "" {
		cfg.Job, cfg.Client = "job-1", "bank-3"
	}
	if cfg.Delta == 0 {
		cfg.Delta = 1e-5
	}
	g, err := NewGate(context.Background(), cfg, l, func() time.Time { return testTime })
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestClipRow(t *testing.T) {
	for _, tc := range []struct {
		row       []float32
		c         float64
		normalize bool
		wantNorm  float64
	}{
		{[]float32{3, 4}, 1, false, 1},
		{[]float32{0.3, 0.4}, 1, false, 0.5}, // inside the ball: untouched
		{[]float32{0.3, 0.4}, 1, true, 1},    // normalized up
		{[]float32{1e30, 1e30, 1e30}, 15, false, 15},
		{[]float32{1e-30, 0}, 1, true, 1},
		{[]float32{0, 0}, 1, false, 0},
	} {
		row := slices.Clone(tc.row)
		if err := clipRow(row, tc.c, tc.normalize); err != nil {
			t.Fatal(err)
		}
		n := norm2(row)
		if n > tc.c || math.Abs(n-tc.wantNorm) > 1e-6*tc.wantNorm {
			t.Errorf("clip %v to %v (normalize %v): norm %v, want %v and ≤ %v", tc.row, tc.c, tc.normalize, n, tc.wantNorm, tc.c)
		}
	}
	if err := clipRow([]float32{0, 0}, 1, true); err == nil {
		t.Error("normalizing a zero row succeeded")
	}
	// The bound holds after float32 rounding, for many random directions.
	seed := uint64(3)
	src := newNoiseSource(&seed)
	for range 10000 {
		row := make([]float32, 17)
		for i := range row {
			row[i] = float32(src.normal() * 100)
		}
		_ = clipRow(row, 1, true)
		if norm2(row) > 1 {
			t.Fatalf("normalized row has norm %v > 1", norm2(row))
		}
	}
}

func TestReleaseRejects(t *testing.T) {
	emb := func(r Request) Request {
		r.Channel, r.Sigma = ChannelEmb, 1
		if r.Rows == nil && r.Flat == nil {
			r.Rows = [][]float32{{1, 0}, {0, 1}}
		}
		return r
	}
	nan := float32(math.NaN())
	for name, req := range map[string]Request{
		"calibration channel": {Channel: ChannelCalibration, Rows: [][]float32{{1}}, Sigma: 1, Clip: 1},
		"unknown channel":     {Channel: "weights", Rows: [][]float32{{1}}, Sigma: 1, Clip: 1},
		"sigma 0":             {Channel: ChannelModel, Rows: [][]float32{{1}}, Clip: 1},
		"sigma nan":           {Channel: ChannelModel, Rows: [][]float32{{1}}, Sigma: math.NaN(), Clip: 1},
		"clip 0":              {Channel: ChannelModel, Rows: [][]float32{{1}}, Sigma: 1},
		"no data":             {Channel: ChannelModel, Sigma: 1, Clip: 1},
		"both":                {Channel: ChannelModel, Rows: [][]float32{{1}}, Flat: []float32{1}, Dim: 1, Sigma: 1, Clip: 1},
		"ragged rows":         {Channel: ChannelModel, Rows: [][]float32{{1, 2}, {1}}, Sigma: 1, Clip: 1},
		"empty row":           {Channel: ChannelModel, Rows: [][]float32{{}}, Sigma: 1, Clip: 1},
		"flat dim 0":          {Channel: ChannelModel, Flat: []float32{1, 2}, Sigma: 1, Clip: 1},
		"flat ragged":         {Channel: ChannelModel, Flat: []float32{1, 2, 3}, Dim: 2, Sigma: 1, Clip: 1},
		"dim mismatch":        {Channel: ChannelModel, Rows: [][]float32{{1, 2}}, Dim: 3, Sigma: 1, Clip: 1},
		"nan value":           {Channel: ChannelModel, Rows: [][]float32{{1, nan}}, Sigma: 1, Clip: 1},
		"inf value":           {Channel: ChannelModel, Flat: []float32{float32(math.Inf(1))}, Dim: 1, Sigma: 1, Clip: 1},
		"ids mismatch":        {Channel: ChannelModel, Rows: [][]float32{{1}}, NodeIDs: []int64{1, 2}, Sigma: 1, Clip: 1},
		"emb without ids":     emb(Request{}),
		"emb clip 5":          emb(Request{NodeIDs: []int64{1, 2}, Clip: 5}),
		"emb duplicate ids":   emb(Request{NodeIDs: []int64{1, 1}}),
		"emb zero row":        emb(Request{Rows: [][]float32{{0, 0}}, NodeIDs: []int64{1}}),
	} {
		l := NewMemLedger()
		g := newTestGate(t, Config{}, l)
		r, err := g.Release(context.Background(), req)
		if !errors.Is(err, ErrInvalid) || !r.IsZero() {
			t.Errorf("%s: err %v, zero result %v", name, err, r.IsZero())
		}
		if es, _ := l.Entries(context.Background()); len(es) != 0 {
			t.Errorf("%s: %d ledger entries", name, len(es))
		}
		if s := g.Spent(0.1); s.Client != 0 || s.WorstNodeReleases != 0 {
			t.Errorf("%s: charged %+v", name, s)
		}
	}
}

func TestReleaseEmbeddings(t *testing.T) {
	l := NewMemLedger()
	g := newTestGate(t, Config{}, l)
	in := [][]float32{{3, 4, 0}, {0, 0, 0.5}}
	r, err := g.Release(context.Background(), Request{Channel: ChannelEmb, Round: 4, Rows: in, NodeIDs: []int64{10, 11}, Sigma: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if in[0][0] != 3 {
		t.Error("release modified the caller's rows")
	}
	want := []float32{0.6, 0.8, 0, 0, 0, 1}
	for i, v := range r.Data() {
		if math.Abs(float64(v-want[i])) > 1e-4 {
			t.Fatalf("released %v, want about %v", r.Data(), want)
		}
	}
	e := r.Entry()
	if r.Channel() != ChannelEmb || r.Round() != 4 || r.Dim() != 3 || r.Rows() != 2 || !slices.Equal(r.NodeIDs(), []int64{10, 11}) {
		t.Errorf("accessors: %v %v %v %v %v", r.Channel(), r.Round(), r.Dim(), r.Rows(), r.NodeIDs())
	}
	if e.Seq != 1 || e.Clip != 1 || e.Rho != 0 || e.Count != 2 || e.Dim != 3 || e.Seeded || !e.Time.Equal(testTime) {
		t.Errorf("entry %+v", e)
	}
	es, _ := l.Entries(context.Background())
	// The ledger holds the keyed ids (a run without keys: the insecure
	// key of the job and bank), the value the wire's.
	key := InsecureNodeKey("job-1", "bank-3")
	keyed := []int64{KeyedNodeID(key, 10), KeyedNodeID(key, 11)}
	if len(es) != 1 || es[0].Seq != 1 || !slices.Equal(es[0].NodeIDs, keyed) || !slices.Equal(e.NodeIDs, keyed) {
		t.Errorf("ledger %+v, want node ids %v", es, keyed)
	}
	// Accessors return copies.
	d := r.Data()
	d[0] = 99
	ids := r.NodeIDs()
	ids[0] = 99
	if r.Data()[0] == 99 || r.NodeIDs()[0] == 99 {
		t.Error("accessors expose internal slices")
	}
	b := r.AppendLittleEndian([]byte{0xff})
	if len(b) != 1+4*6 || b[0] != 0xff {
		t.Fatalf("little-endian blob of %d bytes", len(b))
	}
	for i, v := range r.Data() {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(b[1+4*i:])); got != v {
			t.Fatalf("blob value %d: %v, want %v", i, got, v)
		}
	}
	s := g.Spent(0.5)
	if s.WorstNodeReleases != 1 || math.Abs(s.WorstNode-RDP.Epsilon(0.25/1e-12, 1e-5)) > 1e-9*s.WorstNode {
		t.Errorf("spent %+v", s)
	}
	var zero Released
	if !zero.IsZero() || zero.Data() != nil || r.IsZero() {
		t.Error("IsZero")
	}
}

func TestReleaseModelSensitivity(t *testing.T) {
	l := NewMemLedger()
	g := newTestGate(t, Config{Accountant: Exact}, l)
	flat := make([]float32, 4*5)
	for i := range flat {
		flat[i] = float32(i)
	}
	r, err := g.Release(context.Background(), Request{Channel: ChannelGrad, Flat: flat, Dim: 5, Sigma: 3, Clip: 15})
	if err != nil {
		t.Fatal(err)
	}
	e := r.Entry()
	if e.Rho != 2*15*2 || e.Count != 4 || e.NodeIDs != nil {
		t.Errorf("entry %+v: want ρ = 2·15·√4 = 60", e)
	}
	s := g.Spent(1)
	if want := ExactEpsilon(20, 1e-5); s.Channels[ChannelGrad] != want || s.Client != want {
		t.Errorf("spent %+v, want grad ε %v", s, want)
	}
}

func TestReleaseBudgetExceeded(t *testing.T) {
	l := NewMemLedger()
	g := newTestGate(t, Config{Budget: Budget{Epsilon: 5}}, l)
	req := Request{Channel: ChannelModel, Rows: [][]float32{{1, 2}}, Sigma: 10, Clip: 1} // ρ/σ = 0.2
	accepted := 0
	for {
		r, err := g.Release(context.Background(), req)
		if errors.Is(err, ErrBudgetExceeded) {
			if !r.IsZero() {
				t.Error("a refused release returned data")
			}
			if want := "privacy: release: budget exceeded for client bank-3 channel model"; err.Error()[:len(want)] != want {
				t.Errorf("message %q", err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		accepted++
	}
	es, _ := l.Entries(context.Background())
	if len(es) != accepted {
		t.Errorf("%d ledger entries for %d releases", len(es), accepted)
	}
	before := g.Spent(1)
	if before.Client > 5 {
		t.Errorf("spent %v over budget", before.Client)
	}
	if _, err := g.Release(context.Background(), req); !errors.Is(err, ErrBudgetExceeded) {
		t.Error("second refusal missing")
	}
	if after := g.Spent(1); after.Client != before.Client {
		t.Error("a refused release was charged")
	}
	// A restarted gate on the same ledger has the same budget state.
	g2 := newTestGate(t, Config{Budget: Budget{Epsilon: 5}}, l)
	if s := g2.Spent(1); s.Client != before.Client {
		t.Errorf("replayed spend %v, want %v", s.Client, before.Client)
	}
	if _, err := g2.Release(context.Background(), req); !errors.Is(err, ErrBudgetExceeded) {
		t.Error("restarted gate forgot the spent budget")
	}
}

func TestLedgerFailureReleasesNothing(t *testing.T) {
	l := NewMemLedger()
	g := newTestGate(t, Config{}, l)
	boom := errors.New("disk on fire")
	l.FailAppends(boom)
	r, err := g.Release(context.Background(), Request{Channel: ChannelMargin, Rows: [][]float32{{1}}, Sigma: 1, Clip: 1})
	if !errors.Is(err, ErrLedger) || !errors.Is(err, boom) || !r.IsZero() {
		t.Fatalf("release with failing ledger: %v", err)
	}
	if s := g.Spent(1); s.Client == 0 {
		t.Error("a release whose logging failed must stay charged (safe side)")
	}
	l.FailAppends(nil)
	r, err = g.Release(context.Background(), Request{Channel: ChannelMargin, Rows: [][]float32{{1}}, Sigma: 1, Clip: 1})
	if err != nil || r.Entry().Seq != 2 {
		t.Fatalf("after recovery: %v seq %d", err, r.Entry().Seq)
	}
}

func TestSeededReleasesAreMarked(t *testing.T) {
	seed := uint64(5)
	for _, tc := range []struct {
		seed *uint64
		want bool
	}{{nil, false}, {&seed, true}} {
		l := NewMemLedger()
		g := newTestGate(t, Config{Seed: tc.seed}, l)
		r, err := g.Release(context.Background(), Request{Channel: ChannelModel, Rows: [][]float32{{1}}, Sigma: 1, Clip: 1})
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.RecordCalibration(context.Background(), 1, Calibration{K: 50, N: 60, Q: []float64{90}, Rho: []float64{0.2}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Entry().Seeded != tc.want || c.Seeded != tc.want || g.Spent(1).Seeded != tc.want {
			t.Errorf("seed %v: entries marked %v %v", tc.seed != nil, r.Entry().Seeded, c.Seeded)
		}
	}
}

func TestRecordCalibration(t *testing.T) {
	l := NewMemLedger()
	g := newTestGate(t, Config{}, l)
	if _, err := g.RecordCalibration(context.Background(), 2, Calibration{K: 0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("invalid calibration: %v", err)
	}
	c := Calibration{K: 50, N: 60, Q: []float64{90}, Rho: []float64{0.2}}
	e, err := g.RecordCalibration(context.Background(), 2, c)
	if err != nil || e.Seq != 1 || e.Channel != ChannelCalibration || e.Calibration.Rho[0] != 0.2 {
		t.Fatalf("%+v %v", e, err)
	}
	c.Rho[0] = 0.9
	es, _ := l.Entries(context.Background())
	if len(es) != 1 || es[0].Calibration.Rho[0] != 0.2 {
		t.Error("the ledger aliases the caller's calibration")
	}
}

func TestNewGateRejects(t *testing.T) {
	ctx := context.Background()
	for name, cfg := range map[string]Config{
		"job":   {Job: "Job 1", Client: "c", Delta: 1e-5},
		"delta": {Job: "j", Client: "c"},
		"kind":  {Job: "j", Client: "c", Delta: 1e-5, Accountant: 9},
	} {
		if _, err := NewGate(ctx, cfg, NewMemLedger(), nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewGate(ctx, Config{Job: "j", Client: "c", Delta: 1e-5}, nil, nil); !errors.Is(err, ErrInvalid) {
		t.Error("nil ledger accepted")
	}
}

func TestGateConcurrentReleases(t *testing.T) {
	l := NewMemLedger()
	g := newTestGate(t, Config{}, l)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				id := int64(w*100 + i)
				if _, err := g.Release(context.Background(), Request{Channel: ChannelEmb, Rows: [][]float32{{1, 1}}, NodeIDs: []int64{id}, Sigma: 1}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	es, _ := l.Entries(context.Background())
	if len(es) != 100 {
		t.Fatalf("%d entries", len(es))
	}
	for i, e := range es {
		if e.Seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
}

// BenchmarkReleaseEmb: one release of 10,000 boundary embeddings of d=64
// through a gate on the in-memory ledger (normalize, charge 10,000 nodes,
// add noise).
func BenchmarkReleaseEmb(b *testing.B) {
	const n, dim = 10000, 64
	g := newTestGate(b, Config{}, NewMemLedger())
	flat := make([]float32, n*dim)
	for i := range flat {
		flat[i] = float32(i%97) - 40
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	b.SetBytes(4 * n * dim)
	r := uint64(0)
	for b.Loop() {
		r++
		if _, err := g.Release(context.Background(), Request{Channel: ChannelEmb, Round: r, Flat: flat, Dim: dim, NodeIDs: ids, Sigma: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
