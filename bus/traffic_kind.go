package bus

import "sync"

// Traffic is what a party published on one kind of subject.
type Traffic struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// trafficByKind counts published messages and bytes per channel
// (ChannelOf: a job subject's kind, or jetstream, inbox or other): a run
// report's "bytes per channel" comes from it, with the same names as the
// metrics' channel label.
type trafficByKind struct {
	mu sync.Mutex
	m  map[Kind]Traffic
}

func (t *trafficByKind) add(subject string, n int) {
	k := Kind(ChannelOf(subject))
	t.mu.Lock()
	if t.m == nil {
		t.m = map[Kind]Traffic{}
	}
	c := t.m[k]
	c.Messages++
	c.Bytes += int64(n)
	t.m[k] = c
	t.mu.Unlock()
}

// snapshot copies the counts.
func (t *trafficByKind) snapshot() map[Kind]Traffic {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[Kind]Traffic, len(t.m))
	for k, v := range t.m {
		out[k] = v
	}
	return out
}

// AddTraffic sums b into a (a run's parties into one table).
func AddTraffic(a map[Kind]Traffic, b map[Kind]Traffic) {
	for k, v := range b {
		c := a[k]
		c.Messages += v.Messages
		c.Bytes += v.Bytes
		a[k] = c
	}
}
