package bus

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/vmihailenco/msgpack/v5"
)

func testSigners(t testing.TB, d *Deployment) map[string]*Signer {
	t.Helper()
	out := map[string]*Signer{}
	for _, c := range d.Creds {
		kp, err := nkeys.FromSeed(c.Seed)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSigner(c.ID, kp)
		if err != nil {
			t.Fatal(err)
		}
		out[c.ID] = s
	}
	return out
}

// forge signs env with s's key whatever env's sender, as an attacker
// holding that key would; Signer.Sign refuses to.
func forge(t testing.TB, s *Signer, env Envelope, body any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	env.Version, env.Body = SchemaVersion, b
	env.Sig, err = s.kp.Sign(env.digest())
	if err != nil {
		t.Fatal(err)
	}
	out, err := msgpack.Marshal(&env)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// edit decodes wire bytes, changes the envelope and re-encodes it, keeping
// the signature: what a party relaying or tampering with a message can do.
// It edits a copy: an opened envelope shares the bytes it was opened from.
func edit(t testing.TB, data []byte, f func(*Envelope)) []byte {
	t.Helper()
	env, err := Open(bytes.Clone(data))
	if err != nil {
		t.Fatal(err)
	}
	f(&env)
	out, err := msgpack.Marshal(&env)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// With a keyring, the validator accepts only envelopes signed by their
// sender's registered key: forged senders, tampered bodies or headers,
// unknown keys, missing or truncated signatures and the auditor are
// rejected as ReasonSignature and counted; checks that come first keep
// their own reasons.
func TestValidatorSignatures(t *testing.T) {
	d, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := d.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	sg := testSigners(t, d)
	outsider, err := NewDeployment(secJob, []string{"bank-a"})
	if err != nil {
		t.Fatal(err)
	}
	osg := testSigners(t, outsider)

	upd := &Update{Round: 1, Weight: 10, Params: Sensitive{v: []float32{1, 2, 3}}}
	envOf := func(from string) Envelope {
		return Envelope{Job: secJob, Kind: KindUpdate, From: from, Round: 1, Seq: 1, Time: 42}
	}
	seal := func(s *Signer, env Envelope, body any) []byte {
		b, err := s.Seal(env, body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	updA := Subject(secJob, KindUpdate, "bank-a")
	updB := Subject(secJob, KindUpdate, "bank-b")
	good := seal(sg["bank-a"], envOf("bank-a"), upd)
	model := Envelope{Job: secJob, Kind: KindModel, From: AggregatorID, Round: 1}
	tests := []struct {
		name    string
		subject string
		data    []byte
		reason  string
	}{
		{"signed by its sender", updA, good, ""},
		{"model signed by the aggregator", Subject(secJob, KindModel, "all"), seal(sg[AggregatorID], model, &Model{Round: 1, Params: Vector{1, 2, 3}}), ""},
		{"embeddings signed by their sender", Subject(secJob, KindEmb, "bank-a", "bank-b"),
			seal(sg["bank-a"], Envelope{Job: secJob, Kind: KindEmb, From: "bank-a", Round: 1},
				&Embeddings{Round: 1, Dim: 1, NodeIDs: []int64{7}, Data: Sensitive{v: []float32{0.5}}}), ""},
		{"unsigned", updA, sealT(t, envOf("bank-a"), upd), ReasonSignature},
		{"bank-a's key, sender bank-b", updB, forge(t, sg["bank-a"], envOf("bank-b"), upd), ReasonSignature},
		{"bank-a's key, sender the aggregator", Subject(secJob, KindModel, "all"), forge(t, sg["bank-a"], model, &Model{Round: 1}), ReasonSignature},
		{"tampered body", updA, edit(t, good, func(e *Envelope) { e.Body[len(e.Body)-1] ^= 1 }), ReasonSignature},
		{"body swapped", updA, edit(t, good, func(e *Envelope) {
			e.Body, _ = msgpack.Marshal(&Update{Round: 1, Weight: 1e9, Params: Sensitive{v: []float32{9, 9, 9}}})
		}), ReasonSignature},
		{"replayed into another round", updA, edit(t, good, func(e *Envelope) { e.Round = 2 }), ReasonSignature},
		{"sequence changed", updA, edit(t, good, func(e *Envelope) { e.Seq = 9 }), ReasonSignature},
		{"time changed", updA, edit(t, good, func(e *Envelope) { e.Time++ }), ReasonSignature},
		{"signature truncated", updA, edit(t, good, func(e *Envelope) { e.Sig = e.Sig[:32] }), ReasonSignature},
		{"signature of another envelope", updA, edit(t, good, func(e *Envelope) {
			other, _ := Open(seal(sg["bank-a"], Envelope{Job: secJob, Kind: KindUpdate, From: "bank-a", Round: 1, Seq: 2}, upd))
			e.Sig = other.Sig
		}), ReasonSignature},
		{"a key outside the keyring", updA, seal(osg["bank-a"], envOf("bank-a"), upd), ReasonSignature},
		{"a sender outside the keyring", Subject(secJob, KindUpdate, "bank-z"), forge(t, sg["bank-a"], envOf("bank-z"), upd), ReasonSignature},
		{"the auditor", Subject(secJob, KindUpdate, AuditorID), seal(sg[AuditorID], envOf(AuditorID), upd), ReasonSignature},
		// Earlier checks keep their reasons: a signature does not make a
		// message on the wrong subject, or a bank's model, acceptable.
		{"signed, on another's subject", updB, good, ReasonSubject},
		{"signed model from a bank", Subject(secJob, KindModel, "all"),
			seal(sg["bank-a"], Envelope{Job: secJob, Kind: KindModel, From: "bank-a"}, &Model{}), ReasonSender},
	}
	v := NewValidator(Schema{Job: secJob, NumParams: 3, Keyring: ring})
	plain := NewValidator(Schema{Job: secJob, NumParams: 3})
	want := uint64(0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := v.Open(tc.subject, tc.data)
			if got := ReasonOf(err); got != tc.reason {
				t.Fatalf("reason %q (%v), want %q", got, err, tc.reason)
			}
			if tc.reason == ReasonSignature {
				want++
				// Without a keyring, signatures are not looked at.
				if _, _, err := plain.Open(tc.subject, tc.data); err != nil {
					t.Fatalf("without a keyring: %v", err)
				}
			}
		})
	}
	if got := v.Rejects()[ReasonSignature]; got != want {
		t.Fatalf("%d signature rejects counted, want %d (%s)", got, want, v.RejectSummary())
	}
}

// A signer signs only as its own party.
func TestSignerRefusesOtherSenders(t *testing.T) {
	d, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	a := testSigners(t, d)["bank-a"]
	if _, err := a.Seal(Envelope{Job: secJob, Kind: KindUpdate, From: "bank-b"}, &Update{}); err == nil {
		t.Fatal("bank-a's signer sealed an envelope from bank-b")
	}
	if _, err := a.SignSealed(sealT(t, Envelope{Job: secJob, Kind: KindUpdate, From: "bank-b"}, &Update{})); err == nil {
		t.Fatal("bank-a's signer signed an envelope from bank-b")
	}
	if _, err := a.SignSealed([]byte("not an envelope")); err == nil {
		t.Fatal("signed garbage")
	}
}

// Over a real server with credentials, a transport with its party's signer
// signs what bus.Seal produced (publish, request and response), the
// receivers' keyring validates it, and the transport refuses to send an
// envelope from another party.
func TestSignedTransport(t *testing.T) {
	e := startSecureServer(t)
	conn := func(id string) *NATSTransport {
		nc, err := Connect(e.srv.ClientURL(), ConnectOptions{Name: id, Creds: e.seeds[id]})
		if err != nil {
			t.Fatal(err)
		}
		tr := NewNATSTransport(nc, true)
		t.Cleanup(func() { tr.Close() })
		s, err := CredsSigner(id, e.seeds[id])
		if err != nil || s == nil {
			t.Fatalf("signer of %s: %v, %v", id, s, err)
		}
		tr.SetSigner(s)
		return tr
	}
	agg, bank := conn(AggregatorID), conn("bank-a")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v := NewValidator(Schema{Job: secJob, Keyring: e.ring})
	got := make(chan error, 4)
	sub, err := agg.Subscribe(func(m Msg) {
		_, _, err := v.Open(m.Subject, m.Data)
		got <- err
		if m.Reply != "" {
			reply, err := Seal(Envelope{Job: secJob, Kind: KindHello, From: AggregatorID}, &HelloReply{Accepted: true})
			if err == nil {
				err = agg.Respond(m, reply)
			}
			if err != nil {
				got <- err
			}
		}
	}, Subject(secJob, KindUpdate, "*"), Subject(secJob, KindHello, "*"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	agg.Flush(ctx)

	upd := sealT(t, Envelope{Job: secJob, Kind: KindUpdate, From: "bank-a", Round: 1, Seq: 1}, &Update{Round: 1, Weight: 1})
	if err := bank.Publish(ctx, Subject(secJob, KindUpdate, "bank-a"), upd); err != nil {
		t.Fatal(err)
	}
	hello := sealT(t, Envelope{Job: secJob, Kind: KindHello, From: "bank-a", Seq: 2}, &Hello{})
	reply, err := bank.Request(ctx, Subject(secJob, KindHello, "bank-a"), hello)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-got; err != nil {
			t.Fatalf("aggregator rejected a signed message: %v", err)
		}
	}
	renv, err := Open(reply)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ring.Verify(&renv); err != nil {
		t.Fatalf("hello reply: %v", err)
	}
	asB := sealT(t, Envelope{Job: secJob, Kind: KindUpdate, From: "bank-b", Round: 1}, &Update{})
	if err := bank.Publish(ctx, Subject(secJob, KindUpdate, "bank-a"), asB); err == nil {
		t.Fatal("bank-a's transport sent an envelope from bank-b")
	}
}

// Signing re-encodes a sealed 1 MiB update; verifying hashes it once.
func BenchmarkSignature(b *testing.B) {
	d, err := NewDeployment(secJob, []string{"bank-a"})
	if err != nil {
		b.Fatal(err)
	}
	ring, _ := d.Keyring()
	s := testSigners(b, d)["bank-a"]
	upd := &Update{Round: 1, Weight: 1, Params: Sensitive{v: make([]float32, 1<<18)}}
	sealed := sealT(b, Envelope{Job: secJob, Kind: KindUpdate, From: "bank-a", Round: 1}, upd)
	b.Run("sign-sealed-1MiB", func(b *testing.B) {
		b.SetBytes(int64(len(sealed)))
		for b.Loop() {
			if _, err := s.SignSealed(sealed); err != nil {
				b.Fatal(err)
			}
		}
	})
	signed, _ := s.SignSealed(sealed)
	env, _ := Open(signed)
	b.Run("verify-1MiB", func(b *testing.B) {
		b.SetBytes(int64(len(signed)))
		for b.Loop() {
			if err := ring.Verify(&env); err != nil {
				b.Fatal(err)
			}
		}
	})
}
