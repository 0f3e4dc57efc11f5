package privacy

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
)

// Need-to-know on the ledger: the node ids on the wire are the ids the
// parties share (aml/bank's GlobalID: an unsalted FNV-1a of the bank
// and a 9-hex account, which anyone can invert by trying all 16⁹ accounts
// of a bank). Whoever reads the ledger would learn from them which of a
// bank's accounts it released, and so which trade with which other bank.
// The ledger does not need them: per-node accounting needs only that one
// node keeps one id. So the gate writes every node id into the ledger as a
// keyed hash, HMAC-SHA256 under a per-job secret of the releasing bank
// truncated to 64 bits, and only the bank can tell which node an id is.
// Grouping by the keyed id is grouping by the raw id (short of a 64-bit
// collision), so every per-node ε is what it was; the bank's restarted
// gate derives the same secret and goes on accounting the same ids.
//
// The secret comes from the bank's NKey seed by HKDF-SHA256 (its signer
// derives it: SecretDeriver), domain-separated with the job id, so that
// no other party holds it and every life of the bank derives the same.
// Without keys (a plain simulation) there is no secret to derive from: the
// key is then a hash of the job and bank ids, which anyone can recompute.
// Such a run offers no protection of the ids in its ledger, as it offers
// none of anything else.

// SecretDeriver derives secrets from a party's private key material: a
// signer whose seed never leaves it (bus.Signer). DeriveSecret returns n
// bytes of HKDF-SHA256 output of its seed with info.
type SecretDeriver interface {
	DeriveSecret(info string, n int) ([]byte, error)
}

// nodeKeySize is the HMAC key's length: SHA-256's.
const nodeKeySize = sha256.Size

// NodeKeyInfo is the HKDF info a bank's node-id secret of job is derived
// with: a domain string, then the job id, so that each job's ids are
// unlinkable to another's.
func NodeKeyInfo(job string) string { return "graphfed ledger node-id key v1\x00" + job }

// DeriveNodeKey is the node-id secret of job derived by d (the bank's
// signer).
func DeriveNodeKey(d SecretDeriver, job string) ([]byte, error) {
	k, err := d.DeriveSecret(NodeKeyInfo(job), nodeKeySize)
	if err != nil {
		return nil, wrapErr("derive node key", ErrInvalid, "job "+job, err)
	}
	if len(k) != nodeKeySize {
		return nil, errorf("derive node key", ErrInvalid, fmt.Sprintf("job %s: %d bytes derived, want %d", job, len(k), nodeKeySize))
	}
	return k, nil
}

// InsecureNodeKey is the node-id key of a run without keys: a function of
// the job and client ids alone, so anyone who knows them (every party) can
// recompute it and invert the ledger's ids by brute force as before. It
// keeps the ledger's ids in one form whatever the run; it protects nothing.
func InsecureNodeKey(job, client string) []byte {
	k, err := hkdf.Key(sha256.New, []byte(job+"\x00"+client), nil, "graphfed insecure node-id key v1", nodeKeySize)
	if err != nil {
		panic(fmt.Sprintf("privacy: insecure node key: %v", err)) // only for a length HKDF cannot give
	}
	return k
}

// nodeKeyFor is the key cfg's gate keys node ids with: Config.NodeKey
// when set, else the secret its signer derives, else the insecure key.
// secret says whether it is a secret of the bank.
func nodeKeyFor(cfg Config) (key []byte, secret bool, err error) {
	switch {
	case len(cfg.NodeKey) > 0:
		return cfg.NodeKey, true, nil
	case cfg.Signer != nil:
		if d, ok := cfg.Signer.(SecretDeriver); ok {
			k, err := DeriveNodeKey(d, cfg.Job)
			return k, err == nil, err
		}
	}
	return InsecureNodeKey(cfg.Job, cfg.Client), false, nil
}

// nodeKeyer maps node ids to their keyed ledger ids. Not safe for
// concurrent use: the gate calls it under its lock.
type nodeKeyer struct {
	mac    hash.Hash
	secret bool
	buf    [8]byte
	sum    []byte
}

func newNodeKeyer(key []byte, secret bool) *nodeKeyer {
	return &nodeKeyer{mac: hmac.New(sha256.New, key), secret: secret, sum: make([]byte, 0, sha256.Size)}
}

// id is the ledger id of node id: the first 8 bytes of HMAC-SHA256(key,
// big-endian id), as an int64.
func (k *nodeKeyer) id(id int64) int64 {
	k.mac.Reset()
	binary.BigEndian.PutUint64(k.buf[:], uint64(id))
	k.mac.Write(k.buf[:])
	k.sum = k.mac.Sum(k.sum[:0])
	return int64(binary.BigEndian.Uint64(k.sum[:8]))
}

// ids maps every id; nil for nil.
func (k *nodeKeyer) ids(raw []int64) []int64 {
	if raw == nil {
		return nil
	}
	out := make([]int64, len(raw))
	for i, id := range raw {
		out[i] = k.id(id)
	}
	return out
}

// KeyedNodeID is the ledger id a gate keyed with key writes for node id:
// for tests and tools of the party that holds the key (a bank mapping
// its own ledger entries back to its accounts).
func KeyedNodeID(key []byte, id int64) int64 { return newNodeKeyer(key, true).id(id) }

// LedgerNodeIDs are the ids the gate writes in the ledger for the node
// ids ids (as on the wire): what a bank, or a simulator checking one,
// matches its wire messages against its own entries with.
func (g *Gate) LedgerNodeIDs(ids []int64) []int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.keyer.ids(ids)
}

// NodeIDsSecret reports whether the gate keys node ids with a secret of
// its bank (false: the insecure key of a run without keys).
func (g *Gate) NodeIDsSecret() bool { return g.keyer.secret }
