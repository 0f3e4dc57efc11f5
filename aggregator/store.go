package aggregator

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"graphfed/bus"
)

// A durable server (ServerConfig.Store and Updates set) survives its own
// crash: updates come from a durable log rather than core NATS, and after
// every step that changed the machine it stores a checkpoint before it
// carries the step's actions out (publishes, replies) and before it
// acknowledges the update that caused the step. A restarted server restores
// the latest checkpoint, announces the open round again, and receives from
// the log every update it had not acknowledged: those already in the
// checkpoint are dropped as duplicates by the machine, the others are new.
// At-least-once delivery and the machine's duplicate detection make every
// update count exactly once.
//
// The interfaces follow hashicorp/raft's split of a log and a stable store,
// each with an in-memory double beside the real one (store_mem.go; the
// JetStream implementations are bus.JetStreamCheckpointStore and
// bus.JetStreamUpdateLog).

// Store keeps a durable server's checkpoints: the latest state record and
// the global models by round.
type Store interface {
	// LoadState returns the latest state record, nil when there is none.
	// A server calls it once, before its first SaveState.
	LoadState(ctx context.Context) ([]byte, error)
	// SaveState replaces the state record; it is durable on return.
	SaveState(ctx context.Context, data []byte) error
	// SaveModel stores the model of round r; durable on return.
	SaveModel(ctx context.Context, r uint64, data []byte) error
	// LoadModel reads the model of round r.
	LoadModel(ctx context.Context, r uint64) ([]byte, error)
}

// UpdateLog is the durable feed of client updates: every update is
// delivered at least once, serially, until acknowledged, and stays
// readable by its position afterwards.
type UpdateLog interface {
	Consume(h func(bus.LoggedMsg), onErr func(error)) (stop func(), err error)
	Get(ctx context.Context, seq uint64) (bus.Msg, error)
}

// checkpointVersion is the layout of checkpoint this build writes and reads.
const checkpointVersion = 2

// checkpoint is a durable server's state record. The machine's snapshot is
// stored without vectors, which would make every record as large as the
// model times the clients: the model is in the Store under its round, and
// each pending or stale update is in the update log at the position listed
// beside it.
type checkpoint struct {
	Version   int      `json:"version"`
	Machine   Snapshot `json:"machine"`
	PendingAt []uint64 `json:"pending_at,omitempty"` // log position of Machine.Pending[i]
	StaleAt   []uint64 `json:"stale_at,omitempty"`   // log position of Machine.Stale[i]
	// Position is the log position of the last update applied: its
	// redelivery (an acknowledgement lost, or a crash between checkpoint
	// and acknowledgement) is recognised without a trip to the machine.
	Position uint64         `json:"position"`
	Closes   []RoundClosed  `json:"closes,omitempty"`
	Dropped  map[string]int `json:"dropped,omitempty"`
}

func (c *checkpoint) encode() ([]byte, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("aggregator: encode checkpoint: %w", err)
	}
	return b, nil
}

func decodeCheckpoint(b []byte) (checkpoint, error) {
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return checkpoint{}, fmt.Errorf("aggregator: decode checkpoint: %w", err)
	}
	switch {
	case c.Version != checkpointVersion:
		return checkpoint{}, fmt.Errorf("aggregator: decode checkpoint: version %d, want %d", c.Version, checkpointVersion)
	case len(c.PendingAt) != len(c.Machine.Pending) || len(c.StaleAt) != len(c.Machine.Stale):
		return checkpoint{}, fmt.Errorf("aggregator: decode checkpoint: %d/%d log positions for %d pending and %d stale updates",
			len(c.PendingAt), len(c.StaleAt), len(c.Machine.Pending), len(c.Machine.Stale))
	}
	return c, nil
}

// modelMagic starts every stored model set: the layout's name and version.
const modelMagic = "GFM2"

// encodeModels lays the latest models of round r out as the bus does
// vectors: "GFM2", the round (uint64) and the number of models (uint32),
// then per model the recipient (uint16 length and bytes, empty for the
// global model), its round (uint64), whether it has a margin (one byte),
// the margin (float64 bits), the lengths of params and grad (uint32 each)
// and the values, all little-endian float32.
func encodeModels(r uint64, ms []ModelSnapshot) []byte {
	b := append([]byte(nil), modelMagic...)
	b = binary.LittleEndian.AppendUint64(b, r)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ms)))
	for _, m := range ms {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(m.To)))
		b = append(b, m.To...)
		b = binary.LittleEndian.AppendUint64(b, m.Round)
		flags := byte(0)
		if m.HasMargin {
			flags |= 1
		}
		if m.Final {
			flags |= 2
		}
		b = append(b, flags)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.Margin))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Params)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Grad)))
		for _, v := range [][]float32{m.Params, m.Grad} {
			for _, x := range v {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			}
		}
	}
	return b
}

// decodeModels parses what encodeModels wrote, for round r.
func decodeModels(b []byte, r uint64) ([]ModelSnapshot, error) {
	bad := func(format string, args ...any) ([]ModelSnapshot, error) {
		return nil, fmt.Errorf("aggregator: decode models of round %d: %s", r, fmt.Sprintf(format, args...))
	}
	const head = len(modelMagic) + 12
	if len(b) < head || string(b[:len(modelMagic)]) != modelMagic {
		return bad("not a %s model set", modelMagic)
	}
	if got := binary.LittleEndian.Uint64(b[4:]); got != r {
		return bad("stored as round %d", got)
	}
	n := int(binary.LittleEndian.Uint32(b[12:]))
	b = b[head:]
	var out []ModelSnapshot
	for i := range n {
		if len(b) < 2 {
			return bad("model %d truncated", i)
		}
		tl := int(binary.LittleEndian.Uint16(b))
		const fixed = 8 + 1 + 8 + 8
		if len(b) < 2+tl+fixed {
			return bad("model %d truncated", i)
		}
		m := ModelSnapshot{To: string(b[2 : 2+tl])}
		b = b[2+tl:]
		m.Round = binary.LittleEndian.Uint64(b)
		m.HasMargin, m.Final = b[8]&1 != 0, b[8]&2 != 0
		m.Margin = math.Float64frombits(binary.LittleEndian.Uint64(b[9:]))
		np, ng := int(binary.LittleEndian.Uint32(b[17:])), int(binary.LittleEndian.Uint32(b[21:]))
		b = b[fixed:]
		if len(b) < 4*(np+ng) {
			return bad("model %d: %d bytes for %d+%d values", i, len(b), np, ng)
		}
		vals := make([]float32, np+ng)
		for j := range vals {
			vals[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		}
		b = b[4*(np+ng):]
		if np > 0 {
			m.Params = vals[:np:np]
		}
		if ng > 0 {
			m.Grad = vals[np:]
		}
		out = append(out, m)
	}
	if len(b) != 0 {
		return bad("%d bytes after %d models", len(b), n)
	}
	return out, nil
}

// ModelDigest is the hex SHA-256 of a model's little-endian float32 bytes:
// two models are equal bit for bit exactly when their digests are.
func ModelDigest(params []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, x := range params {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ResultDigest is the digest of a job's final model(s): the global model's
// (ModelDigest), or, when the strategy personalizes and there is no global
// model, one digest over every client's latest model — recipient, round,
// parameters and margin — so that runs of LPSFed compare bit for bit too.
func ResultDigest(res Result) string {
	if res.Model != nil || len(res.Models) == 0 {
		return ModelDigest(res.Model)
	}
	h := sha256.New()
	var b [8]byte
	for _, m := range res.Models { // sorted by recipient
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", m.To, m.Round, len(m.Params))
		h.Write([]byte(ModelDigest(m.Params)))
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(m.Margin))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
