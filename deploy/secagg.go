package deploy

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/nats-io/nkeys"

	"graphfed/bus"
	"graphfed/secagg"
)

// Secure aggregation signs its key advertisements and survivor lists with
// each party's identity: the NKey `graphfed keys` wrote, checked against
// the job's keyring. A plain in-process job (a simulation without keys)
// has no such identities, so its environment makes fresh ones in memory
// (SecAggIdentities): its protocol messages are still signed and checked,
// by keys that never leave the process.

// SecAggIdentities are in-memory keys for the parties of a plain
// in-process job.
type SecAggIdentities struct {
	ring    *bus.Keyring
	signers map[string]*bus.Signer
}

// NewSecAggIdentities makes fresh identities for job's aggregator and
// banks.
func NewSecAggIdentities(job string, banks []string) (*SecAggIdentities, error) {
	dep, err := bus.NewDeployment(job, banks)
	if err != nil {
		return nil, fmt.Errorf("deploy: secure aggregation identities: %w", err)
	}
	ring, err := dep.Keyring()
	if err != nil {
		return nil, fmt.Errorf("deploy: secure aggregation identities: %w", err)
	}
	ids := &SecAggIdentities{ring: ring, signers: map[string]*bus.Signer{}}
	for _, c := range dep.Creds {
		kp, err := nkeys.FromSeed(c.Seed)
		if err != nil {
			return nil, fmt.Errorf("deploy: secure aggregation identities: %s: %w", c.ID, err)
		}
		if ids.signers[c.ID], err = bus.NewSigner(c.ID, kp); err != nil {
			return nil, fmt.Errorf("deploy: secure aggregation identities: %w", err)
		}
	}
	return ids, nil
}

// secAggSeeded is the protocol's randomness of a party whose noise is
// seeded: a ChaCha8 stream keyed by SHA-256 of the seed (keys, secrets
// and rounding then repeat; HPKE's ephemeral keys still come from
// crypto/rand, and change no result).
func secAggSeeded(seed uint64) io.Reader {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seed)
	return rand.NewChaCha8(sha256.Sum256(append([]byte("graphfed secagg seeded v1\x00"), b[:]...)))
}

// secAggIdentity is what party signs and verifies secure aggregation
// with: its NKey and the job's keyring when it has them, else the
// environment's in-memory identities.
func secAggIdentity(party string, ring *bus.Keyring, signer *bus.Signer, local *SecAggIdentities) (secagg.Signer, secagg.Verifier, error) {
	switch {
	case ring != nil && signer != nil:
		return bus.SecAggSigner(signer), bus.SecAggVerifier(ring), nil
	case local != nil && local.signers[party] != nil:
		return bus.SecAggSigner(local.signers[party]), bus.SecAggVerifier(local.ring), nil
	}
	return nil, nil, fmt.Errorf("secure aggregation signs with each party's key: %s needs the job's keyring and its seed (graphfed keys), or run with --secagg off", party)
}
