package amllearner

import "fmt"

// What a bank releases about a boundary account (Config.Release).
const (
	// ReleaseHidden releases the per-layer estimates H̃^1..H̃^L
	// (CE-FedGNN's Algorithm 1).
	ReleaseHidden = "hidden"
	// ReleaseFeatures releases only layer 0: the account's structural
	// features as its own bank computes them (release_features.go).
	ReleaseFeatures = "features"
	// ReleaseAll releases layer 0 and every hidden layer in one row.
	ReleaseAll = "all"
	// DefaultRelease is what an AML bank releases unless told: layer 0.
	// At the private default (ε = 8 per node at p90) it is the only one
	// measured to lift CE-FedGNN above FedAvg: on a 24-bank demo world,
	// seed 1, test F1 0.739 against FedAvg's 0.715, where the hidden
	// layers' estimates, drowned in the noise ε = 8 needs at their width,
	// scored 0.660 (docs/ARCHITECTURE.md, "Where the boundary exchange
	// pays").
	DefaultRelease = ReleaseFeatures
)

// releaseLayout is the block structure of one released row: block k holds
// w[k] values and one homogeneous coordinate (packEstimate), at offset
// off[k]; off[len(w)] is the row's width. Every block of a row shares its
// unit norm equally, 1/√blocks each.
type releaseLayout struct {
	w   []int
	off []int
}

// newReleaseLayout lays out blocks of the given widths (values before the
// homogeneous coordinate).
func newReleaseLayout(widths ...int) releaseLayout {
	lay := releaseLayout{w: widths, off: make([]int, len(widths)+1)}
	for k, w := range widths {
		lay.off[k+1] = lay.off[k] + w + 1
	}
	return lay
}

// uniformLayout is L blocks of H values each.
func uniformLayout(L, H int) releaseLayout {
	w := make([]int, L)
	for k := range w {
		w[k] = H
	}
	return newReleaseLayout(w...)
}

func (lay releaseLayout) blocks() int { return len(lay.w) }

// dim is the width of a row.
func (lay releaseLayout) dim() int { return lay.off[len(lay.w)] }

// values is how many values a row's blocks hold before their homogeneous
// coordinates (the length packEstimate reads).
func (lay releaseLayout) values() int { return lay.dim() - len(lay.w) }

// block returns block k of row (w[k]+1 values).
func (lay releaseLayout) block(row []float32, k int) []float32 { return row[lay.off[k]:lay.off[k+1]] }

// String names the layout for errors: "2 blocks (8+1, 16+1)".
func (lay releaseLayout) String() string {
	s := fmt.Sprintf("%d blocks (", len(lay.w))
	for k, w := range lay.w {
		if k > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d+1", w)
	}
	return s + ")"
}

// DefaultFeatureReleases is how many times a job releases layer 0 when
// only layer 0 is released and the exchange interval is not given
// (DefaultExchangeEvery). The features do not change over a job, so one
// release at the whole budget would be best: the pooled mean of R
// releases has the noise of one, but the rounds before the last train on
// noisier features (24-bank demo world, seed 1, ε = 8: test F1 0.747 with
// 12 releases, 0.769 with 3, 0.776 with 1; clean 0.774). Three keep most
// of that and let a restarted or late bank receive the features again
// within a third of the job.
const DefaultFeatureReleases = 3

// DefaultExchangeEvery is the exchange interval of a job of the given
// rounds releasing release: every round for the hidden layers, whose
// estimates change as the model trains; for layer 0 alone, one round in
// ceil(rounds / DefaultFeatureReleases), starting with the first.
func DefaultExchangeEvery(release string, rounds int) int {
	if release != ReleaseFeatures || rounds <= DefaultFeatureReleases {
		return 1
	}
	return (rounds + DefaultFeatureReleases - 1) / DefaultFeatureReleases
}
