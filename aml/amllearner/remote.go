package amllearner

import "math"

// remoteStore holds, per foreign account of a bank, one row of blocks
// (releaseLayout), 8 bits a coordinate, and how many times the row was put.
// The AML learner keeps there the running mean of an account's releases as
// they arrived (see poolRelease), decoded when read.
//
// At 5M rows the eight banks of a process held about a million received
// rows of L·H float32 (254 MB), plus a map entry and a slice header per
// account, and each release's decoded array stayed alive for as long as
// one of its rows was the latest. A row is, per layer, a direction
// times the account's norm relative to its bank's mean (decodeRelease),
// read from a release with σ0 Gaussian noise per coordinate, so 32 bits a
// coordinate carry nothing the model can use: each block of a row is stored as int8
// q with one float32 scale s = max|x|/127, x ≈ q·s.
//
// Quantization error: rounding to the nearest step errs by at most s/2 =
// max|x|/254 per coordinate, ~max|x|/440 RMS (uniform on a step of s).
// With a private budget's noise (σ0 ≈ 0.75–1.3 at ε = 8, so that max|x|
// is ~4 times the noise's spread) that is ~1% of the noise's spread, adding
// ~10⁻⁴ of its variance. Relative to a layer's norm the error is ~0.5%
// (≤ 1% over a thousand random layers, noisy or noiseless, at H = 32;
// TestRemoteStoreQuantization). Per row: 80 bytes instead of 308 in the
// map of float32 rows (BenchmarkRemoteStoreBytes, L·H = 64). The
// reliability α of a release is measured on the float rows before they
// are stored, so it is exact.
type remoteStore struct {
	lay   releaseLayout // the rows' blocks (w_k+1 stored values each)
	slot  []int32       // per account of the bank's graph: its row + 1, 0 for none yet
	q     []int8        // rows of lay.dim()
	scale []float32     // rows of lay.blocks(), per block
	puts  []uint8       // per row: how many times it was put (saturating)
}

func newRemoteStore(accounts int, lay releaseLayout) *remoteStore {
	return &remoteStore{lay: lay, slot: make([]int32, accounts)}
}

// has reports whether account a has a stored row.
func (s *remoteStore) has(a int32) bool { return s.slot[a] != 0 }

// len is the number of accounts with a stored row.
func (s *remoteStore) len() int { return len(s.scale) / max(s.lay.blocks(), 1) }

// put stores mul·row (lay.dim() values) as account a's row, replacing any
// earlier one.
func (s *remoteStore) put(a int32, row []float32, mul float32) {
	D, B := s.lay.dim(), s.lay.blocks()
	i := s.slot[a] - 1
	if i < 0 {
		i = int32(s.len())
		s.slot[a] = i + 1
		s.q = append(s.q, make([]int8, D)...)
		s.scale = append(s.scale, make([]float32, B)...)
		s.puts = append(s.puts, 0)
	}
	if s.puts[i] < math.MaxUint8 {
		s.puts[i]++
	}
	q := s.q[int(i)*D : int(i+1)*D]
	for k := range B {
		blk := s.lay.block(row, k)
		var m float32
		for _, x := range blk {
			m = max(m, float32(math.Abs(float64(x*mul))))
		}
		sc := m / 127
		s.scale[int(i)*B+k] = sc
		dst := q[s.lay.off[k]:s.lay.off[k+1]]
		if sc == 0 || math.IsInf(float64(sc), 0) || sc != sc {
			clear(dst)
			s.scale[int(i)*B+k] = 0
			continue
		}
		inv := 1 / sc
		for j, x := range blk {
			dst[j] = int8(max(-127, min(127, math.Round(float64(x*mul*inv)))))
		}
	}
}

// layer writes account a's block k times mul into dst (w_k+1 values); a
// must have a row.
func (s *remoteStore) layer(a int32, k int, dst []float32, mul float32) {
	i := int(s.slot[a] - 1)
	D, B := s.lay.dim(), s.lay.blocks()
	sc := s.scale[i*B+k] * mul
	for j, v := range s.q[i*D+s.lay.off[k] : i*D+s.lay.off[k+1]] {
		dst[j] = float32(v) * sc
	}
}

// count is how many times account a's row was put (0: none yet; at most
// 255).
func (s *remoteStore) count(a int32) int {
	if s.slot[a] == 0 {
		return 0
	}
	return int(s.puts[s.slot[a]-1])
}

// row writes account a's whole row (lay.dim() values) into dst; a must
// have a row.
func (s *remoteStore) row(a int32, dst []float32) {
	for k := range s.lay.blocks() {
		s.layer(a, k, s.lay.block(dst, k), 1)
	}
}
