package bus

import "sync"

// Traffic is what a party sent (or received) on one kind of subject.
type Traffic struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// trafficByKind counts messages and bytes per direction and channel
// (ChannelOf: a job subject's kind, or jetstream, inbox or other), once per
// message: a run report's "bytes per channel" and the metrics'
// transport counters (read at scrape time) both come from it.
type trafficByKind struct {
	mu sync.Mutex
	m  map[trafficKey]Traffic
}

type trafficKey struct {
	direction string
	kind      Kind
}

func (t *trafficByKind) add(direction, subject string, n int) {
	k := trafficKey{direction, Kind(ChannelOf(subject))}
	t.mu.Lock()
	if t.m == nil {
		t.m = map[trafficKey]Traffic{}
	}
	c := t.m[k]
	c.Messages++
	c.Bytes += int64(n)
	t.m[k] = c
	t.mu.Unlock()
}

// snapshot copies the counts of one direction.
func (t *trafficByKind) snapshot(direction string) map[Kind]Traffic {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[Kind]Traffic{}
	for k, v := range t.m {
		if k.direction == direction {
			out[k.kind] = v
		}
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
