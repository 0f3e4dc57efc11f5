package job

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/deploy"
	"graphfed/fedgsp"
	"graphfed/graph"
	"graphfed/privacy"
	"graphfed/seeds"
)

// FedGSPSelect configures FedGSP's federated selection (preset "select",
// the default): the candidate grid and the local trial per candidate.
type FedGSPSelect struct {
	// Grid names the candidate presets; empty: fedgsp.SelectGrid.
	Grid []string
	// Exclude leaves presets out of Grid (a leave-one-dataset-out run
	// leaves out the preset tuned on its dataset, fedgsp.TunedOn).
	Exclude []string
	// Epochs is each candidate's local trial; 0: fedgsp.DefaultSelectEpochs.
	Epochs int
	// Finalists is how many of the local trial's best candidates then run
	// as short FedGSP jobs of the same clients, the best of which is
	// chosen (federatedStage); 0: DefaultFedGSPFinalists; negative: none,
	// the local trial chooses.
	Finalists int
	// TrialRounds is each federated trial's rounds; 0:
	// DefaultFedGSPTrialRounds.
	TrialRounds int
	// RefineRounds is each rate refinement's rounds (refineStage): the
	// job's own rounds, which the job sets; 0: TrialRounds.
	RefineRounds int
	// NoRefine keeps the federated stage's choice as it is, without
	// trying its variants (refineStage).
	NoRefine bool
}

// FedGSPSelectGrid is the default candidate grid (fedgsp.SelectGrid).
func FedGSPSelectGrid() []string { return fedgsp.SelectGrid() }

// DefaultFedGSPSelectEpochs is each candidate's local trial by default.
const DefaultFedGSPSelectEpochs = fedgsp.DefaultSelectEpochs

// FedGSPSelection is what the selection did, for the summary and --json.
type FedGSPSelection struct {
	fedgsp.Selection
	Excluded []string `json:"excluded,omitempty"`
	// RawMatters says row normalisation changes some client's features
	// (fedgsp.RawVariantsMatter), so that the chosen row's raw-feature
	// variant is tried (refineStage). The server learns that one bit of
	// the features' format, which the clients share by schema anyway.
	RawMatters bool `json:"raw_matters"`
	// EpochsPerCandidate is each local trial; LocalEpochs their sum over
	// clients and candidates (the selection's training cost, against the
	// job's rounds × local epochs × clients); Seconds its wall time.
	EpochsPerCandidate int     `json:"epochs_per_candidate"`
	LocalEpochs        int     `json:"local_epochs"`
	Seconds            float64 `json:"seconds"`
	// LocalChoice is the local trial's pick; Federated the finalists'
	// federated trials, which chose Chosen among them; TrialRounds their
	// rounds in all (against the job's).
	LocalChoice string           `json:"local_choice,omitempty"`
	Federated   []FederatedTrial `json:"federated,omitempty"`
	TrialRounds int              `json:"trial_rounds,omitempty"`
	// The score releases: one scalar per client and candidate scored, on
	// the scalar (margin) channel at σ Sigma and clip Clip, each accounted
	// in the client's gate; EpsilonMax is the largest client's ε of those
	// releases alone (at the job's δ; Seeded: a fixed noise seed, no
	// privacy claim).
	Releases   int     `json:"releases"`
	Sigma      float64 `json:"sigma"`
	Clip       float64 `json:"clip"`
	EpsilonMax float64 `json:"epsilon_max"`
	Seeded     bool    `json:"seeded,omitempty"`
	// EpsilonBound bounds what the whole selection spent per client, the
	// score releases and every federated trial's: the sum of their ε
	// (basic composition, at δ times the number of parts), since each
	// ran under its own ledger. It is not composed into the job's ε,
	// which it adds to.
	EpsilonBound float64 `json:"epsilon_bound"`
	// DescriptorsComputed is how many client descriptors the trials and
	// the job computed between them (fedgsp.DescriptorCache), against
	// one a client for every trial and the job without the cache; RunNode
	// sets it once the job has run.
	DescriptorsComputed int `json:"descriptors_computed,omitempty"`
}

// selectClip bounds a released validation score: accuracy and ROC-AUC are
// in [0, 1], so the clip never binds and sensitivity is 2.
const selectClip = 1

// selectFedGSP runs the selection over the job's clients: each scores the
// candidates on its own train and validation nodes (fedgsp.ScoreCandidates),
// releases each score through its own privacy gate as a scalar (round 0,
// before the job's first round), and the server side picks by the
// released scores weighted by the clients' validation counts (fedgsp.Pick).
// The count is not released: every client reports it with its scores
// each round already (val_n). run, when set, runs the federated stage
// over the local pick's finalists (federatedStage); nil: the local pick
// stands.
func selectFedGSP(ctx context.Context, clients []*graph.ClientGraph, ids []string, opt FedGSPSelect, o fedgsp.Overrides,
	priv SimPrivacy, jobID string, seed uint64, run trialRunner, log zerolog.Logger) (FedGSPSelection, error) {
	start := time.Now()
	out := FedGSPSelection{Excluded: opt.Exclude, EpochsPerCandidate: opt.Epochs, Sigma: agent.DefaultMarginSigma, Clip: selectClip}
	if out.EpochsPerCandidate == 0 {
		out.EpochsPerCandidate = fedgsp.DefaultSelectEpochs
	}
	grid, err := fedgsp.Grid(opt.Grid, opt.Exclude)
	if err != nil {
		return out, err
	}
	out.RawMatters = slices.ContainsFunc(clients, func(cg *graph.ClientGraph) bool { return fedgsp.RawVariantsMatter(cg.Data) })
	cands, err := fedgsp.Candidates(grid, o)
	if err != nil {
		return out, err
	}
	reports := make([]fedgsp.ClientScores, len(clients))
	for i, cg := range clients {
		trials, nVal, err := fedgsp.ScoreCandidates(cg.Data, cands, out.EpochsPerCandidate, seed, seeds.Party(seed, i, seeds.Learner), deploy.NewFedGSPLearner)
		if err != nil {
			return out, fmt.Errorf("fedgsp select: client %s: %w", ids[i], err)
		}
		for _, t := range trials {
			if t.Err == nil { // a candidate that could not be built trained nothing
				out.LocalEpochs += out.EpochsPerCandidate
			}
		}
		rep, spent, _, err := releaseScores(ctx, trials, nVal, ids[i], i, priv, jobID)
		if err != nil {
			return out, fmt.Errorf("fedgsp select: client %s: %w", ids[i], err)
		}
		out.Releases += len(rep.Scores)
		out.EpsilonMax = max(out.EpsilonMax, spent.Client)
		out.Seeded = spent.Seeded
		reports[i] = rep
		log.Debug().Str("client", ids[i]).Int("val_n", nVal).Interface("scores", rep.Scores).Msg("fedgsp selection scores released")
	}
	out.Selection, err = fedgsp.Pick(grid, reports)
	if err == nil {
		err = federatedStage(ctx, &out, cands, opt, run, log)
	}
	if err == nil && !opt.NoRefine {
		err = refineStage(ctx, &out, o, opt, run, log)
	}
	out.EpsilonBound = out.EpsilonMax
	for _, t := range out.Federated {
		out.EpsilonBound += t.EpsilonClientMax
	}
	out.Seconds = time.Since(start).Seconds()
	if err != nil {
		return out, err
	}
	log.Info().Str("chosen", out.Chosen).Str("local_choice", out.LocalChoice).Strs("grid", grid).Interface("scores", out.Scores).
		Int("refused", len(out.Refused)).Int("local_epochs", out.LocalEpochs).Int("trial_rounds", out.TrialRounds).
		Float64("seconds", out.Seconds).Msg("fedgsp selection")
	return out, nil
}

// releaseScores passes client i's finite scores through a gate with the
// job's privacy settings for client i, one scalar release each; a score
// that is not finite is not released (Missing says why). The gate's ledger
// is the selection's own (a MemLedger): the job's ledger is opened only
// when its agents start, after the selection has chosen their model.
func releaseScores(ctx context.Context, trials []fedgsp.CandidateTrial, nVal int, id string, i int, priv SimPrivacy, jobID string) (fedgsp.ClientScores, privacy.Spending, []privacy.Entry, error) {
	rep := fedgsp.ClientScores{Client: id, ValN: nVal, Scores: map[string]float64{}, Missing: map[string]string{}}
	po, err := priv.options(i)
	if err != nil {
		return rep, privacy.Spending{}, nil, err
	}
	kind, err := privacy.ParseAccountantKind(po.Accountant)
	if err != nil {
		return rep, privacy.Spending{}, nil, err
	}
	gate, err := privacy.NewGate(ctx, privacy.Config{Job: jobID, Client: id, Delta: po.Delta, Accountant: kind, Seed: po.NoiseSeed},
		privacy.NewMemLedger(), time.Now)
	if err != nil {
		return rep, privacy.Spending{}, nil, fmt.Errorf("selection gate: %w", err)
	}
	for _, t := range trials {
		switch {
		case t.Err != nil:
			rep.Missing[t.Name] = t.Err.Error()
			continue
		case t.Score != t.Score:
			rep.Missing[t.Name] = "no finite validation score (ROC-AUC over one class, or no validation nodes)"
			continue
		}
		rel, err := gate.Release(ctx, privacy.Request{Channel: privacy.ChannelMargin, Round: 0, Flat: []float32{float32(t.Score)}, Dim: 1,
			Sigma: agent.DefaultMarginSigma, Clip: selectClip})
		if err != nil {
			return rep, privacy.Spending{}, nil, fmt.Errorf("release score of %s: %w", t.Name, err)
		}
		rep.Scores[t.Name] = float64(rel.Data()[0])
	}
	entries, err := gate.Entries(ctx)
	if err != nil {
		return rep, privacy.Spending{}, nil, fmt.Errorf("selection ledger: %w", err)
	}
	return rep, gate.Spent(1), entries, nil
}

// resolveFedGSP is the one client configuration of a fedgsp job and the
// preset it came from: federated selection over the clients for preset
// "select" (or unset), else the named preset (or the legacy "auto" on the
// whole graph), with the given fields on top either way and the metric
// the data's. sel is nil unless the selection ran.
func resolveFedGSP(ctx context.Context, o deploy.FedGSPOptions, opt FedGSPSelect, data *graph.Dataset, clients []*graph.ClientGraph,
	priv SimPrivacy, jobID string, seed uint64, run trialRunner, log zerolog.Logger) (string, fedgsp.Config, *FedGSPSelection, error) {
	if o.Resolved == nil && (o.Preset == "" || o.Preset == fedgsp.PresetSelect) {
		ids := make([]string, len(clients))
		for i := range clients {
			ids[i] = deploy.ClientID(i)
		}
		sel, err := selectFedGSP(ctx, clients, ids, opt, o.Set, priv, jobID, seed, run, log)
		if err != nil {
			return "", fedgsp.Config{}, nil, err
		}
		c, _ := fedgsp.Preset(sel.Chosen)
		o.Set.Apply(&c)
		c.Metric = data.ScoreMetric()
		return sel.Chosen, c, &sel, c.Validate()
	}
	if len(opt.Grid) > 0 || len(opt.Exclude) > 0 {
		return "", fedgsp.Config{}, nil, fmt.Errorf("fedgsp: a candidate grid or exclusion needs preset %q, not %q", fedgsp.PresetSelect, o.Preset)
	}
	name, c, err := o.Resolve(data)
	return name, c, nil, err
}

// String is the selection in one line, for the human summary.
func (s *FedGSPSelection) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chose %s of", s.Chosen)
	for _, c := range s.Scores {
		fmt.Fprintf(&b, " %s=%.4f", c.Name, c.Score)
	}
	if len(s.Excluded) > 0 {
		fmt.Fprintf(&b, " (excluded %s)", strings.Join(s.Excluded, ","))
	}
	fmt.Fprintf(&b, "; %d refused; %d local epochs (%d per candidate)", len(s.Refused), s.LocalEpochs, s.EpochsPerCandidate)
	if len(s.Federated) > 0 {
		fmt.Fprintf(&b, "; local pick %s, federated trials", s.LocalChoice)
		for _, t := range s.Federated {
			fmt.Fprintf(&b, " %s=%.4f", t.Name, t.Score)
			if t.Refines != "" {
				fmt.Fprintf(&b, " (%d rounds, late %.4f, refining %s)", t.Rounds, t.LateScore, t.Refines)
			}
		}
		fmt.Fprintf(&b, " (%d rounds)", s.TrialRounds)
	}
	fmt.Fprintf(&b, ", %.1fs; %d scalar releases, σ %g, ε %.3g", s.Seconds, s.Releases, s.Sigma, s.EpsilonMax)
	if len(s.Federated) > 0 {
		fmt.Fprintf(&b, "; with the trials' releases ε ≤ %.3g (their sum), beside the job's", s.EpsilonBound)
	}
	if s.Seeded {
		b.WriteString(" (seeded noise: no privacy claim)")
	}
	return b.String()
}
