package bus

import (
	"math"
	"testing"
)

func sealT(t testing.TB, env Envelope, body any) []byte {
	t.Helper()
	b, err := Seal(env, body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidatorRejects(t *testing.T) {
	schema := Schema{Job: "job1", NumParams: 3, Senders: map[string]bool{"bank-1": true, "bank-2": true}}
	good := Envelope{Job: "job1", Kind: KindUpdate, From: "bank-1", Round: 1, Seq: 1}
	upd := func(p ...float32) *Update { return &Update{Round: 1, Weight: 10, Params: Sensitive{v: p}} }
	wrongVersion, _ := Seal(good, upd(1, 2, 3))
	wrongVersion = rewriteVersion(t, wrongVersion, 7)
	tests := []struct {
		name    string
		subject string
		data    []byte
		reason  string
	}{
		{"valid", "gf.job1.update.bank-1", sealT(t, good, upd(1, 2, 3)), ""},
		{"garbage bytes", "gf.job1.update.bank-1", []byte("\xc1\xff not msgpack"), ReasonGarbage},
		{"empty", "gf.job1.update.bank-1", nil, ReasonGarbage},
		{"unknown schema version", "gf.job1.update.bank-1", wrongVersion, ReasonVersion},
		{"wrong vector length", "gf.job1.update.bank-1", sealT(t, good, upd(1, 2)), ReasonShape},
		{"NaN", "gf.job1.update.bank-1", sealT(t, good, upd(1, float32(math.NaN()), 3)), ReasonNonFinite},
		{"+Inf", "gf.job1.update.bank-1", sealT(t, good, upd(float32(math.Inf(1)), 2, 3)), ReasonNonFinite},
		{"-Inf", "gf.job1.update.bank-1", sealT(t, good, upd(1, 2, float32(math.Inf(-1)))), ReasonNonFinite},
		{"unknown sender", "gf.job1.update.bank-9", sealT(t, Envelope{Job: "job1", Kind: KindUpdate, From: "bank-9", Round: 1}, upd(1, 2, 3)), ReasonSender},
		{"spoofed sender", "gf.job1.update.bank-2", sealT(t, good, upd(1, 2, 3)), ReasonSubject},
		{"other job", "gf.job1.update.bank-1", sealT(t, Envelope{Job: "job2", Kind: KindUpdate, From: "bank-1"}, upd(1, 2, 3)), ReasonSubject},
		{"kind mismatch", "gf.job1.metrics.bank-1", sealT(t, good, upd(1, 2, 3)), ReasonSubject},
		{"client sends a model", "gf.job1.model.all", sealT(t, Envelope{Job: "job1", Kind: KindModel, From: "bank-1"}, &Model{Params: Vector{1, 2, 3}}), ReasonSender},
		{"bad subject", "gf.job1.update.Bank_1", sealT(t, good, upd(1, 2, 3)), ReasonSubject},
		{"odd blob", "gf.job1.update.bank-1", sealT(t, good, map[string]any{"round": 1, "params": []byte{1, 2, 3}}), ReasonGarbage},
		{"body of wrong type", "gf.job1.update.bank-1", sealT(t, good, "a string"), ReasonGarbage},
		{"embeddings shape", "gf.job1.emb.bank-1.bank-2", sealT(t, Envelope{Job: "job1", Kind: KindEmb, From: "bank-1"}, &Embeddings{Dim: 2, NodeIDs: []int64{1}, Data: Sensitive{v: []float32{1, 2, 3}}}), ReasonShape},
		{"negative weight", "gf.job1.update.bank-1", sealT(t, good, &Update{Round: 1, Weight: -1, Params: Sensitive{v: []float32{1, 2, 3}}}), ReasonNonFinite},
	}
	v := NewValidator(schema)
	wantRejects := uint64(0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := v.Open(tc.subject, tc.data)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("rejected a valid message: %v", err)
				}
				return
			}
			wantRejects++
			if err == nil {
				t.Fatalf("accepted; want reject %q", tc.reason)
			}
			if got := ReasonOf(err); got != tc.reason {
				t.Fatalf("reason %q (%v), want %q", got, err, tc.reason)
			}
		})
	}
	if got := v.TotalRejects(); got != wantRejects {
		t.Fatalf("counted %d rejects, want %d (%s)", got, wantRejects, v.RejectSummary())
	}
}

func TestValidatorOversized(t *testing.T) {
	v := NewValidator(Schema{Job: "j", MaxBytes: 100})
	data := sealT(t, Envelope{Job: "j", Kind: KindUpdate, From: "a"}, &Update{Params: Sensitive{v: make([]float32, 100)}})
	if _, _, err := v.Open("gf.j.update.a", data); ReasonOf(err) != ReasonOversized {
		t.Fatalf("want oversized, got %v", err)
	}
}

// rewriteVersion re-seals an envelope with another schema version.
func rewriteVersion(t *testing.T, data []byte, version uint64) []byte {
	env, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	env.Version = version
	b, err := msgpackMarshal(&env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzValidatorOpen(f *testing.F) {
	env := Envelope{Job: "j", Kind: KindUpdate, From: "a", Round: 1}
	f.Add("gf.j.update.a", sealT(f, env, &Update{Round: 1, Weight: 1, Params: Sensitive{v: []float32{1, 2}}}))
	f.Add("gf.j.emb.a.b", sealT(f, Envelope{Job: "j", Kind: KindEmb, From: "a"}, &Embeddings{Dim: 1, NodeIDs: []int64{3}, Data: Sensitive{v: []float32{1}}}))
	f.Add("gf.j.hello.a", sealT(f, Envelope{Job: "j", Kind: KindHello, From: "a"}, &Hello{NumParams: 2}))
	f.Add("gf.j.round", sealT(f, Envelope{Job: "j", Kind: KindRound, From: AggregatorID}, &RoundOpen{Round: 2}))
	f.Add("gf.j.update.a", []byte{0x80})
	f.Add("gf.j.update.a", sealT(f, env, &Update{Round: 1, Weight: 1, Params: Sensitive{v: []float32{1, 2}},
		Descriptors: Sensitive{v: []float32{1, 0, 0, 1, 0.5, 0.5, 0, 1}}, DescOrders: 1, DescPrincipal: 1, DescDim: 2}))
	f.Fuzz(func(t *testing.T, subject string, data []byte) {
		v := NewValidator(Schema{Job: "j", NumParams: 2})
		env, body, err := v.Open(subject, data)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("error without a reason: %v", err)
			}
			if v.TotalRejects() != 1 {
				t.Fatal("reject not counted")
			}
			return
		}
		if body == nil || env.Version != SchemaVersion {
			t.Fatalf("accepted without a body or with version %d", env.Version)
		}
		if u, ok := body.(*Update); ok && u.Params.Len() > 0 {
			if u.Params.Len() != 2 || firstNonFinite(u.Params.Floats()) >= 0 {
				t.Fatalf("accepted bad params %v", u.Params)
			}
		}
		if u, ok := body.(*Update); ok && u.Descriptors.Len() > 0 {
			d := u.Descriptors.Len()
			if d > MaxDescriptorValues(2) || d != 4*u.DescOrders*u.DescPrincipal*u.DescDim || firstNonFinite(u.Descriptors.Floats()) >= 0 {
				t.Fatalf("accepted bad descriptors: %d values, shape %d/%d/%d", d, u.DescOrders, u.DescPrincipal, u.DescDim)
			}
		}
	})
}
