package bus

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"

	"github.com/nats-io/nkeys"
)

// DeriveSecret derives n bytes from the signer's NKey seed with
// HKDF-SHA256 and info (privacy.SecretDeriver): secrets only this party
// can compute, the same in every one of its lives, without the seed
// leaving the signer. The privacy gate keys the node ids it writes in the
// ledger with one (privacy.DeriveNodeKey); info separates its uses.
func (s *Signer) DeriveSecret(info string, n int) ([]byte, error) {
	seed, err := s.kp.Seed()
	if err != nil {
		return nil, fmt.Errorf("bus: signer %s: derive secret: %w", s.id, err)
	}
	_, raw, err := nkeys.DecodeSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("bus: signer %s: derive secret: %w", s.id, err)
	}
	// The seed is the ed25519 private key's seed: high-entropy key
	// material, HKDF's extract step's input as it is.
	out, err := hkdf.Key(sha256.New, raw, nil, info, n)
	if err != nil {
		return nil, fmt.Errorf("bus: signer %s: derive secret: %w", s.id, err)
	}
	return out, nil
}
