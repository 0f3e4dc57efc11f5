package secagg

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"testing"

	"golang.org/x/crypto/chacha20"
)

// detRand is a deterministic io.Reader: the ChaCha20 keystream of a label.
type detRand struct{ c *chacha20.Cipher }

func newDetRand(label string) *detRand {
	var key [32]byte
	copy(key[:], label)
	c, err := chacha20.NewUnauthenticatedCipher(key[:], make([]byte, 12))
	if err != nil {
		panic(err)
	}
	return &detRand{c: c}
}

func (r *detRand) Read(p []byte) (int, error) {
	clear(p)
	r.c.XORKeyStream(p, p)
	return len(p), nil
}

// keyring is a test identity keyring: an ed25519 key per party, as the
// runtime's NKeys are.
type keyring struct{ pub map[string]ed25519.PublicKey }

type edSigner struct{ priv ed25519.PrivateKey }

func (s edSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.priv, msg), nil }

func (k keyring) Verify(party string, msg, sig []byte) error {
	pub, ok := k.pub[party]
	if !ok {
		return fmt.Errorf("no key for %q", party)
	}
	if !ed25519.Verify(pub, msg, sig) {
		return errors.New("bad signature")
	}
	return nil
}

func newKeyring(t testing.TB, ids ...string) (keyring, map[string]Signer) {
	t.Helper()
	k := keyring{pub: map[string]ed25519.PublicKey{}}
	signers := map[string]Signer{}
	for _, id := range ids {
		pub, priv, err := ed25519.GenerateKey(newDetRand("id-" + id))
		if err != nil {
			t.Fatal(err)
		}
		k.pub[id] = pub
		signers[id] = edSigner{priv: priv}
	}
	return k, signers
}

var _ io.Reader = (*detRand)(nil)
