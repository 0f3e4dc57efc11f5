package bus

import (
	"context"
	"fmt"
	"sync"
)

// MemBlobs is the in-memory double of the JetStream blob buckets, shared
// by the parties of one process (unit tests, the deterministic
// simulator): For gives each party a BlobStore that writes only its own
// bucket. It reads every bucket, so permissions are the real server's to
// test (TestBlobPermissions). Safe for concurrent use.
type MemBlobs struct {
	mu      sync.Mutex
	buckets map[string]map[string][]byte
}

// NewMemBlobs returns empty buckets.
func NewMemBlobs() *MemBlobs { return &MemBlobs{buckets: map[string]map[string][]byte{}} }

// For is party's store in job.
func (m *MemBlobs) For(job, party string) BlobStore {
	return &memBlobStore{m: m, bucket: BlobBucketName(job, party)}
}

// Set stores data as bucket/name as it is, as a party with write access
// to bucket could (tests of bad references).
func (m *MemBlobs) Set(bucket, name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.buckets[bucket]
	if b == nil {
		b = map[string][]byte{}
		m.buckets[bucket] = b
	}
	b[name] = append([]byte(nil), data...)
}

type memBlobStore struct {
	m      *MemBlobs
	bucket string
}

func (s *memBlobStore) Put(_ context.Context, _ uint64, name string, data []byte) (BlobRef, error) {
	s.m.Set(s.bucket, name, data)
	return NewBlobRef(s.bucket, name, data), nil
}

func (s *memBlobStore) Fetch(_ context.Context, ref BlobRef) ([]byte, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	data, ok := s.m.buckets[ref.Bucket][ref.Name]
	switch {
	case !ok:
		return nil, &RejectError{Reason: ReasonBlobMissing, Err: fmt.Errorf("%s/%s: no such object", ref.Bucket, ref.Name)}
	case uint64(len(data)) != ref.Size:
		return nil, &RejectError{Reason: ReasonBlobDigest, Err: fmt.Errorf("%s/%s: stored %d bytes, the reference says %d", ref.Bucket, ref.Name, len(data), ref.Size)}
	}
	return append([]byte(nil), data...), nil
}
