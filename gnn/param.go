package gnn

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
)

// Param is one learnable tensor and its gradient, which has the same shape.
// Name is unique within a model ("conv1.W") and, with the shapes, makes up
// the model schema that federated peers must agree on. Decay marks the
// parameters that weight decay applies to.
type Param struct {
	Name  string
	W, G  *Tensor
	Decay bool
}

// NewParam returns an r×c parameter with zero value and gradient.
func NewParam(name string, r, c int, decay bool) *Param {
	return &Param{Name: name, W: New(r, c), G: New(r, c), Decay: decay}
}

// Glorot fills p.W with the uniform Glorot/Xavier initialisation
// U(-a, a), a = sqrt(6/(fanIn+fanOut)), taking fanIn = Rows and fanOut =
// Cols (weights act as X·W).
func (p *Param) Glorot(rng *rand.Rand) {
	a := math.Sqrt(6 / float64(p.W.Rows+p.W.Cols))
	for i := range p.W.Data {
		p.W.Data[i] = float32((2*rng.Float64() - 1) * a)
	}
}

// ZeroGrad clears the gradients of params.
func ZeroGrad(params []*Param) {
	for _, p := range params {
		p.G.Zero()
	}
}

// NumParams is the total number of scalars in params.
func NumParams(params []*Param) int {
	n := 0
	for _, p := range params {
		n += len(p.W.Data)
	}
	return n
}

// Flatten concatenates the values of params, in order, into one vector of
// length NumParams(params). This is what agents send and the aggregator
// averages.
func Flatten(params []*Param) []float32 {
	v := make([]float32, 0, NumParams(params))
	for _, p := range params {
		v = append(v, p.W.Data...)
	}
	return v
}

// FlattenGrad is Flatten for the gradients.
func FlattenGrad(params []*Param) []float32 {
	v := make([]float32, 0, NumParams(params))
	for _, p := range params {
		v = append(v, p.G.Data...)
	}
	return v
}

// Unflatten copies v into the values of params, the inverse of Flatten. It
// returns an error, changing nothing, when len(v) != NumParams(params) or v
// holds a NaN or an infinity.
func Unflatten(params []*Param, v []float32) error {
	if n := NumParams(params); len(v) != n {
		return fmt.Errorf("gnn: unflatten: vector has %d values, model has %d", len(v), n)
	}
	for i, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("gnn: unflatten: value %d is not finite (%v)", i, x)
		}
	}
	off := 0
	for _, p := range params {
		off += copy(p.W.Data, v[off:off+len(p.W.Data)])
	}
	return nil
}

// SchemaHash is the hex SHA-256 of the parameter names and shapes, in
// order: two models can exchange flat vectors exactly when their hashes
// agree. Values do not enter the hash.
func SchemaHash(params []*Param) string {
	h := sha256.New()
	var buf [8]byte
	for _, p := range params {
		binary.LittleEndian.PutUint64(buf[:], uint64(len(p.Name)))
		h.Write(buf[:])
		h.Write([]byte(p.Name))
		binary.LittleEndian.PutUint64(buf[:], uint64(p.W.Rows))
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(p.W.Cols))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
