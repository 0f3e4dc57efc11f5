package fedgsp

import (
	"sync"

	"graphfed/graph"
	"graphfed/learner"
)

// DescriptorCache keeps each client's descriptors once computed, for the
// learners of one job that are built on the same client data: the
// federated selection's trials and the job itself. A client's descriptors
// depend on its data, the feature format and the orders and principal
// directions only (not on τ, the widths or the rates), and they are the
// costliest part of building a learner: 2K+2 eigenproblems of the bases'
// Gram matrices, about 5 s a client on a 760-node Actor part, against
// about 1 s a round. Without the cache a selection recomputes them for
// every trial. The cache holds the descriptors before any noise: each
// learner's gate still noises and accounts its own release.
//
// Entries are keyed by the *graph.Dataset pointer, so the data must not be
// changed while the cache is in use (a job's client graphs never are). The
// zero value is not usable; NewDescriptorCache makes one. It is safe for
// concurrent use by the learners of one job.
type DescriptorCache struct {
	mu sync.Mutex
	m  map[descriptorKey]*descriptorEntry
	// computed counts the descriptors computed, not served from the cache.
	computed int
}

type descriptorKey struct {
	data              *graph.Dataset
	raw               bool
	orders, principal int
}

type descriptorEntry struct {
	once sync.Once
	desc learner.Descriptor
	err  error
}

// NewDescriptorCache returns an empty cache.
func NewDescriptorCache() *DescriptorCache {
	return &DescriptorCache{m: map[descriptorKey]*descriptorEntry{}}
}

// Computed is how many descriptors the cache computed (the rest it served).
func (c *DescriptorCache) Computed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.computed
}

// get returns the descriptors under key, computing them once with compute;
// a failed computation is kept too, as it would fail again the same way.
// The rows returned are shared: callers copy before they hand them out.
func (c *DescriptorCache) get(key descriptorKey, compute func() (learner.Descriptor, error)) (learner.Descriptor, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	if !ok {
		e = &descriptorEntry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		e.desc, e.err = compute()
		c.mu.Lock()
		c.computed++
		c.mu.Unlock()
	})
	return e.desc, e.err
}
