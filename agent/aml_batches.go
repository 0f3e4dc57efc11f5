package agent

import (
	"math"
	"math/rand/v2"

	"graphfed/graph"
)

// DefaultAMLPosFraction is the default share of laundering transactions in
// a training batch. Laundering is 1 in 900 transactions of an AMLworld HI
// world: a batch of 512 drawn uniformly holds one laundering transaction
// half the time, and a bank sees a few hundred in a whole job, too few to
// learn a typology from. Batches stratified at 1 in 10 show each laundering
// transaction dozens of times; the learner then shifts its margins so that
// its decisions are those of the class-weighted objective (marginShift).
const DefaultAMLPosFraction = 0.1

// seedStream draws a bank's training batches: uniform passes over the
// training transactions when posFraction is 0, else batches with
// round(posFraction·B) laundering transactions (cycling over them in
// reshuffled passes) and the rest legitimate ones (likewise). Seeds within
// one batch are distinct, as the sampler requires.
type seedStream struct {
	pos, neg    []int32 // stratified; all of them in pos when unstratified
	posCur      int
	negCur      int
	posFraction float64
	batch       []int32
}

func newSeedStream(g *graph.AMLGraph, train []int32, posFraction float64) *seedStream {
	s := &seedStream{posFraction: posFraction}
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

// stratified reports whether batches are drawn by class.
func (s *seedStream) stratified() bool { return s.posFraction > 0 }

// next returns the next batch of at most size seeds (aliased until the
// next call).
func (s *seedStream) next(size int, rng *rand.Rand) []int32 {
	if !s.stratified() {
		return s.take(&s.pos, &s.posCur, size, rng)
	}
	p := min(max(int(s.posFraction*float64(size)+0.5), 1), len(s.pos), size-1)
	out := append(s.batch[:0], s.take(&s.pos, &s.posCur, p, rng)...)
	out = append(out, s.take(&s.neg, &s.negCur, size-len(out), rng)...)
	s.batch = out
	return out
}

// take returns up to k seeds from the pass over *list at *cur, reshuffling
// at the start of each pass; a batch ends with its pass, so no seed repeats.
func (s *seedStream) take(list *[]int32, cur *int, k int, rng *rand.Rand) []int32 {
	l := *list
	if *cur == 0 {
		rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	}
	hi := min(*cur+k, len(l))
	out := l[*cur:hi]
	*cur = hi % len(l)
	return out
}

// share is the laundering share of stratified batches of size seeds, as
// next draws them.
func (s *seedStream) share(size int) float64 {
	return float64(min(max(int(s.posFraction*float64(size)+0.5), 1), len(s.pos), size-1)) / float64(size)
}

// marginShift is the logit adjustment (Menon et al., "Long-tail learning
// via logit adjustment", ICLR 2021) that turns the margin of a model
// trained on unweighted batches with laundering share f into the decision
// of the weighted objective the learner states, laundering weighing w
// against a base rate pi: such a model learns the log-odds of its batches,
// logit p(x) + log(f/(1−f)) − log(pi/(1−pi)), and the weighted objective
// flags x when logit p(x) > −log w. Training on balanced-ish batches learns
// far faster at 1 in 900 than weighting the loss; the shift keeps the
// operating point that of the weighted loss.
func marginShift(f, pi, w float64) float64 {
	return math.Log(w) + math.Log(pi/(1-pi)) - math.Log(f/(1-f))
}
