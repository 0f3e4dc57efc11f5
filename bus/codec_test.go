package bus

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func msgpackMarshal(v any) ([]byte, error) { return msgpack.Marshal(v) }

func TestEnvelopeRoundTrip(t *testing.T) {
	tests := []struct {
		kind Kind
		body any
		into any
	}{
		{KindUpdate, &Update{Round: 3, BaseRound: 2, Weight: 140, Params: Sensitive{v: []float32{1.5, -2, 3e-8}}, Loss: 0.7}, &Update{}},
		{KindModel, &Model{Round: 4, Params: Vector{0, 1}, Final: true}, &Model{}},
		{KindEmb, &Embeddings{Round: 1, Layer: 1, Dim: 2, NodeIDs: []int64{7, 9}, Data: Sensitive{v: []float32{1, 2, 3, 4}}}, &Embeddings{}},
		{KindHello, &Hello{SchemaHash: "abc", NumParams: 5, TrainSize: 12, Algo: "fedavg"}, &Hello{}},
		{KindRound, &RoundOpen{Round: 2, Deadline: 99, ModelRound: 1}, &RoundOpen{}},
		{KindMetrics, &Metrics{Round: 2, Scores: map[string]float64{"test_acc": 0.8}}, &Metrics{}},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			data, err := Seal(Envelope{Job: "j", Kind: tc.kind, From: "a", Round: 3, Seq: 4, Time: 5}, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			env, err := Open(data)
			if err != nil {
				t.Fatal(err)
			}
			if env.Job != "j" || env.Kind != tc.kind || env.Round != 3 || env.Seq != 4 || env.Version != SchemaVersion {
				t.Fatalf("envelope %+v", env)
			}
			if err := env.UnmarshalBody(tc.into); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tc.into, tc.body) {
				t.Fatalf("body %+v, want %+v", tc.into, tc.body)
			}
		})
	}
}

func TestVectorIsOneBlob(t *testing.T) {
	v := make(Vector, 1000)
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// bin16 header (3 bytes) + 4000 bytes: no per-element framing.
	if len(b) != 4003 {
		t.Fatalf("1000 floats encode to %d bytes, want 4003", len(b))
	}
}

func randomUpdate(n int) *Update {
	r := rand.New(rand.NewPCG(1, 2))
	p := make(Vector, n)
	for i := range p {
		p[i] = float32(r.NormFloat64())
	}
	return &Update{Round: 1, Weight: 1, Params: Sensitive{v: p}}
}

// BenchmarkEnvelope1MFloat encodes and decodes an update of 1M float32s.
func BenchmarkEnvelope1MFloat(b *testing.B) {
	u := randomUpdate(1 << 20)
	env := Envelope{Job: "bench", Kind: KindUpdate, From: "a", Round: 1}
	v := NewValidator(Schema{Job: "bench", NumParams: 1 << 20})
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(4 << 20)
		for b.Loop() {
			if _, err := Seal(env, u); err != nil {
				b.Fatal(err)
			}
		}
	})
	data, _ := Seal(env, u)
	b.Run("decode+validate", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(4 << 20)
		for b.Loop() {
			if _, _, err := v.Open("gf.bench.update.a", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Signed, with the keyring's verification: the same checks plus
	// hashing the message and an ed25519 verification.
	d, err := NewDeployment("bench", []string{"a"})
	if err != nil {
		b.Fatal(err)
	}
	ring, err := d.Keyring()
	if err != nil {
		b.Fatal(err)
	}
	signed, err := testSigners(b, d)["a"].Seal(env, u)
	if err != nil {
		b.Fatal(err)
	}
	sv := NewValidator(Schema{Job: "bench", NumParams: 1 << 20, Keyring: ring})
	b.Run("decode+validate+verify", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(4 << 20)
		for b.Loop() {
			if _, _, err := sv.Open("gf.bench.update.a", signed); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The layout DESIGN.md rules out, for comparison.
	perElem := make([]float32, u.Params.Len())
	copy(perElem, u.Params.Floats())
	b.Run("encode-per-element-msgpack", func(b *testing.B) {
		b.SetBytes(4 << 20)
		for b.Loop() {
			if _, err := msgpack.Marshal(perElem); err != nil {
				b.Fatal(err)
			}
		}
	})
}
