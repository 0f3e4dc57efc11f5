package secagg

import (
	"crypto/ecdh"
	"crypto/subtle"
	"fmt"
	"io"
)

// Signer signs canonical message bytes with the caller's identity (in the
// runtime: the party's NKey, as bus.Signer.SignEntry does for ledger
// entries).
type Signer interface {
	Sign(msg []byte) ([]byte, error)
}

// Verifier checks that sig is party's signature over msg, with the key the
// caller's keyring lists for party (in the runtime: bus.Keyring.VerifyEntry
// for the job). It returns an error for an unknown party or a bad
// signature.
type Verifier interface {
	Verify(party string, msg, sig []byte) error
}

// KeySize is the size of an X25519 public or private key.
const KeySize = 32

// KeyPair is an X25519 key pair.
type KeyPair struct {
	priv *ecdh.PrivateKey
}

// GenerateKeyPair draws a key pair's 32-byte scalar from rng.
func GenerateKeyPair(rng io.Reader) (*KeyPair, error) {
	var k [KeySize]byte
	if _, err := io.ReadFull(rng, k[:]); err != nil {
		return nil, wrap("keys.generate", fmt.Errorf("read randomness: %w", err))
	}
	return NewKeyPair(k[:])
}

// NewKeyPair is the key pair of a 32-byte X25519 scalar (clamped by X25519
// itself, so any 32 bytes are a key).
func NewKeyPair(private []byte) (*KeyPair, error) {
	priv, err := ecdh.X25519().NewPrivateKey(private)
	if err != nil {
		return nil, wrap("keys.new", err)
	}
	return &KeyPair{priv: priv}, nil
}

// Public is the 32-byte public key.
func (k *KeyPair) Public() []byte { return k.priv.PublicKey().Bytes() }

// Private is the 32-byte private scalar (what the mask key's Shamir shares
// carry).
func (k *KeyPair) Private() []byte { return k.priv.Bytes() }

// ECDH is the X25519 shared secret with a peer's public key; it fails on a
// low-order peer key (an all-zero secret).
func (k *KeyPair) ECDH(peer []byte) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(peer)
	if err != nil {
		return nil, wrap("keys.ecdh", err)
	}
	s, err := k.priv.ECDH(pub)
	if err != nil {
		return nil, wrap("keys.ecdh", err)
	}
	return s, nil
}

// Advertisement is a party's keys for one round: EncKey receives its
// sealed shares, MaskKey seeds its pairwise masks.
type Advertisement struct {
	Job          string
	Party        string
	Round        uint64
	ConfigDigest [32]byte
	EncKey       []byte // X25519 public key, 32 bytes
	MaskKey      []byte // X25519 public key, 32 bytes
}

// SignedAdvertisement is an advertisement and its party's signature over
// its canonical bytes.
type SignedAdvertisement struct {
	Advertisement
	Sig []byte
}

// Bytes is the canonical encoding that the party signs.
func (a *Advertisement) Bytes() []byte {
	var e enc
	a.encode(&e)
	return e.b
}

func (a *Advertisement) encode(e *enc) {
	e.tag(tagAdvertisement)
	e.str(a.Job)
	e.str(a.Party)
	e.u64(a.Round)
	e.fixed(a.ConfigDigest[:])
	e.blob(a.EncKey)
	e.blob(a.MaskKey)
}

func (a *Advertisement) check() error {
	switch {
	case a.Job == "" || len(a.Job) > maxID:
		return fmt.Errorf("%w: job id %q", ErrMalformed, a.Job)
	case a.Party == "" || len(a.Party) > maxID:
		return fmt.Errorf("%w: party id %q", ErrMalformed, a.Party)
	case len(a.EncKey) != KeySize || len(a.MaskKey) != KeySize:
		return fmt.Errorf("%w: keys of %d and %d bytes, want %d", ErrMalformed, len(a.EncKey), len(a.MaskKey), KeySize)
	case subtle.ConstantTimeCompare(a.EncKey, a.MaskKey) == 1:
		return fmt.Errorf("%w: the encryption key and the mask key are the same", ErrMalformed)
	}
	return nil
}

// SignAdvertisement signs a with the party's identity.
func SignAdvertisement(a Advertisement, s Signer) (SignedAdvertisement, error) {
	if err := a.check(); err != nil {
		return SignedAdvertisement{}, perr("keys.sign", a.Party, err, "advertisement")
	}
	sig, err := s.Sign(a.Bytes())
	if err != nil {
		return SignedAdvertisement{}, &Error{Op: "keys.sign", Party: a.Party, Err: err}
	}
	return SignedAdvertisement{Advertisement: a, Sig: sig}, nil
}

// Verify checks that the advertisement is signed by the party it lists
// (with the key v lists for that party), and that it is well formed.
func (s *SignedAdvertisement) Verify(v Verifier) error {
	if err := s.check(); err != nil {
		return &Error{Op: "keys.verify", Party: s.Party, Err: err}
	}
	if len(s.Sig) == 0 {
		return perr("keys.verify", s.Party, ErrSignature, "advertisement is unsigned")
	}
	if err := v.Verify(s.Party, s.Bytes(), s.Sig); err != nil {
		return perr("keys.verify", s.Party, ErrSignature, "advertisement is not signed by %s: %v", s.Party, err)
	}
	return nil
}

// Encode is the wire encoding.
func (s *SignedAdvertisement) Encode() []byte {
	var e enc
	s.encode(&e)
	e.blob(s.Sig)
	return e.b
}

// DecodeSignedAdvertisement decodes Encode's bytes; it checks the form, not
// the signature (Verify does).
func DecodeSignedAdvertisement(b []byte) (SignedAdvertisement, error) {
	d := dec{b: b}
	var s SignedAdvertisement
	s.Advertisement = decodeAdvertisement(&d)
	s.Sig = d.blob("signature")
	if err := d.done("advertisement"); err != nil {
		return SignedAdvertisement{}, wrap("decode.advertisement", err)
	}
	if err := s.check(); err != nil {
		return SignedAdvertisement{}, wrap("decode.advertisement", err)
	}
	return s, nil
}

func decodeAdvertisement(d *dec) Advertisement {
	var a Advertisement
	d.tag(tagAdvertisement)
	a.Job = d.id("job")
	a.Party = d.id("party")
	a.Round = d.u64()
	copy(a.ConfigDigest[:], d.take(32, "config digest"))
	a.EncKey = d.blob("encryption key")
	a.MaskKey = d.blob("mask key")
	return a
}
