package privacy

import (
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// noiseSource draws Gaussian noise from a ChaCha8 CSPRNG (math/rand/v2).
// Private runs seed it with 32 bytes from crypto/rand; a fixed seed is for
// reproducible simulation only. Normals come from the Box–Muller transform
// in float64 on 53-bit uniforms, two per pair of uniforms.
//
// Known limitation: like every floating-point sampler, the low-order bits
// of the noise are not exactly Gaussian (Mironov 2012); no DP claim
// beyond the textbook Gaussian mechanism is made for them.
type noiseSource struct {
	rng      *rand.ChaCha8
	spare    float64
	hasSpare bool
}

// seedTag pads a fixed 64-bit seed to ChaCha8's 32 bytes.
const seedTag = "graphfed/privacy"

func newNoiseSource(seed *uint64) *noiseSource {
	var s [32]byte
	if seed == nil {
		// crypto/rand.Read never returns an error (Go ≥ 1.24: it aborts
		// the program if the kernel cannot supply randomness).
		_, _ = crand.Read(s[:])
	} else {
		binary.LittleEndian.PutUint64(s[:8], *seed)
		copy(s[8:], seedTag)
	}
	return &noiseSource{rng: rand.NewChaCha8(s)}
}

// streamKey names one release's noise stream under a fixed seed: the
// k-th release (from 0) of client on channel in round. A release's noise
// is thereby a function of what it is, not of how many releases the gate
// made before it, so an agent that crashed and rebuilt its gate from the
// ledger adds exactly the noise an uninterrupted run would have added;
// and since the gate counts releases per (channel, round) from the
// ledger, no two releases of a client ever share a stream.
type streamKey struct {
	channel Channel
	round   uint64
	k       uint64
}

// releaseSource returns the noise stream of one release under a fixed
// seed: ChaCha8 keyed by SHA-256 of the seed, the client and the stream
// key (length-prefixed, so that no two keys collide). The job id is left
// out on purpose: reproducibility tests run one job under two names (with
// and without a fault) and expect the same noise.
func releaseSource(seed uint64, client string, key streamKey) *noiseSource {
	h := sha256.New()
	var b [8]byte
	put := func(x uint64) {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	str := func(s string) {
		put(uint64(len(s)))
		h.Write([]byte(s))
	}
	str(seedTag + "/release")
	put(seed)
	str(client)
	str(string(key.channel))
	put(key.round)
	put(key.k)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return &noiseSource{rng: rand.NewChaCha8(s)}
}

// uniform53 returns a uniform float64 in (0, 1] on the 2⁻⁵³ grid.
func (n *noiseSource) uniform53() float64 {
	return float64(n.rng.Uint64()>>11+1) * (1.0 / (1 << 53))
}

// normal returns one standard normal variate.
func (n *noiseSource) normal() float64 {
	if n.hasSpare {
		n.hasSpare = false
		return n.spare
	}
	r := math.Sqrt(-2 * math.Log(n.uniform53()))
	s, c := math.Sincos(2 * math.Pi * n.uniform53())
	n.spare, n.hasSpare = r*s, true
	return r * c
}

// addGaussian adds independent N(0, σ²) noise to every value.
func (n *noiseSource) addGaussian(dst []float32, sigma float64) {
	for i, v := range dst {
		dst[i] = float32(float64(v) + sigma*n.normal())
	}
}
