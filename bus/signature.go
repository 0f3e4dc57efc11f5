package bus

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/nats-io/nkeys"
	"github.com/zeebo/blake3"
)

// sigDomain separates graphfed envelope signatures from anything else the
// same key signs (the NATS server's login nonce above all).
const sigDomain = "graphfed envelope signature v2\x00"

// digest is what a signature covers: a 256-bit BLAKE3 hash of the domain
// and every envelope field but Sig, each length-prefixed or fixed-width,
// body and blob reference included. It does not depend on the msgpack
// encoding, so a re-encoded envelope verifies as long as its fields are the
// same. Hashing first keeps a 64 MiB model from being copied into one
// buffer for ed25519.
//
// Why BLAKE3 (envelope schema 2; schema 1 hashed with SHA-256): verifying a
// signed 4 MiB update is almost all hashing, and the aggregator hashes every
// update it ingests. On the 2-core development machine BLAKE3 (AVX2) hashes
// about twice as fast as SHA-256 with the CPU's SHA extensions
// (BenchmarkDigest), which kept signed ingest with 4 agents at 0.76× raw
// NATS.
//
// The subject is not covered: the validator checks that the subject and
// the envelope agree (job, kind, sender), and NATS permissions decide who
// may publish where; the <to> token of an embedding is enforced by them.
func (e *Envelope) digest() []byte {
	h := blake3.New()
	io.WriteString(h, sigDomain)
	var n [8]byte
	put := func(u uint64) {
		binary.BigEndian.PutUint64(n[:], u)
		h.Write(n[:])
	}
	h.Write([]byte{byte(e.Version)}) // Open admits only SchemaVersion
	for _, s := range []string{e.Job, string(e.Kind), e.From} {
		put(uint64(len(s)))
		io.WriteString(h, s)
	}
	put(e.Round)
	put(e.Seq)
	put(uint64(e.Time))
	put(uint64(len(e.Body)))
	h.Write(e.Body)
	// A reference is hashed only when present, so that inline envelopes
	// keep the digest they always had; the body's length prefix fixes
	// where it starts.
	if len(e.Ref) > 0 {
		put(uint64(len(e.Ref)))
		h.Write(e.Ref)
	}
	return h.Sum(nil)
}

// Signer signs envelopes as one party with its NKey (ed25519). It signs
// only envelopes whose sender is that party, so a transport given one
// party's signer cannot be used to speak for another. Safe for concurrent
// use.
type Signer struct {
	id  string
	pub string
	kp  nkeys.KeyPair
}

// NewSigner returns a signer for party id with the user key pair kp.
func NewSigner(id string, kp nkeys.KeyPair) (*Signer, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("bus: signer: party id %q is not [a-z0-9-]{1,64}", id)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("bus: signer %s: %w", id, err)
	}
	if !nkeys.IsValidPublicUserKey(pub) {
		return nil, fmt.Errorf("bus: signer %s: %s is not a user key", id, pub)
	}
	if _, err := kp.Seed(); err != nil {
		return nil, fmt.Errorf("bus: signer %s: a public key cannot sign: %w", id, err)
	}
	return &Signer{id: id, pub: pub, kp: kp}, nil
}

// LoadSigner reads party id's seed file.
func LoadSigner(id, seedPath string) (*Signer, error) {
	kp, err := LoadSeedFile(seedPath)
	if err != nil {
		return nil, err
	}
	return NewSigner(id, kp)
}

// CredsSigner is the signer for a CLI's --creds file: party id's signer when
// the file holds an NKey seed (as `graphfed keys` writes them), nil when
// path is empty or holds a JWT (then envelopes go unsigned).
func CredsSigner(id, path string) (*Signer, error) {
	if path == "" {
		return nil, nil
	}
	jwt, err := credsHoldJWT(path)
	if err != nil || jwt {
		return nil, err
	}
	return LoadSigner(id, path)
}

// ID is the party the signer signs as.
func (s *Signer) ID() string { return s.id }

// PublicKey is the signer's NKey user public key.
func (s *Signer) PublicKey() string { return s.pub }

// Sign sets env.Sig. It sets env.Version to SchemaVersion first, the only
// version this build writes, since the signature covers it.
func (s *Signer) Sign(env *Envelope) error {
	if env.From != s.id {
		return fmt.Errorf("bus: sign %s: envelope from %q, the signer is %s", env.Kind, env.From, s.id)
	}
	env.Version = SchemaVersion
	env.Sig = nil
	sig, err := s.kp.Sign(env.digest())
	if err != nil {
		return fmt.Errorf("bus: sign %s: %w", env.Kind, err)
	}
	env.Sig = sig
	return nil
}

// Seal is bus.Seal with the envelope signed.
func (s *Signer) Seal(env Envelope, body any) ([]byte, error) {
	frame, b, err := marshalBody(body)
	if err != nil {
		return nil, fmt.Errorf("bus: seal %s body: %w", env.Kind, err)
	}
	env.Body, env.frame = b, frame
	return s.sealEnvelope(env)
}

// SignSealed signs the wire bytes of an envelope sealed unsigned (or signed
// before) and returns the new wire bytes. It lets a transport sign what
// code written before credentials existed seals with bus.Seal; the cost is
// one decode and one encode of the message.
func (s *Signer) SignSealed(data []byte) ([]byte, error) {
	env, err := Open(data)
	if err != nil {
		return nil, fmt.Errorf("bus: sign: not an envelope: %w", err)
	}
	return s.sealEnvelope(env)
}

func (s *Signer) sealEnvelope(env Envelope) ([]byte, error) {
	if err := s.Sign(&env); err != nil {
		return nil, err
	}
	return env.encode(), nil
}

// SignEntry signs a privacy ledger entry's digest (privacy.Entry.Digest,
// which carries its own domain string): the signer is the gate's
// privacy.EntrySigner.
func (s *Signer) SignEntry(digest []byte) ([]byte, error) {
	sig, err := s.kp.Sign(digest)
	if err != nil {
		return nil, fmt.Errorf("bus: sign ledger entry as %s: %w", s.id, err)
	}
	return sig, nil
}
