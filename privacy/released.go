package privacy

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Released is a value that passed the gate: clipped, charged to the
// accountant, logged durably in the ledger, and noised. Its fields are
// unexported and the package has no exported constructor, so outside this
// package a Released can only come from Gate.Release; the bus publishes
// nothing else on sensitive channels, which is how a release that skips the
// gate fails to compile.
//
// The zero Released (which any package can declare) carries no data and
// reports IsZero; publishers must refuse it. A Released is immutable: every
// accessor returns a copy.
//
// Node ids: NodeIDs are the ids the job's parties know the nodes by (the
// wire's); the entry's are their keyed forms (nodekey.go), which only the
// releasing bank can map back.
type Released struct {
	entry Entry
	data  []float32
	ids   []int64 // the wire's node ids, one per row; entry.NodeIDs keyed
}

// IsZero reports whether r is the zero value rather than a gate's output.
func (r Released) IsZero() bool { return r.data == nil }

// Channel is the channel the value was released on.
func (r Released) Channel() Channel { return r.entry.Channel }

// Round is the training round the value was released in.
func (r Released) Round() uint64 { return r.entry.Round }

// Dim is the number of values per row.
func (r Released) Dim() int { return r.entry.Dim }

// Rows is the number of rows.
func (r Released) Rows() int { return r.entry.Count }

// Data returns a copy of the noised values, row-major.
func (r Released) Data() []float32 { return slices.Clone(r.data) }

// AppendLittleEndian appends the noised values to dst as little-endian
// IEEE-754 float32, the wire format of float vectors (DESIGN.md), without
// an intermediate copy.
func (r Released) AppendLittleEndian(dst []byte) []byte {
	dst = slices.Grow(dst, 4*len(r.data))
	for _, v := range r.data {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	return dst
}

// NodeIDs returns a copy of the node ids, one per row (embeddings), or
// nil: the ids the value goes out with, not the keyed ids of its entry.
func (r Released) NodeIDs() []int64 { return slices.Clone(r.ids) }

// Entry returns a copy of the ledger entry that accounts for this release.
func (r Released) Entry() Entry { return r.entry.clone() }

// Select returns the released rows at the given indices, in that order: a
// subset of a released value is post-processing and costs no privacy, so
// one release of a node's embedding can be sent to every party that needs
// it. Its Entry is the original's (same Seq, σ and round: the ledger entry
// that accounts for it) with Count and NodeIDs narrowed to the selection.
func (r Released) Select(rows []int) (Released, error) {
	if r.IsZero() {
		return Released{}, errorf("select", ErrInvalid, "the zero Released")
	}
	dim := r.entry.Dim
	out := Released{entry: r.entry.clone(), data: make([]float32, 0, len(rows)*dim)}
	var ids, keyed []int64
	for _, i := range rows {
		if i < 0 || i >= r.entry.Count {
			return Released{}, errorf("select", ErrInvalid, fmt.Sprintf("row %d of %d", i, r.entry.Count))
		}
		out.data = append(out.data, r.data[i*dim:(i+1)*dim]...)
		if len(r.ids) > 0 {
			ids = append(ids, r.ids[i])
			keyed = append(keyed, r.entry.NodeIDs[i])
		}
	}
	out.entry.Count, out.entry.NodeIDs, out.ids = len(rows), keyed, ids
	return out, nil
}
