package fedgsp

import (
	"math"
	"strconv"
	"strings"

	"graphfed/graph"
)

// Variants of a row. Two settings of a row are properties of the data
// more than of the method, and the rows were tuned on datasets that
// agree on them: whether row normalisation suits the features, and how
// far one local Adam step may move the MLP. On actor (random 20/40/40
// split, 10 METIS clients, 100 rounds, test at the best validation
// round) the heterophilic row scored 25.1 normalised and 27.9 raw
// (RawSuffix), and raw at MLP rates of 10⁻², 10⁻³ and 10⁻⁴: 27.9, 27.8
// and 30.1 on seed 1, against FedAvg's 28.0: the protocol scores each
// client's model right after its local step, and at lr1 0.01 that step
// costs points (ActorConfig). So the selection refines its chosen row
// along both (Refinements), the rate a decade at a time (SlowSuffix,
// up to MaxSlowDecades): decades, not actor's tuned twentieth, so that a
// leave-Actor-out selection does not carry actor's choice.
const (
	// RawSuffix marks a row's raw-feature variant: RawFeatures set, on a
	// row that normalises its features.
	RawSuffix = "+raw"
	// SlowSuffix marks a variant whose MLP rate is the row's ×
	// SlowFactor; "+slow2" is two such decades.
	SlowSuffix = "+slow"
	// SlowFactor scales a slow variant's MLP rate (lr1), per decade.
	SlowFactor = 0.1
	// MaxSlowDecades is the slowest variant: the row's rate × 10⁻².
	MaxSlowDecades = 2
)

// splitVariant reads name as ROW[+raw][+slow[N]], in that order; slow is
// the number of decades (0: none).
func splitVariant(name string) (base string, raw bool, slow int, ok bool) {
	base = name
	if i := strings.LastIndex(base, SlowSuffix); i >= 0 {
		switch tail := base[i+len(SlowSuffix):]; {
		case tail == "":
			slow = 1
		case len(tail) == 1 && tail[0] >= '2' && tail[0] <= '0'+MaxSlowDecades:
			slow = int(tail[0] - '0')
		}
		if slow > 0 {
			base = base[:i]
		}
	}
	base, raw = strings.CutSuffix(base, RawSuffix)
	return base, raw, slow, raw || slow > 0
}

// slowSuffix names a variant slow decades slower than its row.
func slowSuffix(decades int) string {
	switch decades {
	case 0:
		return ""
	case 1:
		return SlowSuffix
	}
	return SlowSuffix + strconv.Itoa(decades)
}

// variant is row base with the variant's changes; a raw variant of a row
// that keeps its features raw already (actor's) is no variant.
func variant(base string, raw bool, slow int) (Config, bool) {
	c, ok := row(base)
	if !ok || (raw && c.RawFeatures) {
		return Config{}, false
	}
	if raw {
		c.RawFeatures = true
	}
	for range slow {
		c.LR1 *= SlowFactor
	}
	return c, true
}

// BaseName is the row a preset name stands on: its server settings are
// the row's (aggregator.FedGSPPreset).
func BaseName(name string) string {
	base, _, _, _ := splitVariant(name)
	return base
}

// Refinements are the variants of name to try after it, in order, each
// against the best so far: its raw-feature variant when rawMatters (row
// normalisation changes some client's features, RawVariantsMatter) and
// the row normalises, then the slow variants of whichever won, a decade
// at a time (the caller applies SlowSuffix with WithStep until it is
// refused, and compares every decade). A setting the caller fixed (o) is
// not varied.
func Refinements(o Overrides, rawMatters bool) []string {
	var steps []string
	if rawMatters && o.RawFeatures == nil {
		steps = append(steps, RawSuffix)
	}
	if o.LR1 == nil {
		steps = append(steps, SlowSuffix)
	}
	return steps
}

// WithStep is name refined by step, in the canonical order, and whether
// that names a preset: RawSuffix sets the raw-feature variant, SlowSuffix
// slows the rate by one more decade (at most MaxSlowDecades).
func WithStep(name, step string) (string, bool) {
	base, raw, slow, _ := splitVariant(name)
	switch step {
	case RawSuffix:
		raw = true
	case SlowSuffix:
		if slow == MaxSlowDecades {
			return name, false
		}
		slow++
	}
	out := base
	if raw {
		out += RawSuffix
	}
	out += slowSuffix(slow)
	if out == name {
		return name, false
	}
	_, ok := Preset(out)
	return out, ok
}

// RawVariantsMatter reports whether row normalisation changes d's
// features (NormalizeIfNonNegative): when it does not (one-hot rows,
// features with a negative entry), a row and its raw-feature variant are
// one model, and a trial of both would be wasted.
func RawVariantsMatter(d *graph.Dataset) bool {
	f := d.Features
	if f == nil || !graph.NonNegative(f) {
		return false
	}
	for i := 0; i+1 < len(f.RowPtr); i++ {
		lo, hi := f.RowPtr[i], f.RowPtr[i+1]
		sum := float64(hi - lo) // nil Val: every stored value is 1
		if f.Val != nil {
			sum = 0
			for _, v := range f.Val[lo:hi] {
				sum += float64(v)
			}
		}
		if sum != 0 && math.Abs(sum-1) > 1e-6 {
			return true
		}
	}
	return false
}
