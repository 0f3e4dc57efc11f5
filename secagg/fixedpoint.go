package secagg

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"io"
	"math"
)

// Fixed-point encoding of a weighted update.
//
// A party with update x ∈ R^d and sample weight w ∈ [0, W] (W the declared
// MaxWeight) sends the d+1 words
//
//	q_j = SR(s · (w/W) · x̃_j)  mod 2^b   (j < d)
//	q_d = w                              (the weight slot)
//
// where x̃ is x clipped to L2 norm C (so |x̃_j| ≤ C, hence |(w/W) x̃_j| ≤ C),
// s is the scale and SR stochastic rounding (to floor or ceiling with the
// probability that makes it unbiased). Every coordinate is then at most
// B = ceil(C·s) in magnitude, and a sum over m ≤ n parties at most m·B.
// NewEncoding picks s, a power of two, as large as keeps
//
//	n · (C·s + 1) ≤ 2^(b−1) − 1
//
// so the coordinate sum, read as a signed b-bit integer, cannot wrap; it
// also requires n·W ≤ 2^b − 1 so that the weight slot's sum cannot wrap.
// The dimension does not enter the wrap bound (the L2 clip bounds every
// coordinate by C); it sizes the vector and the error's L2 bound.
//
// Decoding yields Σ_i w_i·x̃_i (exact up to rounding) and Σ_i w_i (exact),
// so a weighted mean needs no further division of trust. Rounding error:
// each party's coordinate is off by less than 1/s in the scaled domain, so
// each coordinate of Σ w_i x̃_i is off by less than m·W/s, and of the mean
// by less than m·W/(s·Σ w_i) (ErrorBound); stochastic rounding makes the
// error zero-mean.
type Encoding struct {
	Clip      float64 // C: L2 clip of an update
	MaxWeight uint64  // W: the largest sample weight a party may declare
	Parties   int     // n: the cohort size
	Dim       int     // d: coordinates of an update
	Bits      int     // b: words are mod 2^b
	Scale     float64 // s: a power of two
}

// Precision is the resolution that NewEncoding keeps when it chooses b:
// the scale s is at least 2^Precision / C, so a coordinate at the clip is
// held to 24 significant bits, as a float32 holds it.
const Precision = 24

// NewEncoding chooses the scale for clip C, max weight W, n parties, d
// coordinates and b bits. bits = 0 chooses b: the fewest bits, at most
// 32, whose scale keeps Precision (C·s ≥ 2^Precision) and whose weight
// slot holds n·W; if even 32 bits cannot keep Precision, b = 32 with the
// largest scale that cannot wrap. The scale being a power of two, C·s
// falls in [2^24, 2^25), so b is 1 + ⌈log2(n·(C·s+1)+1)⌉: 29 or 30 at
// n = 8, 30 or 31 at n = 16 and 30, at most 31 for n ≤ 63, depending on
// C's mantissa (and more if n·W needs more). The masked vector then
// costs b/32 of its float32 update (MaskedInput packs words at b bits).
// The chosen b is Encoding.Bits, which Config.Bits must be.
func NewEncoding(clip float64, maxWeight uint64, parties, dim, bits int) (Encoding, error) {
	if bits != 0 {
		return newEncoding(clip, maxWeight, parties, dim, bits)
	}
	for b := 2; b < 32; b++ {
		if e, err := newEncoding(clip, maxWeight, parties, dim, b); err == nil && clip*e.Scale >= 1<<Precision {
			return e, nil
		}
	}
	return newEncoding(clip, maxWeight, parties, dim, 32)
}

func newEncoding(clip float64, maxWeight uint64, parties, dim, bits int) (Encoding, error) {
	const op = "fixedpoint.new"
	switch {
	case !(clip > 0) || math.IsInf(clip, 0):
		return Encoding{}, errf(op, ErrBounds, "clip %v: want finite and > 0", clip)
	case maxWeight < 1:
		return Encoding{}, errf(op, ErrBounds, "max weight 0")
	case parties < 1 || parties > maxParties:
		return Encoding{}, errf(op, ErrBounds, "%d parties", parties)
	case dim < 1 || dim+1 > maxVector:
		return Encoding{}, errf(op, ErrBounds, "dimension %d, want 1..%d", dim, maxVector-1)
	case bits < 2 || bits > 32:
		return Encoding{}, errf(op, ErrBounds, "b = %d bits, want 2..32", bits)
	}
	half := float64(uint64(1)<<(bits-1) - 1)
	room := (half/float64(parties) - 1) / clip
	if !(room > 0) {
		return Encoding{}, errf(op, ErrBounds, "%d parties cannot sum in %d bits without wrapping", parties, bits)
	}
	scale := math.Exp2(math.Floor(math.Log2(room)))
	if float64(parties)*(clip*scale+1) > half { // Log2 rounding
		scale /= 2
	}
	if w := uint64(1)<<bits - 1; maxWeight > w/uint64(parties) {
		return Encoding{}, errf(op, ErrBounds, "%d parties of weight up to %d overflow a %d-bit weight slot (at most %d each): declare weights in coarser units",
			parties, maxWeight, bits, w/uint64(parties))
	}
	return Encoding{Clip: clip, MaxWeight: maxWeight, Parties: parties, Dim: dim, Bits: bits, Scale: scale}, nil
}

// Len is the words of an encoded vector: the coordinates and the weight.
func (e Encoding) Len() int { return e.Dim + 1 }

// bound is B = ceil(C·s), the largest magnitude of one party's coordinate.
func (e Encoding) bound() int64 { return int64(math.Ceil(e.Clip * e.Scale)) }

// Encode clips x to L2 norm C, scales it by s·w/W, rounds it
// stochastically with randomness from rng, and appends the weight slot.
// It refuses a wrong length, a non-finite coordinate and a weight above W.
func (e Encoding) Encode(x []float32, weight uint64, rng io.Reader) ([]uint32, error) {
	const op = "fixedpoint.encode"
	if len(x) != e.Dim {
		return nil, errf(op, ErrBounds, "%d coordinates, want %d", len(x), e.Dim)
	}
	if weight > e.MaxWeight {
		return nil, errf(op, ErrBounds, "weight %d above the declared maximum %d", weight, e.MaxWeight)
	}
	var norm2 float64
	for j, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, errf(op, ErrBounds, "coordinate %d is %v", j, v)
		}
		norm2 += f * f
	}
	factor := e.Scale * float64(weight) / float64(e.MaxWeight)
	if norm := math.Sqrt(norm2); norm > e.Clip {
		factor *= e.Clip / norm
	}
	var seed Seed
	if _, err := io.ReadFull(rng, seed[:]); err != nil {
		return nil, errf(op, ErrState, "read randomness: %v", err)
	}
	blk, err := aes.NewCipher(seed[:])
	if err != nil {
		return nil, wrap(op, err)
	}
	s := cipher.NewCTR(blk, roundingIV[:])
	out := make([]uint32, e.Len())
	m, b := wordMask(e.Bits), e.bound()
	var buf [8 * 512]byte
	for j := 0; j < len(x); j += 512 {
		n := min(512, len(x)-j)
		r := buf[:8*n]
		clear(r)
		s.XORKeyStream(r, r)
		for i := range n {
			v := float64(x[j+i]) * factor
			fl := math.Floor(v)
			q := int64(fl)
			u := float64(binary.LittleEndian.Uint64(r[8*i:])>>11) * 0x1p-53
			if u < v-fl {
				q++
			}
			q = max(-b, min(b, q)) // float error only: |v| ≤ C·s
			out[j+i] = uint32(uint64(q)) & m
		}
	}
	out[e.Dim] = uint32(weight)
	return out, nil
}

// roundingIV starts the rounding stream, AES-256-CTR under a seed drawn
// for the one encoding (the counter's high bytes spell "round", apart
// from any mask's zero start, though no mask shares the key).
var roundingIV = [16]byte{'r', 'o', 'u', 'n', 'd'}

// Sum is a decoded sum of m parties' encodings.
type Sum struct {
	Weighted []float64 // Σ_i w_i · x̃_i
	Weight   uint64    // Σ_i w_i, exact
	Parties  int       // m, the contributors
}

// Mean is the weighted mean Σ w_i x̃_i / Σ w_i.
func (s Sum) Mean() ([]float64, error) {
	if s.Weight == 0 {
		return nil, errf("fixedpoint.mean", ErrBounds, "total weight 0: no mean")
	}
	out := make([]float64, len(s.Weighted))
	w := float64(s.Weight)
	for j, v := range s.Weighted {
		out[j] = v / w
	}
	return out, nil
}

// DecodeSum decodes the sum mod 2^b of m parties' encodings. It refuses a
// sum that no m in-bounds encodings can produce: a coordinate beyond m·B,
// a weight beyond m·W, or an L2 norm of Σ (w_i/W) x̃_i beyond m·C plus the
// rounding slack. That is all the server can check of masked inputs: a
// hostile party can still bias the sum anywhere within its clip.
func (e Encoding) DecodeSum(sum []uint32, m int) (Sum, error) {
	const op = "fixedpoint.decode"
	if len(sum) != e.Len() {
		return Sum{}, errf(op, ErrBounds, "%d words, want %d", len(sum), e.Len())
	}
	if m < 1 || m > e.Parties {
		return Sum{}, errf(op, ErrBounds, "%d contributors, want 1..%d", m, e.Parties)
	}
	w := uint64(sum[e.Dim])
	if w > uint64(m)*e.MaxWeight {
		return Sum{}, errf(op, ErrBounds, "weight sum %d above %d parties × %d: implausible", w, m, e.MaxWeight)
	}
	half := int64(1) << (e.Bits - 1)
	limit := int64(m) * e.bound()
	out := make([]float64, e.Dim)
	var norm2 float64
	for j := range out {
		v := int64(sum[j])
		if v >= half {
			v -= 2 * half
		}
		if v > limit || v < -limit {
			return Sum{}, errf(op, ErrBounds, "coordinate %d is %d, beyond %d parties × %d: implausible", j, v, m, e.bound())
		}
		f := float64(v) / e.Scale
		norm2 += f * f
		out[j] = f * float64(e.MaxWeight)
	}
	slack := float64(m) * math.Sqrt(float64(e.Dim)) / e.Scale
	if n := math.Sqrt(norm2); n > float64(m)*e.Clip+slack {
		return Sum{}, errf(op, ErrBounds, "L2 norm %.6g of the sum beyond %d parties × clip %g: implausible", n, m, e.Clip)
	}
	return Sum{Weighted: out, Weight: w, Parties: m}, nil
}

// ErrorBound is the largest error of one coordinate of Sum.Weighted for m
// contributors: m·W/s (strict). Divide by Sum.Weight for the mean's.
func (e Encoding) ErrorBound(m int) float64 {
	return float64(m) * float64(e.MaxWeight) / e.Scale
}
