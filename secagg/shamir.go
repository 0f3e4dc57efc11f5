package secagg

import (
	"fmt"
	"io"
	"math/big"
	"math/bits"
)

// Shamir t-of-n secret sharing over the prime field GF(p), p = 2^255 − 19.
//
// Encoding: a secret of L bytes is cut into ceil(L/31) chunks of 31 bytes
// (the last may be shorter), each read as a big-endian integer below 2^248 <
// p, and each chunk is shared with its own random polynomial of degree
// t − 1. A share carries, for its x-coordinate, one 32-byte big-endian field
// element per chunk. Every secret round-trips: a chunk is never reduced.
// Combine refuses a field element ≥ p and a chunk value that does not fit
// its chunk's length (a corrupted or forged share).
//
// x-coordinates are the parties' cohort positions plus one (1..n); x = 0 is
// the secret and is refused as a share.

// ChunkSize is the secret bytes per field element.
const ChunkSize = 31

// ElementSize is the bytes of one encoded field element.
const ElementSize = 32

// maxSecret bounds a secret's length (chunks per share).
const maxSecret = 1024

// fieldP is 2^255 − 19. It is written once here and never modified.
func fieldP() *big.Int {
	p := new(big.Int).Lsh(big.NewInt(1), 255)
	return p.Sub(p, big.NewInt(19))
}

// Share is one party's share of a secret.
type Share struct {
	X uint32 // 1..n
	Y []byte // chunks × ElementSize bytes, big-endian elements < p
}

func chunks(secretLen int) int { return (secretLen + ChunkSize - 1) / ChunkSize }

// Split shares secret t-of-len(xs) at the given x-coordinates, drawing the
// polynomials' coefficients from rng.
func Split(secret []byte, t int, xs []uint32, rng io.Reader) ([]Share, error) {
	const op = "shamir.split"
	n := len(xs)
	switch {
	case len(secret) == 0 || len(secret) > maxSecret:
		return nil, errf(op, ErrMalformed, "secret of %d bytes, want 1..%d", len(secret), maxSecret)
	case t < 2:
		return nil, errf(op, ErrBelowThreshold, "t = %d: a threshold below 2 gives the secret away", t)
	case t > n:
		return nil, errf(op, ErrBelowThreshold, "t = %d > n = %d: the secret could never be reconstructed", t, n)
	}
	if err := distinctX(xs); err != nil {
		return nil, wrap(op, err)
	}
	p := fieldP()
	k := chunks(len(secret))
	out := make([]Share, n)
	for i := range out {
		out[i] = Share{X: xs[i], Y: make([]byte, k*ElementSize)}
	}
	coef := make([]*big.Int, t)
	y, xb := new(big.Int), new(big.Int)
	for c := range k {
		lo, hi := c*ChunkSize, min((c+1)*ChunkSize, len(secret))
		coef[0] = new(big.Int).SetBytes(secret[lo:hi])
		for j := 1; j < t; j++ {
			r, err := randomElement(rng, p)
			if err != nil {
				return nil, wrap(op, err)
			}
			coef[j] = r
		}
		for i, x := range xs {
			// Horner: y = ((a_{t-1} x + a_{t-2}) x + …) + a_0.
			xb.SetUint64(uint64(x))
			y.SetInt64(0)
			for j := t - 1; j >= 0; j-- {
				y.Mul(y, xb)
				y.Add(y, coef[j])
				y.Mod(y, p)
			}
			y.FillBytes(out[i].Y[c*ElementSize : (c+1)*ElementSize])
		}
		for j := range coef {
			coef[j].SetInt64(0) // wipe
		}
	}
	return out, nil
}

// Combine reconstructs a secret of secretLen bytes from at least t shares
// of a t-of-n sharing. It interpolates the first t; any further shares
// must lie on the same polynomials, or Combine fails (a corrupted share).
func Combine(shares []Share, t, secretLen int) ([]byte, error) {
	const op = "shamir.combine"
	switch {
	case t < 2:
		return nil, errf(op, ErrBelowThreshold, "t = %d", t)
	case len(shares) < t:
		return nil, errf(op, ErrBelowThreshold, "%d shares, need t = %d", len(shares), t)
	case secretLen < 1 || secretLen > maxSecret:
		return nil, errf(op, ErrMalformed, "secret of %d bytes, want 1..%d", secretLen, maxSecret)
	}
	xs := make([]uint32, len(shares))
	for i, s := range shares {
		xs[i] = s.X
	}
	if err := distinctX(xs); err != nil {
		return nil, wrap(op, err)
	}
	p := fieldP()
	k := chunks(secretLen)
	ys := make([][]*big.Int, len(shares)) // [share][chunk]
	for i, s := range shares {
		if len(s.Y) != k*ElementSize {
			return nil, errf(op, ErrMalformed, "share x=%d has %d bytes, want %d", s.X, len(s.Y), k*ElementSize)
		}
		ys[i] = make([]*big.Int, k)
		for c := range k {
			v := new(big.Int).SetBytes(s.Y[c*ElementSize : (c+1)*ElementSize])
			if v.Cmp(p) >= 0 {
				return nil, errf(op, ErrMalformed, "share x=%d: element %d is not below p", s.X, c)
			}
			ys[i][c] = v
		}
	}
	base := newBasis(xs[:t], p)
	at0 := base.at(0)
	extra := make([][]*big.Int, len(xs)-t)
	for e := range extra {
		extra[e] = base.at(xs[t+e])
	}
	out := make([]byte, secretLen)
	acc, term := new(big.Int), new(big.Int)
	for c := range k {
		lo, hi := c*ChunkSize, min((c+1)*ChunkSize, secretLen)
		interpolate(acc, term, at0, ys, c, p)
		if acc.BitLen() > 8*(hi-lo) {
			return nil, errf(op, ErrMalformed, "chunk %d does not fit %d bytes: shares are corrupted or of another secret", c, hi-lo)
		}
		acc.FillBytes(out[lo:hi])
		for e, l := range extra {
			interpolate(acc, term, l, ys, c, p)
			if acc.Cmp(ys[t+e][c]) != 0 {
				return nil, errf(op, ErrMalformed, "share x=%d is not on the polynomial of the first %d: corrupted", xs[t+e], t)
			}
		}
	}
	return out, nil
}

// interpolate sets acc = Σ_i l[i]·ys[i][c] mod p.
func interpolate(acc, term *big.Int, l []*big.Int, ys [][]*big.Int, c int, p *big.Int) {
	acc.SetInt64(0)
	for i, li := range l {
		term.Mul(li, ys[i][c])
		acc.Add(acc, term)
	}
	acc.Mod(acc, p)
}

// lagrange is the Lagrange basis at the point at for the nodes xs:
// l_i = Π_{j≠i} (at − x_j)/(x_i − x_j) mod p. The nodes are distinct.
func lagrange(xs []uint32, at uint32, p *big.Int) []*big.Int {
	return newBasis(xs, p).at(at)
}

// basis is the Lagrange basis of distinct nodes in barycentric form: the
// weights 1/Π_{j≠i}(x_i − x_j), inverted together (one ModInverse), so
// that each point costs O(t) multiplications, not O(t²) and t inverses.
type basis struct {
	xs   []uint32
	winv []*big.Int
	p    *big.Int
}

func newBasis(xs []uint32, p *big.Int) *basis {
	t := len(xs)
	w := make([]*big.Int, t)
	for i, xi := range xs {
		q := newProd()
		for j, xj := range xs {
			if j != i {
				q.mul(int64(xi)-int64(xj), p)
			}
		}
		w[i] = q.value(p)
	}
	// Batch inversion: pre[i] = w_0 ⋯ w_i; one inverse of the whole.
	pre := make([]*big.Int, t)
	acc := big.NewInt(1)
	for i := range w {
		acc.Mul(acc, w[i])
		acc.Mod(acc, p)
		pre[i] = new(big.Int).Set(acc)
	}
	inv := new(big.Int).ModInverse(acc, p) // non-zero: the nodes are distinct and below p
	winv := make([]*big.Int, t)
	for i := t - 1; i >= 0; i-- {
		winv[i] = new(big.Int)
		if i > 0 {
			winv[i].Mul(inv, pre[i-1])
			winv[i].Mod(winv[i], p)
		} else {
			winv[i].Set(inv)
		}
		inv.Mul(inv, w[i])
		inv.Mod(inv, p)
	}
	return &basis{xs: xs, winv: winv, p: p}
}

// at is the basis at the point a: l_i = winv_i · Π_{j≠i}(a − x_j), the
// products from prefix and suffix products of the small factors a − x_j.
func (b *basis) at(a uint32) []*big.Int {
	t, p := len(b.xs), b.p
	small := new(big.Int)
	step := func(z *big.Int, j int) *big.Int {
		r := new(big.Int).Mul(z, small.SetInt64(int64(a)-int64(b.xs[j])))
		if r.BitLen() > 512 {
			r.Mod(r, p)
		}
		return r
	}
	pre := make([]*big.Int, t+1) // pre[i] = Π_{j<i}
	pre[0] = big.NewInt(1)
	for j := range t {
		pre[j+1] = step(pre[j], j)
	}
	suf := make([]*big.Int, t+1) // suf[i] = Π_{j≥i}
	suf[t] = big.NewInt(1)
	for j := t - 1; j >= 0; j-- {
		suf[j] = step(suf[j+1], j)
	}
	out := make([]*big.Int, t)
	for i := range out {
		out[i] = new(big.Int).Mul(pre[i], suf[i+1])
		out[i].Mul(out[i], b.winv[i])
		out[i].Mod(out[i], p)
	}
	return out
}

// prod accumulates a product of small factors (|v| < 2^32) mod p, folding
// them into the big integer once per int64's worth.
type prod struct {
	z, tmp *big.Int
	g      int64
}

func newProd() prod { return prod{z: big.NewInt(1), tmp: new(big.Int), g: 1} }

func (q *prod) mul(v int64, p *big.Int) {
	if bits.Len64(absU(q.g))+bits.Len64(absU(v)) > 62 {
		q.flush(p)
	}
	q.g *= v
}

func (q *prod) flush(p *big.Int) {
	q.z.Mul(q.z, q.tmp.SetInt64(q.g))
	q.g = 1
	if q.z.BitLen() > 512 {
		q.z.Mod(q.z, p)
	}
}

// value is the product reduced into [0, p).
func (q *prod) value(p *big.Int) *big.Int {
	q.flush(p)
	return q.z.Mod(q.z, p)
}

func absU(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}

func distinctX(xs []uint32) error {
	seen := make(map[uint32]bool, len(xs))
	for _, x := range xs {
		if x == 0 {
			return fmt.Errorf("%w: x = 0 is the secret, not a share", ErrMalformed)
		}
		if seen[x] {
			return fmt.Errorf("%w: duplicate x = %d", ErrMalformed, x)
		}
		seen[x] = true
	}
	return nil
}

// randomElement draws a uniform element of GF(p) by rejection: 255 random
// bits, redrawn when ≥ p (probability 19/2^255).
func randomElement(rng io.Reader, p *big.Int) (*big.Int, error) {
	var b [ElementSize]byte
	for {
		if _, err := io.ReadFull(rng, b[:]); err != nil {
			return nil, fmt.Errorf("read randomness: %w", err)
		}
		b[0] &= 0x7f
		v := new(big.Int).SetBytes(b[:])
		clear(b[:])
		if v.Cmp(p) < 0 {
			return v, nil
		}
	}
}
