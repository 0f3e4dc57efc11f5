package bus

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/nats-io/nkeys"
)

// Role is what a party may do in a job; it selects the party's NATS
// account and allow-list (accounts.go) and whether its signature is
// accepted.
type Role string

const (
	// RoleAggregator runs the rounds: it reads updates, hellos, metrics and
	// byes, publishes rounds and models, answers hellos, and creates the
	// job's ledger stream. It never reads embeddings.
	RoleAggregator Role = "aggregator"
	// RoleBank is one organisation's agent: it publishes only on subjects
	// that name it as the sender and reads only what is addressed to it or
	// to everyone.
	RoleBank Role = "bank"
	// RoleAuditor reads the ledger and the job's public subjects and
	// publishes nothing but JetStream read requests; it signs nothing.
	RoleAuditor Role = "auditor"
	// RoleLedgerAdmin administers the ledger account (JobAccounts): it
	// creates the job's ledger streams. It is no party of the job: it is
	// never in the keyring, signs nothing, and belongs to whoever operates
	// the NATS servers.
	RoleLedgerAdmin Role = "ledger-admin"
)

// AuditorID is the party id graphfed keys gives the auditor.
const AuditorID = "auditor"

// Party is one holder of credentials in a job: its id (the envelope's From
// and the subject token that names it), its role and its NKey user public
// key. The public key is both its NATS login and its signature key.
type Party struct {
	ID        string `json:"id"`
	Role      Role   `json:"role"`
	PublicKey string `json:"public_key"`
}

// check validates one party on its own; Keyring checks the set.
func (p Party) check() error {
	if !ValidID(p.ID) {
		return fmt.Errorf("party id %q is not [a-z0-9-]{1,64}", p.ID)
	}
	switch p.Role {
	case RoleAggregator, RoleAuditor:
	case RoleBank:
		// A bank called "all" would receive every personalized model on
		// gf.<job>.model.all; one called like another role would be
		// mistaken for it in logs and reports.
		if p.ID == "all" || p.ID == AggregatorID || p.ID == AuditorID {
			return fmt.Errorf("bank id %q is reserved", p.ID)
		}
	default:
		return fmt.Errorf("party %s: unknown role %q", p.ID, p.Role)
	}
	if !nkeys.IsValidPublicUserKey(p.PublicKey) {
		return fmt.Errorf("party %s: %q is not an NKey user public key", p.ID, p.PublicKey)
	}
	return nil
}

// Credential is a party with its secret seed.
type Credential struct {
	Party
	Seed []byte // NKey user seed, "SU..."
}

// Deployment is a job's full set of credentials: one aggregator, the banks
// in the order given, and one auditor. Only `graphfed keys` holds all the
// seeds at once; each party then keeps its own.
type Deployment struct {
	Job   string
	Creds []Credential
	// LedgerAdmin is the ledger account's user (RoleLedgerAdmin), kept
	// apart from the parties' credentials.
	LedgerAdmin Credential
}

// NewDeployment creates fresh NKey user keys (from crypto/rand) for the
// aggregator, every bank and the auditor of job.
func NewDeployment(job string, banks []string) (*Deployment, error) {
	if !ValidID(job) {
		return nil, fmt.Errorf("bus: keys: job %q is not [a-z0-9-]{1,64}", job)
	}
	if len(banks) == 0 {
		return nil, errors.New("bus: keys: no banks")
	}
	d := &Deployment{Job: job}
	add := func(id string, role Role) error {
		c, err := newCredential(id, role)
		if err != nil {
			return err
		}
		d.Creds = append(d.Creds, c)
		return nil
	}
	if err := add(AggregatorID, RoleAggregator); err != nil {
		return nil, err
	}
	for _, b := range banks {
		if err := add(b, RoleBank); err != nil {
			return nil, err
		}
	}
	if err := add(AuditorID, RoleAuditor); err != nil {
		return nil, err
	}
	admin, err := newCredential(LedgerAdminID, RoleLedgerAdmin)
	if err != nil {
		return nil, err
	}
	d.LedgerAdmin = admin
	// The keyring checks ids, reserved names and duplicates once for all.
	if _, err := NewKeyring(job, d.Parties()); err != nil {
		return nil, err
	}
	return d, nil
}

// newCredential makes a fresh NKey user key for id.
func newCredential(id string, role Role) (Credential, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return Credential{}, fmt.Errorf("bus: keys: creating the key of %s: %w", id, err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return Credential{}, fmt.Errorf("bus: keys: public key of %s: %w", id, err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return Credential{}, fmt.Errorf("bus: keys: seed of %s: %w", id, err)
	}
	return Credential{Party: Party{ID: id, Role: role, PublicKey: pub}, Seed: slices.Clone(seed)}, nil
}

// Parties lists the deployment's parties without their seeds.
func (d *Deployment) Parties() []Party {
	out := make([]Party, len(d.Creds))
	for i, c := range d.Creds {
		out[i] = c.Party
	}
	return out
}

// Keyring is the deployment's public keys, for signature verification.
func (d *Deployment) Keyring() (*Keyring, error) { return NewKeyring(d.Job, d.Parties()) }

// Credential returns the credential of party id.
func (d *Deployment) Credential(id string) (Credential, bool) {
	for _, c := range d.Creds {
		if c.ID == id {
			return c, true
		}
	}
	return Credential{}, false
}

const (
	seedBegin = "-----BEGIN USER NKEY SEED-----"
	seedEnd   = "------END USER NKEY SEED------"
)

// EncodeSeedFile renders c's seed in the decorated form that nats.go, the
// nats CLI (--nkey) and ParseSeedFile read, after a comment saying whose it
// is.
func EncodeSeedFile(job string, c Credential) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# graphfed NKey seed of %s (role %s) in job %s.\n", c.ID, c.Role, job)
	fmt.Fprintf(&b, "# Public key: %s\n", c.PublicKey)
	fmt.Fprintf(&b, "# Keep it secret (mode 0600): whoever holds it can log in and sign as %s.\n\n", c.ID)
	fmt.Fprintf(&b, "%s\n%s\n%s\n", seedBegin, c.Seed, seedEnd)
	return b.Bytes()
}

// ParseSeedFile reads an NKey user seed, decorated (as EncodeSeedFile writes
// it) or bare on a line of its own. Operator and account seeds are refused:
// a graphfed party logs in as a user.
func ParseSeedFile(data []byte) (nkeys.KeyPair, error) {
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return nil, fmt.Errorf("bus: keys: seed file: %w", err)
	}
	return kp, nil
}

// LoadSeedFile reads and parses the seed file at path.
func LoadSeedFile(path string) (nkeys.KeyPair, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bus: keys: %w", err)
	}
	defer wipe(data)
	kp, err := ParseSeedFile(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return kp, nil
}

// isJWTCreds reports whether a credentials file holds a user JWT and its
// seed (a .creds file from nsc) rather than a bare NKey seed.
func isJWTCreds(data []byte) bool { return bytes.Contains(data, []byte("NATS USER JWT")) }

// WriteSeedFile writes c's seed file at path with mode 0600, refusing to
// replace an existing file: overwriting a party's key by mistake locks it
// out of the deployment.
func WriteSeedFile(path, job string, c Credential) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("bus: keys: %w", err)
	}
	data := EncodeSeedFile(job, c)
	defer wipe(data)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("bus: keys: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("bus: keys: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bus: keys: writing %s: %w", path, err)
	}
	return nil
}

// wipe overwrites secret bytes once they are no longer needed.
func wipe(b []byte) {
	for i := range b {
		b[i] = 'x'
	}
}
