package bus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/nats-io/nkeys"
)

// KeyringFormat names the keyring manifest's layout; ParseKeyring refuses
// any other.
const KeyringFormat = "graphfed-keyring/1"

// Keyring holds the public keys of a job's parties: it verifies envelope
// signatures (Verify) and is the source of the server configuration
// (ServerConfig). It is immutable and safe for concurrent use.
type Keyring struct {
	job     string
	parties []Party // sorted by id
	entries map[string]keyringEntry
}

type keyringEntry struct {
	party Party
	key   nkeys.KeyPair // public only
}

// keyringFile is the manifest that `graphfed keys` writes as keyring.json.
type keyringFile struct {
	Format  string  `json:"format"`
	Job     string  `json:"job"`
	Parties []Party `json:"parties"`
}

// NewKeyring checks parties as a set (valid ids and user keys, no id or key
// twice, at most one aggregator) and builds the keyring of job.
func NewKeyring(job string, parties []Party) (*Keyring, error) {
	if !ValidID(job) {
		return nil, fmt.Errorf("bus: keyring: job %q is not [a-z0-9-]{1,64}", job)
	}
	if len(parties) == 0 {
		return nil, fmt.Errorf("bus: keyring: job %s has no parties", job)
	}
	k := &Keyring{job: job, entries: make(map[string]keyringEntry, len(parties))}
	keys := map[string]string{}
	aggregators := 0
	for _, p := range parties {
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("bus: keyring: %w", err)
		}
		if _, dup := k.entries[p.ID]; dup {
			return nil, fmt.Errorf("bus: keyring: party %s listed twice", p.ID)
		}
		// One key, one identity: the server could not tell two parties
		// sharing a key apart, and neither could a verifier.
		if other, dup := keys[p.PublicKey]; dup {
			return nil, fmt.Errorf("bus: keyring: parties %s and %s share a key", other, p.ID)
		}
		if p.Role == RoleAggregator {
			aggregators++
		}
		kp, err := nkeys.FromPublicKey(p.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("bus: keyring: party %s: %w", p.ID, err)
		}
		keys[p.PublicKey] = p.ID
		k.entries[p.ID] = keyringEntry{party: p, key: kp}
		k.parties = append(k.parties, p)
	}
	if aggregators > 1 {
		return nil, fmt.Errorf("bus: keyring: %d aggregators, want at most one", aggregators)
	}
	sort.Slice(k.parties, func(i, j int) bool { return k.parties[i].ID < k.parties[j].ID })
	return k, nil
}

// ParseKeyring decodes a keyring manifest strictly: known fields only, one
// JSON object, the KeyringFormat, and a valid set of parties.
func ParseKeyring(data []byte) (*Keyring, error) {
	var f keyringFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("bus: keyring: decoding manifest: %w", err)
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) != 0 {
		return nil, errors.New("bus: keyring: trailing data after the manifest")
	}
	if f.Format != KeyringFormat {
		return nil, fmt.Errorf("bus: keyring: format %q, want %q", f.Format, KeyringFormat)
	}
	return NewKeyring(f.Job, f.Parties)
}

// LoadKeyring reads the manifest at path.
func LoadKeyring(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bus: keyring: %w", err)
	}
	k, err := ParseKeyring(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return k, nil
}

// Encode renders the manifest, indented, parties sorted by id.
func (k *Keyring) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(keyringFile{Format: KeyringFormat, Job: k.job, Parties: k.parties}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("bus: keyring: encoding manifest: %w", err)
	}
	return append(b, '\n'), nil
}

// Job is the keyring's job.
func (k *Keyring) Job() string { return k.job }

// Parties lists the parties sorted by id.
func (k *Keyring) Parties() []Party { return append([]Party(nil), k.parties...) }

// Banks are the ids of the keyring's banks, in its order.
func (k *Keyring) Banks() []string {
	var out []string
	for _, p := range k.parties {
		if p.Role == RoleBank {
			out = append(out, p.ID)
		}
	}
	return out
}

// Party returns the party with id.
func (k *Keyring) Party(id string) (Party, bool) {
	e, ok := k.entries[id]
	return e.party, ok
}

// Verify checks that env carries a valid signature by the key registered
// for its sender. Unsigned envelopes, unknown senders, the auditor (who
// signs nothing) and envelopes of another job fail.
func (k *Keyring) Verify(env *Envelope) error { return k.verify(env, nil) }

// verify is Verify with env's digest computed ahead (nil: compute it).
func (k *Keyring) verify(env *Envelope, digest []byte) error {
	if env.Job != k.job {
		return fmt.Errorf("envelope of job %q checked against the keyring of job %s", env.Job, k.job)
	}
	e, ok := k.entries[env.From]
	if !ok {
		return fmt.Errorf("no key registered for sender %q", env.From)
	}
	if e.party.Role == RoleAuditor {
		return fmt.Errorf("sender %s is an auditor, which signs nothing", env.From)
	}
	if len(env.Sig) == 0 {
		return fmt.Errorf("unsigned %s from %s", env.Kind, env.From)
	}
	if digest == nil {
		digest = env.digest()
	}
	if err := e.key.Verify(digest, env.Sig); err != nil {
		return fmt.Errorf("%s from %s: signature does not verify with %s's key: %w", env.Kind, env.From, env.From, err)
	}
	return nil
}

// VerifyEntry checks a privacy ledger entry's signature (the gate's and
// the ledger readers' privacy.KeyVerifier): sig must be client's signature
// over digest with the key the keyring lists for it, and client must be a
// bank of the keyring's job (the only parties that release) or its
// aggregator (whose round records state the banks' ledger heads; privacy
// refuses any other entry of the aggregator's).
func (k *Keyring) VerifyEntry(job, client string, digest, sig []byte) error {
	if job != k.job {
		return fmt.Errorf("entry of job %q checked against the keyring of job %s", job, k.job)
	}
	e, ok := k.entries[client]
	switch {
	case !ok:
		return fmt.Errorf("no key registered for client %q", client)
	case e.party.Role != RoleBank && e.party.Role != RoleAggregator:
		return fmt.Errorf("client %s is the %s, which writes no ledger entries", client, e.party.Role)
	}
	if err := e.key.Verify(digest, sig); err != nil {
		return fmt.Errorf("signature does not verify with %s's key: %w", client, err)
	}
	return nil
}
