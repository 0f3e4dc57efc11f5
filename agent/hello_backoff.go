package agent

import (
	"hash/fnv"
	"time"
)

// helloBackoffDoublings caps the exponential backoff of unanswered hellos
// at 2^5 = 32 retry periods (32 s by default).
const helloBackoffDoublings = 5

// helloBackoff is how long hello number try (0-based) of client waits for
// its reply: HelloRetry, then doubling up to 32·HelloRetry, each wait after
// the first scaled by a jitter in [0.75, 1.25) drawn from the client and
// the attempt. A fixed period made thousands of agents that an aggregator
// could not answer within it ask again all together, every period, until
// their hellos filled its inbox (1,000 clients in one process); backing off
// spreads them out. The jitter is a hash, not a random stream, so the
// agent machine stays deterministic.
func helloBackoff(retry time.Duration, client string, try int) time.Duration {
	if try == 0 {
		return retry
	}
	d := retry << min(try, helloBackoffDoublings)
	h := fnv.New64a()
	h.Write([]byte(client))
	h.Write([]byte{byte(try), byte(try >> 8)})
	u := float64(h.Sum64()>>11) / (1 << 53)
	return time.Duration(float64(d) * (0.75 + 0.5*u))
}
