package secagg

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sort"

	"golang.org/x/crypto/chacha20"
)

// CompleteGraphMax is the largest cohort whose neighbour graph is complete:
// every party masks with every other. Larger cohorts use a random k-regular
// graph (Bell et al. 2020).
const CompleteGraphMax = 30

// Config is one round of secure aggregation, agreed by every party and the
// server before it starts (the runtime derives it from the job and the
// round's cohort). Its Digest is bound into every signed message.
type Config struct {
	Job        string
	Round      uint64   // round, or the buffer window of an asynchronous round
	Aggregator string   // the party whose signature the list must carry
	Parties    []string // the cohort, sorted, unique; x-coordinate of Parties[i] is i+1
	Threshold  int      // t: shares needed to reconstruct; 2t > neighbourhood
	// Degree is k, the neighbours of each party in the random k-regular
	// graph used when len(Parties) > CompleteGraphMax; it must be even.
	// Zero takes DefaultDegree. Ignored for smaller cohorts.
	Degree    int
	GraphSeed [32]byte // seeds the random graph; draw it after the cohort is fixed
	VectorLen int      // words of a masked vector (Encoding.Len)
	Bits      int      // b: vectors are mod 2^b, 1 ≤ b ≤ 32
}

// DefaultDegree is the degree of the random graph for n parties: the even
// number nearest above 4·log2(n), capped at n−1 (a heuristic after Bell et
// al. 2020, whose bound is O(log n) with constants from the dropout rate
// and the corrupt fraction; a job with a stated threat model sets Degree).
func DefaultDegree(n int) int {
	if n <= 1 {
		return 0
	}
	k := int(math.Ceil(4 * math.Log2(float64(n))))
	k += k & 1
	if k >= n {
		k = n - 1
		k -= k & 1
	}
	return k
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	const op = "config"
	switch {
	case c.Job == "" || len(c.Job) > maxID:
		return errf(op, ErrMismatch, "job id %q: empty or longer than %d bytes", c.Job, maxID)
	case c.Aggregator == "" || len(c.Aggregator) > maxID:
		return errf(op, ErrMismatch, "aggregator id %q: empty or longer than %d bytes", c.Aggregator, maxID)
	case len(c.Parties) < 2 || len(c.Parties) > maxParties:
		return errf(op, ErrMismatch, "%d parties, want 2..%d", len(c.Parties), maxParties)
	case !sortedUnique(c.Parties):
		return errf(op, ErrMismatch, "parties not sorted and unique")
	case c.VectorLen < 1 || c.VectorLen > maxVector:
		return errf(op, ErrMismatch, "vector length %d, want 1..%d", c.VectorLen, maxVector)
	case c.Bits < 1 || c.Bits > 32:
		return errf(op, ErrMismatch, "b = %d bits, want 1..32", c.Bits)
	}
	for _, p := range c.Parties {
		if p == "" || len(p) > maxID {
			return errf(op, ErrMismatch, "party id %q: empty or longer than %d bytes", p, maxID)
		}
		if p == c.Aggregator {
			return errf(op, ErrMismatch, "the aggregator %s is also a party", p)
		}
	}
	n := len(c.Parties)
	hood := n // neighbourhood with self
	if n > CompleteGraphMax {
		k := c.degree()
		if k < 2 || k%2 != 0 || k >= n {
			return errf(op, ErrMismatch, "degree %d for %d parties: want even, 2 ≤ k < n", k, n)
		}
		hood = k + 1
	}
	if c.Threshold < 2 || c.Threshold > hood || 2*c.Threshold <= hood {
		return errf(op, ErrMismatch, "threshold t = %d with neighbourhoods of %d: want 2t > %d and t ≤ %d (and t ≥ 2)",
			c.Threshold, hood, hood, hood)
	}
	return nil
}

func (c *Config) degree() int {
	if c.Degree != 0 {
		return c.Degree
	}
	return DefaultDegree(len(c.Parties))
}

// Index is the party's position in the cohort, 0-based (its Shamir
// x-coordinate is Index+1), or -1.
func (c *Config) Index(party string) int {
	i := sort.SearchStrings(c.Parties, party)
	if i < len(c.Parties) && c.Parties[i] == party {
		return i
	}
	return -1
}

// Digest binds a message to this exact configuration.
func (c *Config) Digest() [32]byte {
	var e enc
	e.tag(tagConfig)
	e.str(c.Job)
	e.u64(c.Round)
	e.str(c.Aggregator)
	e.strs(c.Parties)
	e.u32(uint32(c.Threshold))
	e.u32(uint32(c.degree()))
	e.fixed(c.GraphSeed[:])
	e.u32(uint32(c.VectorLen))
	e.u32(uint32(c.Bits))
	return sha256.Sum256(e.b)
}

// Graph is the neighbour graph of a round: who masks with whom and who
// holds whose shares.
type Graph struct {
	n   int
	adj [][]int // sorted neighbour indices, self excluded
}

// Graph builds the round's neighbour graph: complete for n ≤
// CompleteGraphMax, otherwise a random k-regular Harary graph (each party
// joined to the k/2 nearest on each side along a ring in a random order
// drawn from GraphSeed with ChaCha20).
func (c *Config) Graph() (*Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	n := len(c.Parties)
	g := &Graph{n: n, adj: make([][]int, n)}
	if n <= CompleteGraphMax {
		for i := range n {
			for j := range n {
				if j != i {
					g.adj[i] = append(g.adj[i], j)
				}
			}
		}
		return g, nil
	}
	perm, err := permutation(c.GraphSeed, n)
	if err != nil {
		return nil, wrap("config.graph", err)
	}
	k := c.degree()
	for pos, i := range perm {
		for off := 1; off <= k/2; off++ {
			j := perm[(pos+off)%n]
			g.adj[i] = append(g.adj[i], j)
			g.adj[j] = append(g.adj[j], i)
		}
	}
	for i := range g.adj {
		sort.Ints(g.adj[i])
	}
	return g, nil
}

// Neighbours are party i's neighbours (indices, sorted, self excluded).
func (g *Graph) Neighbours(i int) []int { return g.adj[i] }

// Adjacent reports whether i and j are neighbours.
func (g *Graph) Adjacent(i, j int) bool {
	a := g.adj[i]
	k := sort.SearchInts(a, j)
	return k < len(a) && a[k] == j
}

// permutation is a uniform permutation of 0..n-1 (Fisher–Yates with
// rejection sampling) from a ChaCha20 stream keyed by seed.
func permutation(seed [32]byte, n int) ([]int, error) {
	s, err := newStream(seed[:], graphNonce[:])
	if err != nil {
		return nil, err
	}
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := s.uniform(uint64(i + 1))
		p[i], p[j] = p[j], p[i]
	}
	return p, nil
}

// graphNonce separates the graph's stream from any mask under the same key.
var graphNonce = [chacha20.NonceSize]byte{'g', 'r', 'a', 'p', 'h'}

// stream is a ChaCha20 keystream read 8 bytes at a time.
type stream struct {
	c   *chacha20.Cipher
	buf [8]byte
}

func newStream(key, nonce []byte) (*stream, error) {
	c, err := chacha20.NewUnauthenticatedCipher(key, nonce)
	if err != nil {
		return nil, fmt.Errorf("chacha20: %w", err)
	}
	return &stream{c: c}, nil
}

func (s *stream) u64() uint64 {
	clear(s.buf[:])
	s.c.XORKeyStream(s.buf[:], s.buf[:])
	return binary.LittleEndian.Uint64(s.buf[:])
}

// uniform is uniform in [0, n), n > 0, by Lemire's rejection method.
func (s *stream) uniform(n uint64) uint64 {
	hi, lo := bits.Mul64(s.u64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.u64(), n)
		}
	}
	return hi
}
