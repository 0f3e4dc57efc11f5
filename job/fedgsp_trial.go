package job

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"graphfed/fedgsp"
)

// The selection's second stage. A local trial scores a candidate's client
// settings only: each client trains alone, so the candidate's server row
// (γ, α, β: how much the clients share) never enters its score. On
// chameleon and actor that picked minesweeper's row, whose γ 50 shares the
// model almost uniformly, and lost to plain FedAvg. So the local trial
// only shortlists; the finalists then run as short FedGSP jobs of the
// same clients, and the one whose clients report the best validation
// scores is chosen. The server sees nothing it would not see in the job
// itself: the scores every client reports with its final model.

// Defaults of the federated stage.
const (
	// DefaultFedGSPFinalists is how many of the local trial's best
	// candidates run as federated trials.
	DefaultFedGSPFinalists = 3
	// DefaultFedGSPTrialRounds is each federated trial's rounds.
	DefaultFedGSPTrialRounds = 20
)

// FederatedTrial is one finalist's short FedGSP job.
type FederatedTrial struct {
	Name string `json:"name"`
	// Score is Σ val_n · best_val_score / Σ val_n over the clients that
	// reported a finite best validation score; NaN when none did.
	Score    float64 `json:"score"`
	Clients  int     `json:"clients"`
	Rounds   int     `json:"rounds"`
	Seconds  float64 `json:"seconds"`
	Messages int64   `json:"messages"`
	Bytes    int64   `json:"bytes"`
	// EpsilonClientMax is the largest client's ε over the trial's own
	// releases (its ledger audited at the job's δ and accountant), and
	// EpsilonChannels each channel's worst client: what the trial spent,
	// on top of the job's own spending.
	EpsilonClientMax float64            `json:"epsilon_client_max"`
	EpsilonChannels  map[string]float64 `json:"epsilon_channels,omitempty"`
	// LateScore is the validation-count weighted validation score over
	// the trial's last quarter of rounds (lateRounds), NaN when none was
	// reported: where the trial ended, which refinements compare.
	LateScore float64 `json:"late_score"`
	// Refines is the choice this variant was tried against (refineStage);
	// empty for a finalist.
	Refines string `json:"refines,omitempty"`
}

// MarshalJSON writes a NaN score as null, as CandidateScore does.
func (t FederatedTrial) MarshalJSON() ([]byte, error) {
	type plain FederatedTrial
	out := struct {
		plain
		Score     *float64 `json:"score"`
		LateScore *float64 `json:"late_score"`
	}{plain: plain(t), Score: fedgsp.FiniteOrNil(t.Score), LateScore: fedgsp.FiniteOrNil(t.LateScore)}
	return json.Marshal(out)
}

// trialResult is what a federated trial's job returns: every client's
// final scores and the job's traffic.
type trialResult struct {
	Final map[string]map[string]float64
	// Late is the weighted validation score of each of the last rounds
	// (lateRounds of them at most), oldest first.
	Late            []float64
	Messages, Bytes int64
	// The trial's ledger audited: its largest client ε and each
	// channel's worst client.
	EpsilonClientMax float64
	EpsilonChannels  map[string]float64
}

// lateRounds is how many of a trial's last rounds its LateScore averages:
// a quarter, at least one.
func lateRounds(rounds int) int { return max(1, rounds/4) }

// trialRunner runs the job's clients as a FedGSP job of rounds rounds
// with candidate's settings (its client configuration and its server row).
type trialRunner func(ctx context.Context, cand fedgsp.Candidate, rounds int) (trialResult, error)

// finalists are the n eligible candidates of sel with the best local
// scores, best first, ties in grid order (Pick's).
func finalists(sel fedgsp.Selection, n int) []string {
	var ok []fedgsp.CandidateScore
	for _, cs := range sel.Scores {
		if cs.Coverage >= fedgsp.MinCoverage && !math.IsNaN(cs.Score) {
			ok = append(ok, cs)
		}
	}
	slices.SortStableFunc(ok, func(a, b fedgsp.CandidateScore) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	names := make([]string, 0, n)
	for _, cs := range ok[:min(n, len(ok))] {
		names = append(names, cs.Name)
	}
	return names
}

// runTrial runs cand as a federated trial of rounds rounds and records it
// in out.
func runTrial(ctx context.Context, out *FedGSPSelection, cand fedgsp.Candidate, rounds int, run trialRunner, log zerolog.Logger) (FederatedTrial, error) {
	start := time.Now()
	res, err := run(ctx, cand, rounds)
	if err != nil {
		return FederatedTrial{}, fmt.Errorf("fedgsp select: federated trial of %s: %w", cand.Name, err)
	}
	t := FederatedTrial{Name: cand.Name, Rounds: rounds, Seconds: time.Since(start).Seconds(), Messages: res.Messages, Bytes: res.Bytes,
		EpsilonClientMax: res.EpsilonClientMax, EpsilonChannels: res.EpsilonChannels}
	t.Score, t.Clients = trialScore(res.Final)
	t.LateScore = math.NaN()
	if len(res.Late) > 0 {
		t.LateScore = 0
		for _, v := range res.Late {
			t.LateScore += v / float64(len(res.Late))
		}
	}
	out.Federated = append(out.Federated, t)
	out.TrialRounds += rounds
	log.Info().Str("candidate", cand.Name).Float64("score", t.Score).Float64("late_score", t.LateScore).Int("clients", t.Clients).Int("rounds", rounds).
		Float64("seconds", t.Seconds).Msg("fedgsp selection: federated trial")
	return t, nil
}

// trialScore is the validation-count weighted mean of the clients' best
// validation scores, and how many clients it covers.
func trialScore(final map[string]map[string]float64) (float64, int) {
	return weightedValScore(final, "best_val_score")
}

// weightedValScore is the validation-count weighted mean of the clients'
// finite scores under key, and how many clients it covers.
func weightedValScore(final map[string]map[string]float64, key string) (float64, int) {
	var sum, w float64
	n := 0
	for _, id := range slices.Sorted(maps.Keys(final)) {
		sc := final[id]
		v, ok := sc[key]
		nv := sc["val_n"]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) || !(nv > 0) {
			continue
		}
		sum += nv * v
		w += nv
		n++
	}
	if w == 0 {
		return math.NaN(), 0
	}
	return sum / w, n
}

// federatedStage runs the finalists of out's local pick as federated
// trials and sets out.Chosen to the best; with fewer than two finalists
// (a count below 2, no runner, or fewer eligible candidates) there is
// nothing to compare and the local pick stands.
func federatedStage(ctx context.Context, out *FedGSPSelection, cands []fedgsp.Candidate, opt FedGSPSelect, run trialRunner, log zerolog.Logger) error {
	n, rounds := opt.Finalists, opt.TrialRounds
	if n == 0 {
		n = DefaultFedGSPFinalists
	}
	if rounds == 0 {
		rounds = DefaultFedGSPTrialRounds
	}
	out.LocalChoice = out.Chosen
	if n < 2 || run == nil {
		return nil
	}
	names := finalists(out.Selection, n)
	if len(names) < 2 {
		return nil
	}
	best := -1
	for _, name := range names {
		i := slices.IndexFunc(cands, func(c fedgsp.Candidate) bool { return c.Name == name })
		t, err := runTrial(ctx, out, cands[i], rounds, run, log)
		if err != nil {
			return err
		}
		if !math.IsNaN(t.Score) && (best < 0 || t.Score > out.Federated[best].Score) {
			best = len(out.Federated) - 1
		}
	}
	if best < 0 {
		return fmt.Errorf("fedgsp select: no federated trial of %v had a finite validation score", names)
	}
	out.Chosen = out.Federated[best].Name
	return nil
}
