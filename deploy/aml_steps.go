package deploy

import "slices"

// DefaultAMLLocalSteps is the AML job's local steps per round (K) on a
// small world: the demo's 24 banks hold about 10k training transactions
// each, so 12 rounds of 32 steps of 512 seeds go over each bank's
// transactions about twenty times.
const DefaultAMLLocalSteps = 32

// amlPassesPerJob is how many times, at least, a job's local steps go
// over the median bank's training transactions when AMLLocalSteps scales
// K up. On the 5M-row world at K = 32, 8 banks went over theirs less than
// half a time in 12 rounds and CE-FedGNN's test F1 was 0.48 / 0.43
// (seeds 1 / 2); at this rule's K (172 / 171) it was 0.584 / 0.551.
const amlPassesPerJob = 2

// AMLLocalSteps is the default K of an AML job whose banks hold trainSizes
// training transactions: DefaultAMLLocalSteps, or more when that many steps
// of batch seeds over rounds rounds would not go over the median bank's
// training transactions amlPassesPerJob times. Local steps, not rounds,
// grow with the data: a round costs one model and one metrics message per
// bank whatever K, and the deadline adapts to the measured step time.
func AMLLocalSteps(trainSizes []int, batch, rounds int) int {
	if len(trainSizes) == 0 || batch <= 0 || rounds <= 0 {
		return DefaultAMLLocalSteps
	}
	s := slices.Clone(trainSizes)
	slices.Sort(s)
	median := s[len(s)/2]
	per := batch * rounds
	return max(DefaultAMLLocalSteps, (amlPassesPerJob*median+per-1)/per)
}
