// Package seeds derives every per-party random stream of a job from the
// job's one seed, in one place. A party's learner, its privacy noise and
// its data sampler are separate named streams: each seed is the first
// eight bytes of SHA-256 over (job seed, stream, party), so two streams
// coincide only by a hash collision, never by arithmetic (the old scheme,
// seed·7919 + i for noise and seed·7919 + i + 1 for the AML learner, made
// bank i's learner stream bank i+1's noise stream).
//
// Seeded noise is for reproducible simulations only: the ledger marks it
// non-private, and a deployment draws its noise from crypto/rand.
package seeds

import (
	"crypto/sha256"
	"encoding/binary"
)

// Stream names one kind of randomness a party draws.
type Stream string

const (
	// Learner is a party's local training randomness: model
	// initialisation where it is local, dropout, batch order.
	Learner Stream = "learner"
	// Noise is a party's privacy-gate noise (seeded simulations only).
	Noise Stream = "noise"
	// Sampler is a party's data sampling outside training: evaluation
	// samples, synthetic local data.
	Sampler Stream = "sampler"
)

// Streams lists every stream, for tests that check they never coincide.
func Streams() []Stream { return []Stream{Learner, Noise, Sampler} }

// Party is party i's seed of stream s in a job seeded with job. Parties
// are numbered from 0 in the job's enrolment order.
func Party(job uint64, party int, s Stream) uint64 {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], job)
	binary.BigEndian.PutUint64(b[8:], uint64(party))
	h.Write([]byte("graphfed/seeds/v1\x00"))
	h.Write([]byte(s))
	h.Write([]byte{0})
	h.Write(b[:])
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}
