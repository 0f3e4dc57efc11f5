package deploy

import (
	"fmt"

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
