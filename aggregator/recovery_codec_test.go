package aggregator

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"

	"graphfed/bus"
)

// Model sets round-trip bit for bit (NaN payloads and negative zero
// included), global or personalized with margins; a set of another round
// or a truncated one is refused.
func TestModelCodec(t *testing.T) {
	params := []float32{1, -0, float32(math.Inf(1)), math.Float32frombits(0x7fc00001), 3.5e-38}
	grad := []float32{0.25, -7}
	sets := map[string][]ModelSnapshot{
		"global":       {{Round: 9, Params: params, Grad: grad, Final: true}},
		"no gradient":  {{Round: 9, Params: params}},
		"personalized": {{To: "a", Round: 7, Params: params, Margin: -0.5, HasMargin: true}, {To: "bank-b", Round: 9, Params: grad}},
	}
	for name, ms := range sets {
		b := encodeModels(9, ms)
		got, err := decodeModels(b, 9)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(ms) {
			t.Fatalf("%s: %d models, want %d", name, len(got), len(ms))
		}
		for i := range ms {
			w, g := ms[i], got[i]
			if ModelDigest(g.Params) != ModelDigest(w.Params) || ModelDigest(g.Grad) != ModelDigest(w.Grad) || len(g.Params) != len(w.Params) ||
				(w.Grad == nil) != (g.Grad == nil) || g.To != w.To || g.Round != w.Round || g.Final != w.Final ||
				g.HasMargin != w.HasMargin || math.Float64bits(g.Margin) != math.Float64bits(w.Margin) {
				t.Fatalf("%s: decoded %+v, want %+v", name, g, w)
			}
		}
		for bad, data := range map[string][]byte{"truncated": b[:len(b)-1], "trailing": append(b[:len(b):len(b)], 0)} {
			if _, err := decodeModels(data, 9); err == nil {
				t.Errorf("%s, %s: decoded", name, bad)
			}
		}
		if _, err := decodeModels(b, 8); err == nil {
			t.Errorf("%s: decoded as another round", name)
		}
	}
	if _, err := decodeModels([]byte("GFM1xxxxxxxxxxxxxxxxxxxx"), 9); err == nil {
		t.Error("decoded another layout")
	}
}

// The digest tells models apart by a single bit.
func TestModelDigestSeesOneBit(t *testing.T) {
	a := []float32{1, 2, 3}
	b := []float32{1, math.Float32frombits(math.Float32bits(2) ^ 1), 3}
	if ModelDigest(a) == ModelDigest(b) || ModelDigest(a) != ModelDigest([]float32{1, 2, 3}) {
		t.Fatal("digest does not follow the bits")
	}
}

// A checkpoint whose log positions do not match its updates, or of an
// unknown layout, is refused.
func TestCheckpointDecodeRefusesInconsistency(t *testing.T) {
	cp := checkpoint{Version: checkpointVersion, Machine: Snapshot{Pending: []Contribution{{Client: "a"}}}, PendingAt: []uint64{3}}
	b, err := cp.encode()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeCheckpoint(b); err != nil || !reflect.DeepEqual(got.PendingAt, []uint64{3}) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	cp.PendingAt = nil
	b, _ = cp.encode()
	if _, err := decodeCheckpoint(b); err == nil || !strings.Contains(err.Error(), "log positions") {
		t.Fatalf("missing positions: %v", err)
	}
	cp.Version = checkpointVersion + 1
	b, _ = cp.encode()
	if _, err := decodeCheckpoint(b); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("future version: %v", err)
	}
}

// The re-announcement timer fires after a quiet spell, backs off to the
// round timeout, and starts over on news.
func TestNewsTimer(t *testing.T) {
	var n newsTimer
	n.reset(t0, time.Second)
	var fired []float64
	for s := 0.0; s <= 20; s += 0.25 {
		if s == 12 {
			n.heard(at(s))
		}
		if n.due(at(s), 4*time.Second) {
			fired = append(fired, s)
		}
	}
	want := []float64{1, 3, 7, 11, 13, 15, 19}
	if !reflect.DeepEqual(fired, want) {
		t.Fatalf("fired at %v, want %v", fired, want)
	}
	n.reset(t0, 0)
	if n.due(at(100), time.Second) {
		t.Fatal("a zero interval fired")
	}
}

// A durable server needs both halves; a signer must be the aggregator's
// and match the keyring.
func TestServerConfigChecks(t *testing.T) {
	cfg := func() ServerConfig {
		return ServerConfig{Job: "j", Log: zerolog.Nop(),
			Round: Config{Algo: AlgoFedAvg, Rounds: 1, MinClients: 1, RoundTimeout: time.Second}}
	}
	tr := bus.NewInmemNetwork().Transport()
	c := cfg()
	c.Store = NewMemStore()
	if _, err := NewServer(c, tr); err == nil {
		t.Error("a store without an update log")
	}
	dep, err := bus.NewDeployment("j", []string{"bank-a"})
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := dep.Keyring()
	other, _ := bus.NewDeployment("j", []string{"bank-a"})
	signer := func(d *bus.Deployment, id string) *bus.Signer {
		cr, _ := d.Credential(id)
		kp, err := nkeys.FromSeed(cr.Seed)
		if err != nil {
			t.Fatal(err)
		}
		s, err := bus.NewSigner(id, kp)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, tc := range map[string]struct {
		s  *bus.Signer
		ok bool
	}{
		"the aggregator's key":            {signer(dep, bus.AggregatorID), true},
		"a bank's signer":                 {signer(dep, "bank-a"), false},
		"another deployment's aggregator": {signer(other, bus.AggregatorID), false},
	} {
		c := cfg()
		c.Keyring, c.Signer = ring, tc.s
		if _, err := NewServer(c, tr); (err == nil) != tc.ok {
			t.Errorf("%s: %v", name, err)
		}
	}
}
