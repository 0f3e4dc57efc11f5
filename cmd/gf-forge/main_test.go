package main

import (
	"bytes"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"graphfed/bus"
)

// keys writes the seed of bank-a of a fresh deployment and returns its
// path with the job's keyring.
func keys(t *testing.T) (string, *bus.Keyring) {
	t.Helper()
	d, err := bus.NewDeployment("aml-1", []string{"bank-a", "bank-b"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := d.Credential("bank-a")
	path := filepath.Join(t.TempDir(), "bank-a.nk")
	if err := bus.WriteSeedFile(path, d.Job, c); err != nil {
		t.Fatal(err)
	}
	k, err := d.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	return path, k
}

// open forges with args and opens the output with bus's validator, as
// the aggregator or an agent would (signature against the keyring).
func open(t *testing.T, k *bus.Keyring, numParams int, args ...string) (bus.Envelope, any, []byte, string) {
	t.Helper()
	var out bytes.Buffer
	subject, err := run(args, &out)
	if err != nil {
		t.Fatal(err)
	}
	v := bus.NewValidator(bus.Schema{Job: "aml-1", NumParams: numParams, Keyring: k})
	env, body, err := v.Open(subject, out.Bytes())
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	return env, body, out.Bytes(), subject
}

func TestForgedUpdateOpensAndVerifies(t *testing.T) {
	seed, k := keys(t)
	common := []string{"--job", "aml-1", "--from", "bank-a", "--seed", seed}
	env, body, data, subject := open(t, k, 10, append(common, "update", "--round", "2", "--params", "10", "--value", "1e30", "--weight", "1e15", "--grad")...)
	if subject != "gf.aml-1.update.bank-a" || env.Kind != bus.KindUpdate || env.Round != 2 || env.From != "bank-a" {
		t.Fatalf("subject %s, envelope %+v", subject, env)
	}
	u, ok := body.(*bus.Update)
	if !ok {
		t.Fatalf("body %T", body)
	}
	if u.Round != 2 || u.BaseRound != 1 || u.Weight != 1e15 || u.Params.Len() != 10 || u.Grad.Len() != 10 {
		t.Fatalf("update %+v", u)
	}
	for _, x := range append(u.Params.Floats(), u.Grad.Floats()...) {
		if x != float32(1e30) {
			t.Fatalf("value %v, want 1e30", x)
		}
	}
	// One flipped byte of the body and the signature no longer verifies.
	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 1
	v := bus.NewValidator(bus.Schema{Job: "aml-1", NumParams: 10, Keyring: k})
	if _, _, err := v.Open(subject, bad); bus.ReasonOf(err) != bus.ReasonSignature {
		t.Fatalf("tampered envelope: %v, want a signature reject", err)
	}
	// bank-a's key cannot speak for bank-b.
	var out bytes.Buffer
	if _, err := run([]string{"--job", "aml-1", "--from", "bank-b", "--seed", seed, "update", "--params", "10"}, &out); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Open("gf.aml-1.update.bank-b", out.Bytes()); bus.ReasonOf(err) != bus.ReasonSignature {
		t.Fatalf("bank-b's update signed with bank-a's key: %v, want a signature reject", err)
	}
}

func TestForgedHelloOpensAndVerifies(t *testing.T) {
	seed, k := keys(t)
	env, body, _, subject := open(t, k, 0, "--job", "aml-1", "--from", "bank-a", "--seed", seed, "--seq", "7", "--time", "1700000000000000000",
		"hello", "--schema", "evil", "--params", "1")
	h, ok := body.(*bus.Hello)
	if !ok || subject != "gf.aml-1.hello.bank-a" || env.Seq != 7 || env.Time != 1700000000000000000 {
		t.Fatalf("%s %+v %T", subject, env, body)
	}
	if h.SchemaHash != "evil" || h.NumParams != 1 || h.TrainSize != 1 || h.Algo != "cefedgnn" {
		t.Fatalf("hello %+v", h)
	}
}

func TestForgedEmbeddingsOpenAndVerify(t *testing.T) {
	seed, k := keys(t)
	const size = 1 << 20
	_, body, data, subject := open(t, k, 0, "--job", "aml-1", "--from", "bank-a", "--seed", seed,
		"emb", "--to", "bank-b", "--round", "2", "--bytes", strconv.Itoa(size))
	e, ok := body.(*bus.Embeddings)
	if !ok || subject != "gf.aml-1.emb.bank-a.bank-b" {
		t.Fatalf("%s %T", subject, body)
	}
	rows := size / (4*64 + 9)
	if e.Round != 2 || e.Dim != 64 || len(e.NodeIDs) != rows || e.Data.Len() != rows*64 || e.NodeIDs[0] != 1<<40 {
		t.Fatalf("embeddings: round %d dim %d %d ids from %d, %d values", e.Round, e.Dim, len(e.NodeIDs), e.NodeIDs[0], e.Data.Len())
	}
	if n := len(data); math.Abs(float64(n-size)) > 0.01*size {
		t.Fatalf("%d bytes, want about %d", n, size)
	}
}

func TestUsageErrors(t *testing.T) {
	seed, _ := keys(t)
	for _, args := range [][]string{
		{},
		{"--job", "aml-1", "--from", "bank-a", "update"},
		{"--job", "aml-1", "--from", "bank-a", "--seed", seed, "model"},
		{"--job", "aml-1", "--from", "bank-a", "--seed", seed, "update"},
		{"--job", "aml-1", "--from", "bank-a", "--seed", seed, "emb"},
		{"--job", "aml-1", "--from", "bank-a", "--seed", seed, "hello", "extra"},
	} {
		if _, err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
