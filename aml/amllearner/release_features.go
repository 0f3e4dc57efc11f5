package amllearner

import (
	"graphfed/aml/edgegnn"
)

// Layer-0 releases (Config.Release = ReleaseFeatures or ReleaseAll).
//
// A bank sees every transaction of its own accounts, but of a foreign
// account only the transactions with its own: its structural features
// (edgegnn.NodeFeatures: transactions and distinct partners per day, in and
// out) read low for every foreign hub, and a fan-in's collector looks like
// an account paid once. The account's own bank computes them from all its
// transactions. Layer 0 of CE-FedGNN's exchange (h^0 = x) is that row: the
// sender releases, per boundary account, the releasedFeatures columns of
// its features over every transaction it sees of the account, as one
// block [x, 1]/‖[x, 1]‖ (packEstimate with scale 1: the features have the
// same units at every bank). The receiver pools an account's releases by
// their plain mean (the features do not change over a job, so every
// release is worth as much as the last) and substitutes
// (1−α)·own + α·released for its own view of the account in both stages'
// node features, α the pooled block's measured signal share. The
// features are rates per day (edgegnn.NodeFeatures), so that the same values
// serve the training stage, whose own rows count training days only.
//
// Why it pays under metric DP: accounts' features are few numbers and
// crowd together (most accounts trade a little with a few partners), so
// the distance ρ to an account's 50th nearest released neighbour is small
// at the 90th percentile and the noise σ0 = ρ·√R/μ that buys ε per node is
// small with it; the hidden layers' estimates spread accounts apart in 64
// dimensions and need noise that drowns them (docs/ARCHITECTURE.md, "Where
// the boundary exchange pays").

// featureWidth is a layer-0 block's values, releasedFeatures' columns.
const featureWidth = 2

// releasedFeatures returns the node feature columns a layer-0 block
// carries (a function, not a package variable: nothing may change them).
func releasedFeatures() [featureWidth]int {
	return [featureWidth]int{edgegnn.NodeColInPartners, edgegnn.NodeColOutPartners}
}

// carriesFeatures and carriesHidden say what a release carries.
func carriesFeatures(release string) bool { return release == ReleaseFeatures || release == ReleaseAll }
func carriesHidden(release string) bool   { return release == ReleaseHidden || release == ReleaseAll }

func (l *Learner) releasesFeatures() bool { return carriesFeatures(l.cfg.Release) }
func (l *Learner) releasesHidden() bool   { return carriesHidden(l.cfg.Release) }

// hiddenBlock is the release block of hidden layer k (1-based).
func (l *Learner) hiddenBlock(k int) int {
	if l.releasesFeatures() {
		return k
	}
	return k - 1
}

// layoutFor returns the release layout of cfg's release with L layers of
// width w.
func layoutFor(release string, L, w int) releaseLayout {
	var widths []int
	if carriesFeatures(release) {
		widths = append(widths, featureWidth)
	}
	if carriesHidden(release) {
		for range L {
			widths = append(widths, w)
		}
	}
	return newReleaseLayout(widths...)
}

// appendFeatures appends account a's released features, as the
// evaluation stage computes them (over every visible transaction).
func (l *Learner) appendFeatures(dst []float32, a int32) []float32 {
	r := l.evalSt.NodeX.Row(int(a))
	for _, c := range releasedFeatures() {
		dst = append(dst, r[c])
	}
	return dst
}

// applyFeatures substitutes for foreign account a's node features, in
// both stages, the mix (1−α)·own + α·released of this bank's own view and
// the pooled layer-0 block blk (featureWidth+1 values of a row of blocks
// blocks), read exactly and clamped below at our own view: the sender
// sees every transaction of its account and we see some, so its counts are
// never below ours, and noise that says so is discarded (post-processing,
// at no privacy cost).
func (l *Learner) applyFeatures(a int32, blk []float32, alpha float32, blocks int) {
	own, ok := l.ownX[a]
	if !ok {
		own = l.appendFeatures(make([]float32, 0, featureWidth), a)
		l.ownX[a] = own
	}
	var dec [featureWidth]float32
	decodeLayer(dec[:], blk, 1, blocks, 1)
	tr, ev := l.trainSt.NodeX.Row(int(a)), l.evalSt.NodeX.Row(int(a))
	for j, c := range releasedFeatures() {
		x := (1-alpha)*own[j] + alpha*max(dec[j], own[j])
		tr[c], ev[c] = x, x
	}
}
