package job

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/rs/zerolog"

	"graphfed/aml/amlworld"
	"graphfed/graph"
)

// DataReport is what a dataset tool reports: the dataset's name, its
// parties (banks or clients; 0: none) and the metrics.
type DataReport struct {
	Dataset string
	Clients int
	Metrics map[string]any
}

// DataStatsSpec names the dataset `graphfed data stats` summarises:
// exactly one of an AMLworld *_Trans.csv (AML, with the *_Patterns.txt
// beside it when present), a node-classification TSV directory (Dataset)
// or a LightGCN directory.
type DataStatsSpec struct {
	AML, Dataset, LightGCN string
	// Lenient skips and counts malformed AML rows instead of failing on
	// the first; MaxIssues of them are kept and logged.
	Lenient   bool
	MaxIssues int
	Log       zerolog.Logger
	Progress  Progress // nil: none shown
}

// DefaultDataStatsSpec keeps and logs the first 20 malformed rows under
// Lenient.
func DefaultDataStatsSpec() DataStatsSpec { return DataStatsSpec{MaxIssues: 20} }

// DataStats summarises the dataset spec names.
func DataStats(ctx context.Context, spec DataStatsSpec) (DataReport, error) {
	given := 0
	for _, s := range []string{spec.AML, spec.Dataset, spec.LightGCN} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return DataReport{}, errors.New("give exactly one of --aml FILE, --dataset DIR, --lightgcn DIR")
	}
	if err := ctx.Err(); err != nil {
		return DataReport{}, err
	}
	switch {
	case spec.AML != "":
		opt := amlworld.Options{MaxIssues: spec.MaxIssues}
		if spec.Lenient {
			opt.Policy = amlworld.Lenient
		}
		return amlStats(spec.AML, opt, progressOr(spec.Progress), spec.Log)
	case spec.Dataset != "":
		return datasetStats(spec.Dataset)
	}
	return lightGCNStats(spec.LightGCN)
}

// amlStats summarises an AMLworld transactions file and its patterns
// file.
func amlStats(path string, opt amlworld.Options, p Progress, log zerolog.Logger) (DataReport, error) {
	st, err := os.Stat(path)
	if err != nil {
		return DataReport{}, err
	}
	bar := p.Stage("load "+filepath.Base(path), int(st.Size()))
	opt.Progress = func(done, _ int64) { bar.Update(int(done), "bytes") }
	tg, iss, err := amlworld.LoadTrans(path, opt)
	bar.Finish()
	if err != nil {
		return DataReport{}, err
	}
	LogAMLIssues(log, iss)
	s := tg.Stats()
	split := tg.TemporalSplit()
	counts := split.Counts()
	bankEdges := map[string]int64{}
	for b, n := range s.BankEdges {
		bankEdges[tg.BankIDs[b]] = n
	}
	m := map[string]any{
		"rows":                        s.Rows,
		"accounts":                    s.Accounts,
		"banks":                       s.Banks,
		"laundering_rows":             s.LaunderingRows,
		"laundering_rate":             s.LaunderingRate,
		"cross_bank_share":            s.CrossBankShare,
		"laundering_cross_bank_share": s.LaunderingCrossBankShare,
		"bank_edge_ratio":             s.BankEdgeRatio,
		"bank_edges":                  bankEdges,
		"self_transfer_share":         ratio64(s.SelfTransfers, s.Rows),
		"mixed_currency_rows":         s.MixedCurrencyRows,
		"skipped_rows":                iss.Count,
		"days":                        split.Days(),
		"split_days":                  []int{split.TrainEnd, split.ValEnd - split.TrainEnd, split.Days() - split.ValEnd},
		"split_rows":                  counts[:],
	}
	if s.Rows > 0 {
		m["first_timestamp"] = string(amlworld.AppendTime(nil, s.FirstTime))
		m["last_timestamp"] = string(amlworld.AppendTime(nil, s.LastTime))
	}
	ppath, err := amlworld.SiblingPath(path, "Patterns")
	if err == nil {
		_, err = os.Stat(ppath)
	}
	switch {
	case err == nil:
		attempts, piss, err := amlworld.LoadPatterns(ppath, amlworld.Options{Policy: opt.Policy, MaxIssues: opt.MaxIssues})
		if err != nil {
			return DataReport{}, err
		}
		LogAMLIssues(log, piss)
		typ := map[string]int64{}
		var total int64
		for t, n := range amlworld.RowsPerTypology(attempts) {
			typ[amlworld.Typology(t).String()] = n
			total += n
		}
		m["rows_per_typology"] = typ
		m["attempts"] = len(attempts)
		m["pattern_rows"] = total
		m["patterns_file"] = ppath
		m["skipped_pattern_lines"] = piss.Count
	case errors.Is(err, fs.ErrNotExist):
		log.Warn().Str("file", ppath).Msg("no patterns file next to the transactions; rows_per_typology omitted")
	default:
		log.Warn().Err(err).Msg("patterns file not read; rows_per_typology omitted")
	}
	return DataReport{Dataset: tg.Name, Clients: s.Banks, Metrics: m}, nil
}

// datasetStats summarises a node-classification dataset in the TSV
// layout: graph.DatasetStats, its JSON field names the metric names.
func datasetStats(dir string) (DataReport, error) {
	d, err := graph.LoadTSV(dir)
	if err != nil {
		return DataReport{}, err
	}
	raw, err := json.Marshal(graph.DatasetStats(d))
	if err != nil {
		return DataReport{}, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return DataReport{}, err
	}
	return DataReport{Dataset: d.Name, Metrics: m}, nil
}

// lightGCNStats summarises a LightGCN-layout recommendation dataset.
func lightGCNStats(dir string) (DataReport, error) {
	d, err := graph.LoadLightGCN(dir)
	if err != nil {
		return DataReport{}, err
	}
	users := make([]int, d.Users)
	var trainUsers, testUsers, testOnly int
	for u := range d.Users {
		users[u] = d.Train.Degree(u)
		if users[u] > 0 {
			trainUsers++
		}
		if d.Test.Degree(u) > 0 {
			testUsers++
			if users[u] == 0 {
				testOnly++
			}
		}
	}
	items := d.ItemDegrees()
	var coldTest int // test interactions with an item nobody trained on
	for _, i := range d.Test.ColIdx {
		if items[i] == 0 {
			coldTest++
		}
	}
	return DataReport{Dataset: d.Name, Metrics: map[string]any{
		"users": d.Users, "items": d.Items, "nodes": d.Users + d.Items,
		"train_interactions": d.NumTrain(), "test_interactions": d.NumTest(),
		"train_users": trainUsers, "test_users": testUsers, "test_users_without_train": testOnly,
		"test_interactions_cold_item": coldTest,
		"density":                     ratio64(int64(d.NumTrain()), int64(d.Users)*int64(d.Items)),
		"user_degree":                 degreeSummary(users),
		"item_degree":                 degreeSummary(items),
	}}, nil
}

// degreeSummary is the mean, median, p90 and maximum of degrees.
func degreeSummary(deg []int) map[string]any {
	if len(deg) == 0 {
		return map[string]any{"mean": 0, "median": 0, "p90": 0, "max": 0}
	}
	s := slices.Clone(deg)
	slices.Sort(s)
	var sum int
	for _, v := range s {
		sum += v
	}
	return map[string]any{"mean": float64(sum) / float64(len(s)), "median": s[len(s)/2],
		"p90": s[min(len(s)-1, len(s)*9/10)], "max": s[len(s)-1]}
}

// ratio64 is a/b, 0 when b is 0.
func ratio64(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
