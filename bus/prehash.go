package bus

import "sync"

// Prehash is a received message's signature digest computed ahead of its
// validation. Verifying a 4 MiB update is mostly hashing it (BLAKE3, about
// 1.3 ms); a party that queues messages (the aggregator) hashes each one on
// the delivering goroutine as it is queued, while its handler is busy with
// earlier ones, so that the two cores share the work. Validation is
// unchanged: the same checks in the same order, the signature checked
// against the same digest, only computed earlier. Safe for concurrent
// use: whoever asks first computes, others wait for the result.
type Prehash struct {
	once   sync.Once
	data   []byte
	digest []byte // nil when data is no envelope
}

// NewPrehash returns the (not yet computed) prehash of data.
func NewPrehash(data []byte) *Prehash { return &Prehash{data: data} }

// Compute hashes the message, once.
func (p *Prehash) Compute() {
	p.once.Do(func() {
		if env, err := Open(p.data); err == nil {
			p.digest = env.digest()
		}
	})
}

// digestFor is the digest of the message data was opened from (computing
// it if no one has yet), nil when p is not data's prehash.
func (p *Prehash) digestFor(data []byte) []byte {
	if p == nil || len(data) != len(p.data) || len(data) == 0 || &data[0] != &p.data[0] {
		return nil
	}
	p.Compute()
	return p.digest
}
