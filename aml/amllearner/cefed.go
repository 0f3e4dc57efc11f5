package amllearner

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"graphfed/aml/edgegnn"
	"graphfed/gnn"
	"graphfed/learner"
)

// CE-FedGNN's estimators (Algorithm 1) in the AML learner.
//
// Embeddings. For every layer l = 1..L the learner keeps H̃^l, the moving
// average of the pre-activation Z^l of each of its boundary accounts (those
// facing some neighbouring bank), updated each time the account is in a
// training batch at layer l (Eq. 5):
//
//	H̃^l ← (1−γ)·H̃^l + γ·Z^l
//
// and, for γ < 1, the forward pass of that step reads the mixed value
// (edgegnn.EmbeddingOverride with Keep γ, Pre set: gradient γ·∂ into the fresh
// Z^l). A foreign account's layer-l pre-activation is its bank's latest
// released H̃^l mixed with the bank's own computation by the release's
// reliability (layerOverrides), at every layer, so that a remote
// account's representation at each depth aggregates all its transactions,
// not only those this bank sees.
//
// Release layout. The agent core asks for one Boundary call per neighbour
// and passes every row through the privacy gate as one release per node
// (normalized to the unit sphere, σ0 noise per coordinate). The L layers
// therefore travel packed in one row of width L·(H+1),
//
//	[ e(H̃^1/s_1), …, e(H̃^L/s_L) ] / √L,   e(x) = [x, 1]/‖[x, 1]‖
//
// each layer a unit vector in homogeneous coordinates that keep its norm
// relative to the sender's mean s_l (packEstimate), so that the row already
// has unit norm and the gate's normalization keeps every layer's share (1/L
// of the squared norm). Privacy: still one release per node per exchange, so
// the per-node accounting (count, σ0, sensitivity of the unit sphere) is
// unchanged from a last-layer-only release; the cost is utility, each
// layer's signal norm being 1/√L against the same per-coordinate noise.
// The receiver undoes the 1/√L, measures each layer's noise (Receive),
// reads the account's norm relative to the sender's mean and rescales it
// to its own mean pre-activation norm at that layer, and weighs it against
// its own view of the account by the measured signal share.
//
// Gradient. With OptCEFed a local step is Eq. 9 and line 18:
//
//	G ← (1−β)·G + β·∇,   W ← W − η·G
//
// and G is shared with the aggregator beside W (GradSharer) when the job's
// algorithm averages it (Config.ShareGrad).

// The AML learner's optimizers.
const (
	OptAdam  = "adam"  // local Adam; no gradient estimator
	OptCEFed = "cefed" // CE-FedGNN's G ← (1−β)G + β∇, W ← W − ηG
)

// Defaults of the CE-FedGNN update in the AML learner.
const (
	DefaultBeta = 0.9
	DefaultEta  = 0.2
	// DefaultGradClip bounds ‖∇‖ before Eq. 9. Plain SGD on the
	// class-weighted loss (laundering is 1 in 900) diverged to NaN in the
	// first round of the demo world's seed 1 at η = 0.2 without it: a
	// batch with a few heavily weighted positives makes a huge step.
	DefaultGradClip = 1.0
	// DefaultPoolWeight is the least weight of a new release in a
	// foreign account's pooled estimate (poolRelease): the mean of the
	// first four releases, then a moving average over about the last
	// seven (its noise variance is w/(2−w) = 1/7 of one release's).
	DefaultPoolWeight = 0.25
)

var _ learner.GradSharer = (*Learner)(nil)

// estimate is a boundary account's H̃^l for l = 1..L, packed (layer l at
// [(l−1)·H, l·H)), and which layers hold a value yet (bit l−1).
type estimate struct {
	h    []float32
	seen uint32
}

// complete reports whether every one of L layers has a value.
func (e *estimate) complete(L int) bool { return e.seen == 1<<L-1 }

// layerOverrides builds the training or evaluation overrides of b: at
// every layer, foreign accounts' values mix this bank's own computation
// with their bank's latest release, by the release's reliability α (the
// signal share of that sender's message at that layer, releaseAlpha):
// (1−α)·computed + α·released. A clean release (α → 1) replaces the
// computation, as Algorithm 1 reads a remote estimate; one drowned in the
// noise a private budget needs (α → 0) leaves the bank's own view of the
// account, which replacing it would throw away. When mix is set and γ < 1,
// our boundary accounts' estimates are mixed in with Keep γ (Eq. 5), when
// the hidden layers are released at all.
func (l *Learner) layerOverrides(b *edgegnn.Batch, mix bool) []edgegnn.EmbeddingOverride {
	L, H := b.Layers(), l.cfg.Hidden
	var ovs []edgegnn.EmbeddingOverride
	for k := 1; k <= L; k++ {
		lo := (k - 1) * H
		var rows []int32
		if l.releasesHidden() {
			rows = b.Rows(k, func(v int32) bool { return l.remote.has(v) && !l.d.Owned[v] })
		}
		if len(rows) > 0 {
			scale := float32(l.meanPre[k-1])
			if scale == 0 {
				scale = 1
			}
			bySender := map[string][]int32{}
			w := l.releaseWidth()
			blk, c := make([]float32, w+1), make([]float32, w)
			for _, r := range rows {
				from := l.d.Remote[b.Nodes[r]]
				bySender[from] = append(bySender[from], r)
			}
			for _, from := range slices.Sorted(maps.Keys(bySender)) {
				rs := bySender[from]
				vals := gnn.New(len(rs), H)
				hb := l.hiddenBlock(k)
				alpha := l.alpha[from][hb]
				var basis *gnn.Tensor // narrow releases: correct within its span only
				if l.basis != nil {
					basis = l.basis[k-1]
				}
				for i, r := range rs {
					l.remote.layer(b.Nodes[r], hb, blk, 1)
					if basis == nil {
						decodeLayer(vals.Row(i), blk, alpha, l.lay.blocks(), scale)
						continue
					}
					decodeLayer(c, blk, alpha, l.lay.blocks(), scale)
					lift(vals.Row(i), basis, c)
				}
				ovs = append(ovs, edgegnn.EmbeddingOverride{Layer: k, Rows: rs, Values: vals, Keep: 1 - alpha, Pre: true, Basis: basis})
			}
		}
		if !mix || l.cfg.Gamma >= 1 || !l.releasesHidden() {
			continue // the estimators serve what is released
		}
		bit := uint32(1) << (k - 1)
		rows = b.Rows(k, func(v int32) bool { e, ok := l.own[v]; return ok && e.seen&bit != 0 })
		if len(rows) == 0 {
			continue
		}
		vals := gnn.New(len(rows), H)
		for i, r := range rows {
			copy(vals.Row(i), l.own[b.Nodes[r]].h[lo:lo+H])
		}
		ovs = append(ovs, edgegnn.EmbeddingOverride{Layer: k, Rows: rows, Values: vals, Keep: float32(l.cfg.Gamma), Pre: true})
	}
	return ovs
}

// recordLayers stores, after a training forward pass of m (a worker bound
// to the learner's parameters), each boundary account's layer-l
// pre-activation as its new H̃^l (already mixed by the Keep-γ override
// where it had one), and tracks the mean norm of our accounts'
// pre-activations per layer.
func (l *Learner) recordLayers(m *edgegnn.Model, b *edgegnn.Batch) {
	L, H := b.Layers(), l.cfg.Hidden
	for k := 1; k <= L; k++ {
		z := m.PreActivations(k)
		var sum float64
		n := 0
		for r, v := range b.Nodes[:b.NumNodes[k]] {
			if !l.d.Owned[v] {
				continue
			}
			row := z.Row(r)
			sum += norm32(row)
			n++
			if !l.facing[v] {
				continue
			}
			e := l.own[v]
			if e == nil {
				e = &estimate{h: make([]float32, L*H)}
				l.own[v] = e
			}
			copy(e.h[(k-1)*H:k*H], row)
			e.seen |= 1 << (k - 1)
		}
		if n > 0 {
			m := &l.meanPre[k-1]
			if *m == 0 {
				*m = sum / float64(n)
			} else {
				*m = 0.9**m + 0.1*sum/float64(n)
			}
		}
	}
}

// maxReleasedNorm bounds the norm a receiver reads from a release, in
// units of the sender's mean pre-activation norm. A layer's pre-activation
// sums at most FanOut sampled neighbours, so an account's norm is within a
// small multiple of the mean; noise near the pole of the encoding
// (packEstimate) could otherwise read as an unbounded norm.
const maxReleasedNorm = 8

// packEstimate appends a release row to dst: the values h of each block k
// of lay (w_k of them, blocks back to back) as the unit vector
// [h_k/s_k, 1]/‖[h_k/s_k, 1]‖ of width w_k+1, s_k being scale[k] (for a
// hidden layer the sender's mean pre-activation norm there; 1 where it is
// 0), and the row scaled by 1/√blocks to unit norm.
//
// Why the extra coordinate: the privacy gate releases points of the unit
// sphere, so a row normalized layer by layer carries each account's
// direction and loses its norm, yet the norm is much of what a sum
// aggregator (GIN) says about an account: how many and how large its
// transactions are, a fan-in hub's larger than a payer's. In these
// homogeneous coordinates the norm relative to the sender's mean is
// tan φ, φ the angle between the row and the last axis, and the row is
// still a unit vector, so the gate's sensitivity and accounting are those
// of any other unit-norm release. A zero layer is [0, …, 0, 1].
func packEstimate(dst []float32, h []float32, scale []float64, lay releaseLayout) []float32 {
	inv := 1 / math.Sqrt(float64(lay.blocks()))
	at := 0
	for k, w := range lay.w {
		blk := h[at : at+w]
		at += w
		s := scale[k]
		if !(s > 0) {
			s = 1
		}
		r := norm32(blk) / s
		// [h/s, 1] / √(r²+1), times 1/√blocks
		c := inv / math.Sqrt(r*r+1)
		for _, x := range blk {
			dst = append(dst, float32(float64(x)/s*c))
		}
		dst = append(dst, float32(c))
	}
	return dst
}

// releaseAlpha measures the reliability α of each block of a message of
// released rows (n rows laid out by lay, see packEstimate): the receiver
// multiplies every block by √B (B blocks), after which block k has
// expected squared norm 1 + (w_k+1)·B·σ0², so the mean m_k of their
// squared norms over the message measures the noise, and α_k = 1/m_k
// (capped at 1) is the share of signal in them (post-processing at no
// privacy cost).
func releaseAlpha(rows []float32, n int, lay releaseLayout) []float32 {
	D, B := lay.dim(), lay.blocks()
	alpha := make([]float32, B)
	for k := range B {
		var ss float64
		for i := range n {
			nb := norm32(lay.block(rows[i*D:(i+1)*D], k))
			ss += nb * nb
		}
		ms := ss * float64(B) / float64(n)
		alpha[k] = float32(1 / max(ms, 1))
	}
	return alpha
}

// decodeLayer writes into dst (H values) one block of a released row of
// that many blocks (H+1 values) times mul: the block's direction times its norm read as
// tan φ (see packEstimate), shrunk toward the mean norm 1 by the layer's
// reliability alpha: α·tan φ + (1−α). Under heavy noise φ reads near π/2
// whatever the account, so the unshrunk norm would saturate at
// maxReleasedNorm and inflate the noise it carries into the mix; a clean
// release (α = 1) is read exactly.
func decodeLayer(dst, blk []float32, alpha float32, blocks int, mul float32) {
	H := len(dst)
	sqL := math.Sqrt(float64(blocks))
	nb := norm32(blk[:H]) * sqL
	if nb == 0 {
		clear(dst)
		return
	}
	phi := min(math.Atan2(nb, float64(blk[H])*sqL), math.Atan(maxReleasedNorm))
	a := float64(alpha)
	f := float32((a*math.Tan(phi)+1-a)*sqL/nb) * mul
	for j, x := range blk[:H] {
		dst[j] = x * f
	}
}

// poolRelease folds a newly received row into an account's pooled row
// (both laid out by lay, as released): per block k,
// pooled ← pooled + w·(row − pooled) with w = max(1/n, minWeight[k], fresh[k])
// for the account's n-th release, fresh[k] being the new release's own
// reliability at layer k (releaseAlpha on the message as received). The
// first releases are averaged equally, later ones enter a moving average
// that forgets releases made with a much older model, and a release clean
// enough to be read alone (fresh → 1) replaces what was pooled.
//
// Why: the per-node budget is spread over the job's R releases, so each
// carries σ0 = ρ·√R/μ noise, √R times a single release's. Keeping only the
// latest release throws away the other R−1 shares of the budget; the mean
// of m releases of a slowly moving estimate has 1/m of the noise variance.
// It is post-processing of released values, so it costs no privacy.
func poolRelease(pooled, row []float32, n int, minWeight []float64, fresh []float32, lay releaseLayout) {
	for k, a := range fresh {
		w := float32(max(1/float64(max(n, 1)), minWeight[k], float64(a)))
		for j := lay.off[k]; j < lay.off[k+1]; j++ {
			pooled[j] += w * (row[j] - pooled[j])
		}
	}
}

// sgdStep is Eq. 9 and Algorithm 1's line 18 on the gradients Backward
// left in the parameters, ∇ first scaled to norm at most GradClip.
func (l *Learner) sgdStep() {
	var ss float64
	for _, p := range l.model.Params() {
		for _, d := range p.G.Data {
			ss += float64(d) * float64(d)
		}
	}
	beta, keep, eta := float32(l.cfg.Beta), float32(1-l.cfg.Beta), float32(l.cfg.Eta)
	if n := math.Sqrt(ss); n > l.cfg.GradClip {
		beta *= float32(l.cfg.GradClip / n)
	}
	off := 0
	for _, p := range l.model.Params() {
		g := l.est[off : off+len(p.G.Data)]
		for i, d := range p.G.Data {
			g[i] = keep*g[i] + beta*d
			p.W.Data[i] -= eta * g[i]
		}
		off += len(p.G.Data)
	}
}

// Grad implements GradSharer: a copy of the gradient estimator G, or nil
// when the learner keeps none or the job does not average it (nothing is
// then released).
func (l *Learner) Grad() []float32 {
	if !l.sharesGrad() {
		return nil
	}
	return append([]float32(nil), l.est...)
}

// SetGrad implements GradSharer. A learner that shares no estimator, a
// length other than NumParams or a non-finite value is an error and
// changes nothing.
func (l *Learner) SetGrad(g []float32) error {
	const op = "agent: aml learner: set grad"
	if !l.sharesGrad() {
		return fmt.Errorf("%s: optimizer %s shares no gradient estimator", op, l.cfg.Opt)
	}
	if len(g) != len(l.est) {
		return fmt.Errorf("%s: vector has %d values, model has %d", op, len(g), len(l.est))
	}
	for i, v := range g {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: value %d is not finite (%v)", op, i, v)
		}
	}
	copy(l.est, g)
	return nil
}

func (l *Learner) sharesGrad() bool { return l.cfg.Opt == OptCEFed && l.cfg.ShareGrad }

func norm32(v []float32) float64 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	return math.Sqrt(ss)
}
