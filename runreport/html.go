package runreport

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"graphfed/privacy"
)

//go:embed report.html.tmpl
var templates embed.FS

// page is the parsed template set: "report" is the whole run, "audit"
// the privacy audit on its own.
var page = template.Must(template.New("").Funcs(template.FuncMap{
	"num":   fmtNum,
	"eps":   fmtEps,
	"bytes": HumanBytes,
	"join":  strings.Join,
	"rhos":  fmtRhos,
	"pct":   func(a, b int64) string { return fmt.Sprintf("%.1f%%", 100*float64(a)/math.Max(1, float64(b))) },
}).ParseFS(templates, "report.html.tmpl"))

// Write writes run's report.html.
func Write(w io.Writer, run Run) error {
	if err := page.ExecuteTemplate(w, "report", newView(run)); err != nil {
		return fmt.Errorf("runreport: write report: %w", err)
	}
	return nil
}

// AuditPage is the audit part of a report on its own (`graphfed audit
// --html`): a ledger's audit and the claims it lets a run state.
type AuditPage struct {
	Source string // the ledger audited, as the page names it
	Audit  privacy.Report
	Claims []Claim
	Target float64 // the embeddings' per-node ε target, 0: none
}

// WriteAudit writes the audit part as a page of its own.
func WriteAudit(w io.Writer, a AuditPage) error {
	v := view{Title: "privacy audit of " + a.Source, Privacy: newPrivacyView(&a.Audit, a.Claims, a.Target)}
	if err := page.ExecuteTemplate(w, "auditpage", v); err != nil {
		return fmt.Errorf("runreport: write audit: %w", err)
	}
	return nil
}

// view is what the template shows.
type view struct {
	Title     string
	Summary   Summary
	Settings  []kv // the settings given, then (AllSettings) every one
	All       []kv
	Headline  []kv // scalar metrics
	Nested    []kv // metrics that are tables, as indented JSON
	Quality   []template.HTML
	Clients   []clientRow
	Rounds    []Round
	Metric    string
	Reasons   []kv // rounds closed per reason
	RoundPlot template.HTML
	Channels  []channelRow
	Traffic   template.HTML
	Privacy   *privacyView
	Eff       []kv
}

type kv struct{ K, V string }

type clientRow struct {
	Client            string
	Last, Best        string
	BestRound, Scored int
}

type channelRow struct {
	Kind     string
	Messages int64
	Bytes    int64
	Total    int64
}

func newView(run Run) view {
	s := run.Summary
	v := view{Title: fmt.Sprintf("%s on %s", s.Algo, s.Dataset), Summary: s, Rounds: run.Rounds, Metric: run.Metric}
	changed := map[string]bool{}
	for _, k := range s.Changed {
		changed[k] = true
		v.Settings = append(v.Settings, kv{k, s.Settings[k]})
	}
	for _, k := range sortedKeys(s.Settings) {
		v.All = append(v.All, kv{k, s.Settings[k]})
	}
	for _, k := range sortedKeys(s.Metrics) {
		if f, ok := number(s.Metrics[k]); ok {
			v.Headline = append(v.Headline, kv{k, fmtNum(f)})
		} else if str, ok := s.Metrics[k].(string); ok {
			v.Headline = append(v.Headline, kv{k, str})
		} else if b, err := json.MarshalIndent(s.Metrics[k], "", "  "); err == nil {
			v.Nested = append(v.Nested, kv{k, string(b)})
		}
	}
	v.Quality, v.Clients = qualityPlots(run)
	v.Reasons, v.RoundPlot = roundsView(run.Rounds)
	v.Channels, v.Traffic = trafficView(s, run.Rounds)
	if run.Audit != nil {
		v.Privacy = newPrivacyView(run.Audit, run.Claims, run.Params.NodeTarget)
	}
	v.Eff = efficiency(s, run.Rounds)
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// qualityPlots are the score per round (the run's metric, pooled as the
// run reports it) and per client, with each client's last and best score.
func qualityPlots(run Run) ([]template.HTML, []clientRow) {
	pooled := Series{Name: run.Summary.Algo}
	for _, r := range run.Rounds {
		pooled.X, pooled.Y = append(pooled.X, float64(r.Round)), append(pooled.Y, r.Score)
	}
	out := []template.HTML{Plot{Title: run.Metric + " of the model at round start (the run's figure)", XLabel: "round", YLabel: run.Metric,
		Series: []Series{pooled}}.SVG()}
	if len(run.Clients) == 0 {
		return out, nil
	}
	by := map[string]*Series{}
	var names []string
	for _, c := range run.Clients {
		s := by[c.Client]
		if s == nil {
			s = &Series{Name: c.Client}
			by[c.Client] = s
			names = append(names, c.Client)
		}
		s.X, s.Y = append(s.X, float64(c.Round)), append(s.Y, c.Score)
	}
	slices.Sort(names)
	var ss []Series
	var rows []clientRow
	for _, n := range names {
		s := by[n]
		ss = append(ss, *s)
		row := clientRow{Client: n, Last: "–", Best: "–"}
		best := math.Inf(-1)
		for i, y := range s.Y {
			if math.IsNaN(y) {
				continue
			}
			row.Scored++
			row.Last = fmtNum(y)
			if y > best {
				best, row.BestRound = y, int(s.X[i])
				row.Best = fmtNum(y)
			}
		}
		rows = append(rows, row)
	}
	out = append(out, Plot{Title: run.Metric + " per client (each client's own evaluation data)", XLabel: "round", YLabel: run.Metric, Series: ss}.SVG())
	return out, rows
}

// roundsView counts closes by reason and plots each round's duration and
// its late and stale updates.
func roundsView(rows []Round) ([]kv, template.HTML) {
	count := map[string]int{}
	dur := Series{Name: "round duration (s)"}
	for _, r := range rows {
		count[r.Reason]++
		dur.X, dur.Y = append(dur.X, float64(r.Round)), append(dur.Y, r.Seconds)
	}
	var reasons []kv
	for _, k := range sortedKeys(count) {
		reasons = append(reasons, kv{k, fmt.Sprint(count[k])})
	}
	return reasons, Plot{Title: "round duration", XLabel: "round", YLabel: "seconds", Series: []Series{dur}}.SVG()
}

// trafficView is the traffic per channel and the cumulative bytes per
// round.
func trafficView(s Summary, rows []Round) ([]channelRow, template.HTML) {
	var out []channelRow
	if s.Comm != nil {
		for _, k := range sortedKeys(s.Comm.Channels) {
			t := s.Comm.Channels[k]
			out = append(out, channelRow{Kind: k, Messages: t.Messages, Bytes: t.Bytes, Total: s.Comm.Bytes})
		}
		slices.SortStableFunc(out, func(a, b channelRow) int { return int(min(max(b.Bytes-a.Bytes, -1), 1)) })
	}
	mib := Series{Name: "all parties"}
	for _, r := range rows {
		mib.X, mib.Y = append(mib.X, float64(r.Round)), append(mib.Y, float64(r.Bytes)/(1<<20))
	}
	return out, Plot{Title: "bytes published so far (every party, cumulative)", XLabel: "round", YLabel: "MiB", Series: []Series{mib}}.SVG()
}

// efficiency are the PETs-style figures: time, memory and communication.
func efficiency(s Summary, rows []Round) []kv {
	var out []kv
	if f, ok := number(s.Metrics["job_seconds"]); ok {
		out = append(out, kv{"training time (job start to end)", fmt.Sprintf("%.1f s", f)})
	}
	out = append(out, kv{"wall time (command)", fmt.Sprintf("%.1f s", s.Seconds)})
	var sum float64
	for _, r := range rows {
		sum += r.Seconds
	}
	if len(rows) > 0 {
		out = append(out, kv{"mean round duration", fmt.Sprintf("%.2f s", sum/float64(len(rows)))})
	}
	if f, ok := number(s.Metrics["peak_rss_mib"]); ok {
		out = append(out, kv{"peak memory (resident set, whole process)", fmt.Sprintf("%.0f MiB", f)})
	}
	if s.Comm != nil {
		out = append(out, kv{"messages (every party)", fmt.Sprint(s.Comm.Messages)}, kv{"bytes (every party)", HumanBytes(s.Comm.Bytes)})
		if s.Clients > 0 && len(rows) > 0 {
			out = append(out, kv{"bytes per client per round", HumanBytes(s.Comm.Bytes / int64(s.Clients*len(rows)))})
		}
	}
	return out
}

func fmtNum(f float64) string {
	switch {
	case math.IsNaN(f):
		return "–"
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return fmt.Sprintf("%.0f", f)
	case math.Abs(f) >= 1e6 || math.Abs(f) < 1e-3:
		return fmt.Sprintf("%.3g", f)
	}
	return fmt.Sprintf("%.4g", f)
}

func fmtEps(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	if f >= 1e5 {
		return fmt.Sprintf("%.2g", f)
	}
	return fmt.Sprintf("%.3f", f)
}

// HumanBytes formats a byte count for reports, progress and listing lines.
func HumanBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// fmtRhos lists a calibration's distances by percentile.
func fmtRhos(c privacy.Calibration) string {
	var parts []string
	for i, q := range c.Q {
		if i < len(c.Rho) {
			parts = append(parts, fmt.Sprintf("p%g=%.4f", q, c.Rho[i]))
		}
	}
	return strings.Join(parts, ", ")
}
