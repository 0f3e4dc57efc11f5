package secagg

import (
	"crypto/ecdh"
	"crypto/hpke"
	"fmt"
)

// Share encryption: HPKE (RFC 9180) in Base mode with DHKEM(X25519,
// HKDF-SHA256), HKDF-SHA256 and ChaCha20Poly1305, to the recipient's
// advertised encryption key. The associated data binds the job, the round,
// the sender and the recipient, so a sealed share cannot be replayed into
// another round or passed off as another sender's; the KEM binds the
// recipient's public key, so only its holder opens it. The ephemeral key
// comes from the system's secure random source (crypto/hpke draws it
// there regardless of any reader).

// sealInfo is the HPKE info string (the application's context).
const sealInfo = "graphfed/secagg/v1 share"

// sealEncSize is the size of DHKEM(X25519)'s encapsulated key.
const sealEncSize = 32

var (
	sealKEM  = hpke.DHKEM(ecdh.X25519())
	sealKDF  = hpke.HKDFSHA256()
	sealAEAD = hpke.ChaCha20Poly1305()
)

// ShareContext is what a sealed share is bound to.
type ShareContext struct {
	Job      string
	Round    uint64
	From, To string
}

func (c ShareContext) aad() []byte {
	var e enc
	e.tag(tagShare)
	e.str(c.Job)
	e.u64(c.Round)
	e.str(c.From)
	e.str(c.To)
	return e.b
}

// SealTo encrypts plaintext to the recipient's X25519 public key; the
// result is the encapsulated key followed by the AEAD ciphertext.
func SealTo(recipient []byte, ctx ShareContext, plaintext []byte) ([]byte, error) {
	const op = "seal"
	pub, err := sealKEM.NewPublicKey(recipient)
	if err != nil {
		return nil, &Error{Op: op, Party: ctx.To, Err: fmt.Errorf("recipient key: %w", err)}
	}
	encap, s, err := hpke.NewSender(pub, sealKDF, sealAEAD, []byte(sealInfo))
	if err != nil {
		return nil, &Error{Op: op, Party: ctx.To, Err: fmt.Errorf("hpke: %w", err)}
	}
	ct, err := s.Seal(ctx.aad(), plaintext)
	if err != nil {
		return nil, &Error{Op: op, Party: ctx.To, Err: fmt.Errorf("hpke: %w", err)}
	}
	return append(encap, ct...), nil
}

// OpenFrom decrypts SealTo's output with the recipient's key pair; a wrong
// recipient, a wrong context or a tampered ciphertext fails.
func OpenFrom(k *KeyPair, ctx ShareContext, sealed []byte) ([]byte, error) {
	const op = "open"
	if len(sealed) < sealEncSize {
		return nil, perr(op, ctx.From, ErrMalformed, "sealed share of %d bytes", len(sealed))
	}
	priv, err := hpke.NewDHKEMPrivateKey(k.priv)
	if err != nil {
		return nil, &Error{Op: op, Party: ctx.From, Err: fmt.Errorf("hpke key: %w", err)}
	}
	r, err := hpke.NewRecipient(sealed[:sealEncSize], priv, sealKDF, sealAEAD, []byte(sealInfo))
	if err != nil {
		return nil, &Error{Op: op, Party: ctx.From, Err: fmt.Errorf("hpke: %w", err)}
	}
	pt, err := r.Open(ctx.aad(), sealed[sealEncSize:])
	if err != nil {
		return nil, perr(op, ctx.From, ErrDecrypt, "share for %s in job %s round %d: %v", ctx.To, ctx.Job, ctx.Round, err)
	}
	return pt, nil
}
