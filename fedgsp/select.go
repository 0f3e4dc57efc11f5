package fedgsp

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"graphfed/graph"
)

// Federated selection (preset "select", the default): instead of a
// preset looked up by the dataset's name, the job tries a small grid of
// candidate settings on every client's own data and keeps the one with the
// best validation score, weighted by the clients' validation counts. Each
// client trains each candidate locally for a few epochs on its train nodes
// and scores it on its validation nodes (ScoreCandidates); only those
// scalars leave it, through its privacy gate (the job does the release);
// the server side is Pick. Nothing in it reads the dataset's name.

// PresetSelect names federated selection; PresetAuto the legacy choice by
// the dataset's name (then the train nodes' homophily), kept only when
// asked for by name.
const (
	PresetSelect = "select"
	PresetAuto   = "auto"
)

// DefaultSelectEpochs is how many local epochs each candidate trains per
// client before it is scored: a short trial, each epoch also scored on
// validation so that the best validation epoch counts (the job's own
// protocol at best-validation round).
const DefaultSelectEpochs = 20

// SelectGrid is the default candidate grid: every named preset (the
// authors' rows and the ones tuned on the README's datasets) plus the
// authors' rows for datasets this repository does not ship (PubMed,
// Roman-empire), which were tuned on none of them. Variants of the chosen
// row (Refinements) are tried after it, not in the grid.
func SelectGrid() []string { return PresetNames() }

// TunedOn names, for each dataset the README reports, the preset chosen
// on its validation nodes: the one a leave-one-dataset-out grid for that
// dataset must not contain. The heterophilic preset's γ and rates were
// chosen on chameleon.
func TunedOn() map[string]string {
	return map[string]string{
		"cora": "cora", "minesweeper": "minesweeper", "tolokers": "tolokers",
		"actor": "actor", "chameleon": "heterophilic",
	}
}

// Grid is names (SelectGrid when empty) without the excluded presets, in
// names' order (the order ties are broken in); excluding a row excludes
// its raw-feature variant too, which shares its tuned rates. Unknown or
// repeated names, an exclusion that names no candidate, and an empty
// result are errors.
func Grid(names, exclude []string) ([]string, error) {
	if len(names) == 0 {
		names = SelectGrid()
	}
	var out []string
	for _, n := range names {
		if _, ok := Preset(n); !ok {
			return nil, fmt.Errorf("fedgsp: grid: unknown preset %q (want %s)", n, strings.Join(SelectGrid(), ", "))
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("fedgsp: grid: preset %q given twice", n)
		}
		if !slices.Contains(exclude, n) && !slices.Contains(exclude, BaseName(n)) {
			out = append(out, n)
		}
	}
	for _, x := range exclude {
		if !slices.Contains(names, x) {
			return nil, fmt.Errorf("fedgsp: grid: excluded preset %q is not in the grid %s", x, strings.Join(names, ","))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fedgsp: grid: every candidate of %s is excluded", strings.Join(names, ","))
	}
	return out, nil
}

// ClientScores is one client's report: its validation count and, per
// candidate it scored, the released validation score. A candidate it could
// not score (NaN ROC-AUC over one class, a learner that failed to build)
// is absent, with the reason in Missing.
type ClientScores struct {
	Client  string
	ValN    int
	Scores  map[string]float64
	Missing map[string]string
}

// CandidateScore is one candidate's standing at the server.
type CandidateScore struct {
	Name string `json:"name"`
	// Score is Σ n_i s_i / Σ n_i over the clients i whose score for it was
	// accepted; NaN when none was.
	Score float64 `json:"score"`
	// Clients reporting it and the share of the validation weight they hold.
	Clients  int     `json:"clients"`
	Coverage float64 `json:"coverage"`
}

// MarshalJSON writes a NaN score (nothing accepted) as null: JSON has no
// NaN, and the summary must still encode.
func (c CandidateScore) MarshalJSON() ([]byte, error) {
	type plain CandidateScore
	out := struct {
		plain
		Score *float64 `json:"score"`
	}{plain: plain(c), Score: FiniteOrNil(c.Score)}
	return json.Marshal(out)
}

// FiniteOrNil is &x for a finite x and nil otherwise: how a score that
// may be NaN or infinite is written to JSON, which has neither.
func FiniteOrNil(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Refusal is a client's score the server did not count, and why.
type Refusal struct {
	Client    string `json:"client"`
	Candidate string `json:"candidate,omitempty"`
	Reason    string `json:"reason"`
}

// Selection is the server's pick over a grid.
type Selection struct {
	Grid    []string         `json:"grid"`
	Chosen  string           `json:"chosen"`
	Scores  []CandidateScore `json:"scores"` // in grid order
	Refused []Refusal        `json:"refused,omitempty"`
}

// MinCoverage is the least share of the clients' validation weight whose
// scores a candidate needs to be chosen: a candidate only a few clients
// could score says little about the others.
const MinCoverage = 0.5

// Pick chooses the candidate of grid with the best validation score
// weighted by the reporting clients' validation counts. Ties go to the
// earlier candidate of grid (deterministic). Scores that are not finite,
// outside [−1, 2] (a score in [0, 1] plus the gate's noise cannot get
// there), for a candidate not in grid, or from a client without
// validation nodes are refused and listed. A candidate whose reporters
// hold less than MinCoverage of the weight is not eligible; no eligible
// candidate is an error.
func Pick(grid []string, reports []ClientScores) (Selection, error) {
	sel := Selection{Grid: slices.Clone(grid)}
	sum := make([]float64, len(grid))
	weight := make([]float64, len(grid))
	count := make([]int, len(grid))
	var total float64
	for _, r := range reports {
		if r.ValN <= 0 {
			sel.Refused = append(sel.Refused, Refusal{Client: r.Client, Reason: fmt.Sprintf("validation count %d: nothing to weigh", r.ValN)})
			continue
		}
		total += float64(r.ValN)
		for _, name := range sortedKeys(r.Scores) {
			s := r.Scores[name]
			i := slices.Index(grid, name)
			switch {
			case i < 0:
				sel.Refused = append(sel.Refused, Refusal{r.Client, name, "not a candidate of the grid"})
			case math.IsNaN(s) || math.IsInf(s, 0):
				sel.Refused = append(sel.Refused, Refusal{r.Client, name, fmt.Sprintf("score %v is not finite", s)})
			case s < -1 || s > 2:
				sel.Refused = append(sel.Refused, Refusal{r.Client, name, fmt.Sprintf("score %v outside [-1, 2]", s)})
			default:
				sum[i] += float64(r.ValN) * s
				weight[i] += float64(r.ValN)
				count[i]++
			}
		}
		for _, name := range sortedKeys(r.Missing) {
			sel.Refused = append(sel.Refused, Refusal{r.Client, name, "not scored: " + r.Missing[name]})
		}
	}
	best := -1
	for i, name := range grid {
		cs := CandidateScore{Name: name, Score: math.NaN(), Clients: count[i]}
		if weight[i] > 0 {
			cs.Score, cs.Coverage = sum[i]/weight[i], weight[i]/total
		}
		sel.Scores = append(sel.Scores, cs)
		if cs.Coverage >= MinCoverage && (best < 0 || cs.Score > sel.Scores[best].Score) {
			best = i
		}
	}
	if best < 0 {
		return sel, fmt.Errorf("fedgsp: select: no candidate of %s was scored by clients holding %.0f%% of the validation nodes (%d refusals)",
			strings.Join(grid, ","), 100*MinCoverage, len(sel.Refused))
	}
	sel.Chosen = grid[best]
	return sel, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CandidateTrial is one candidate's local trial on one client.
type CandidateTrial struct {
	Name  string
	Score float64 // best validation score over the trial's epochs; NaN: none
	Err   error   // the learner could not be built
}

// Candidate is one setting of a grid: a preset's name and the client
// configuration it stands for (the preset with the caller's overrides).
type Candidate struct {
	Name   string
	Config Config
}

// Candidates are the presets of grid with o on top of each.
func Candidates(grid []string, o Overrides) ([]Candidate, error) {
	out := make([]Candidate, 0, len(grid))
	for _, name := range grid {
		c, ok := Preset(name)
		if !ok {
			return nil, fmt.Errorf("fedgsp: candidates: unknown preset %q", name)
		}
		o.Apply(&c)
		out = append(out, Candidate{Name: name, Config: c})
	}
	return out, nil
}

// ScoreCandidates is a client's side of the selection: for each candidate,
// a learner over d with its settings (the metric d's, the local
// randomness learnerSeed), initialised from seed as the job initialises
// its model, trained epochs full-batch epochs on d's train nodes, each
// followed by a validation score; the best of those is the candidate's
// score. It also returns d's validation count. Nothing leaves d here: the
// caller releases the scores. build, when set, builds each learner
// instead of NewLearner (the job's builder also refuses settings whose
// descriptors an update could not carry: such a candidate could not run,
// so it is reported with that error and never chosen).
func ScoreCandidates(d *graph.Dataset, cands []Candidate, epochs int, seed, learnerSeed uint64,
	build func(*graph.Dataset, Config) (*Learner, error)) ([]CandidateTrial, int, error) {
	if build == nil {
		build = NewLearner
	}
	if epochs < 1 {
		return nil, 0, fmt.Errorf("fedgsp: score candidates: %d epochs, want at least 1", epochs)
	}
	nVal := 0
	for i, s := range d.Split {
		if s == graph.SplitVal && d.Labels[i] >= 0 {
			nVal++
		}
	}
	out := make([]CandidateTrial, 0, len(cands))
	for _, cand := range cands {
		c := cand.Config
		c.Metric, c.Seed = d.ScoreMetric(), learnerSeed
		l, err := build(d, c)
		if err != nil {
			out = append(out, CandidateTrial{Name: cand.Name, Score: math.NaN(), Err: err})
			continue
		}
		l.Init(seed)
		out = append(out, CandidateTrial{Name: cand.Name, Score: l.trial(epochs)})
	}
	return out, nVal, nil
}

// trial trains epochs steps, scoring validation after each, and returns
// the best validation score (NaN: none, e.g. ROC-AUC over one class). It
// never scores the test nodes: the selection must not see them.
func (l *Learner) trial(epochs int) float64 {
	best := math.NaN()
	for e := 0; e < epochs; e++ {
		if l.nTrain > 0 {
			l.step()
		}
		if v, _ := l.score(l.wsVal, l.valIn, l.valLabels()); !math.IsNaN(v) && (math.IsNaN(best) || v > best) {
			best = v
		}
	}
	return best
}
