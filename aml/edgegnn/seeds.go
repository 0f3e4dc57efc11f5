package edgegnn

import (
	"math"
	"math/rand/v2"

	"graphfed/aml/amlworld"
)

// DefaultPosFraction is the default share of laundering transactions in a
// stratified training batch (SeedStream), the same for a federated bank
// (amllearner.DefaultPosFraction) and the centralized baseline
// (TrainConfig.PosFraction as `graphfed train --aml` sets it).
// Laundering is 1 in 900 transactions of an AMLworld HI world: a batch of
// 512 drawn uniformly holds one laundering transaction half the time, and a
// bank sees a few hundred in a whole job, too few to learn a typology from.
// Batches stratified at 1 in 10 show each laundering transaction dozens of
// times; the model's margins are then shifted so that its decisions are
// those of the class-weighted objective (MarginShift).
const DefaultPosFraction = 0.1

// SeedStream draws training batches of seed transactions: uniform passes
// over the training transactions when unstratified, else batches with
// round(posFraction·B) laundering transactions (cycling over them in
// reshuffled passes) and the rest legitimate ones (likewise). Seeds within
// one batch are distinct, as the sampler requires.
type SeedStream struct {
	pos, neg    []int32 // stratified; all of them in pos when unstratified
	posCur      int
	negCur      int
	posFraction float64
	batch       []int32
}

// NewSeedStream returns the stream of batches over train (transactions of
// g, labelled by g.Label) with laundering share posFraction; posFraction ≤
// 0, or training transactions of one class only, give uniform passes. The
// stream keeps train and reorders it in place when unstratified: pass a
// copy to keep the caller's order.
func NewSeedStream(g *amlworld.Graph, train []int32, posFraction float64) *SeedStream {
	s := &SeedStream{posFraction: posFraction}
	if posFraction <= 0 {
		s.pos = train
		return s
	}
	for _, e := range train {
		if g.Label[e] != 0 {
			s.pos = append(s.pos, e)
		} else {
			s.neg = append(s.neg, e)
		}
	}
	if len(s.pos) == 0 || len(s.neg) == 0 {
		s.pos, s.neg, s.posFraction = train, nil, 0
	}
	return s
}

// Stratified reports whether batches are drawn by class: their loss is
// then unweighted and margins are shifted (Shift).
func (s *SeedStream) Stratified() bool { return s.posFraction > 0 }

// Next returns the next batch of at most size seeds (aliased until the
// next call).
func (s *SeedStream) Next(size int, rng *rand.Rand) []int32 {
	if !s.Stratified() {
		return s.take(&s.pos, &s.posCur, size, rng)
	}
	out := append(s.batch[:0], s.take(&s.pos, &s.posCur, s.posPerBatch(size), rng)...)
	out = append(out, s.take(&s.neg, &s.negCur, size-len(out), rng)...)
	s.batch = out
	return out
}

// posPerBatch is the number of laundering seeds in a stratified batch of
// size seeds: round(posFraction·size), at least 1, at most every
// laundering seed, and leaving one legitimate seed.
func (s *SeedStream) posPerBatch(size int) int {
	return min(max(int(s.posFraction*float64(size)+0.5), 1), len(s.pos), size-1)
}

// take returns up to k seeds from the pass over *list at *cur, reshuffling
// at the start of each pass; a batch ends with its pass, so no seed repeats.
func (s *SeedStream) take(list *[]int32, cur *int, k int, rng *rand.Rand) []int32 {
	l := *list
	if *cur == 0 {
		rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	}
	hi := min(*cur+k, len(l))
	out := l[*cur:hi]
	*cur = hi % len(l)
	return out
}

// Share is the laundering share of stratified batches of size seeds, as
// Next draws them.
func (s *SeedStream) Share(size int) float64 {
	return float64(s.posPerBatch(size)) / float64(size)
}

// BaseRate is the laundering share of the training transactions.
func (s *SeedStream) BaseRate() float64 {
	if !s.Stratified() {
		return math.NaN() // not counted: unstratified streams do not split by class
	}
	return float64(len(s.pos)) / float64(len(s.pos)+len(s.neg))
}

// Shift is what to add to a margin (logit 1 − logit 0) of a model trained
// on this stream's batches of size seeds, unweighted, so that its decision
// margin > 0 is that of the objective weighing laundering w against
// legitimate transactions: MarginShift(Share(size), BaseRate(), w). It is 0
// for an unstratified stream, whose loss carries the weights itself.
func (s *SeedStream) Shift(size int, w float64) float64 {
	if !s.Stratified() {
		return 0
	}
	return MarginShift(s.Share(size), s.BaseRate(), w)
}

// MarginShift is the logit adjustment (Menon et al., "Long-tail learning
// via logit adjustment", ICLR 2021) that turns the margin of a model
// trained on unweighted batches with laundering share f into the decision
// of the weighted objective, laundering weighing w against a base rate
// pi: such a model learns the log-odds of its batches, logit p(x) +
// log(f/(1−f)) − log(pi/(1−pi)), and the weighted objective flags x when
// logit p(x) > −log w. Training on balanced-ish batches learns far faster
// at 1 in 900 than weighting the loss; the shift keeps the operating point
// that of the weighted loss.
func MarginShift(f, pi, w float64) float64 {
	return math.Log(w) + math.Log(pi/(1-pi)) - math.Log(f/(1-f))
}
