package job

import (
	"path/filepath"
	"strconv"
	"time"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/runreport"
)

// runLedgerPath is where a run directory keeps its ledger's export.
func runLedgerPath(dir string) string { return filepath.Join(dir, "ledger.jsonl") }

// roundOf is a closed round as rounds.csv records it, with the score of
// the model it started from.
func roundOf(rc aggregator.RoundClosed, score float64) runreport.Round {
	return runreport.Round{Round: rc.Round, Reason: rc.Reason, In: rc.In, Late: rc.Late, Stale: rc.Stale,
		Seconds: rc.Duration.Seconds(), Score: score}
}

// withProgress adds the job's traffic and spending so far to a round.
func withProgress(r *runreport.Round, p deploy.Progress) {
	r.Bytes, r.Messages, r.ClientEpsilon, r.NodeEpsilon = p.Bytes, p.Messages, p.ClientEpsilon, p.NodeEpsilonP90
}

// simSummary is a simulation's summary: what ran, its metrics, its
// traffic and what the ledger says it spent.
func simSummary(sc SimConfig, dataset string, clients int, res SimResult, priv SimPrivacy, metrics map[string]any) runreport.Summary {
	return runreport.Summary{
		Command: "sim", Algo: sc.Algo, Dataset: dataset, Clients: clients, Rounds: int(res.Agg.Rounds), Seed: int64(sc.Seed),
		Metrics: metrics,
		Comm:    &runreport.Comm{Bytes: res.Bytes, Messages: res.Messages},
		Privacy: withSecAgg(privacyReport(res.Agg.Final, res.Ledger, priv), sc, res),
	}
}

// withSecAgg adds the job's secure aggregation to its privacy report.
func withSecAgg(p map[string]any, sc SimConfig, res SimResult) map[string]any {
	on, err := resolveSecAgg(sc.SecAgg, sc.Algo, sc.Robust, true)
	p["secagg"] = secAggSummary(on && err == nil, res.Agg.Closes, res.Agg.Final)
	return p
}

// runFiles is what a simulation writes to its run directory: the summary
// with the command's settings, the seconds since start, the job's own
// seconds, the privacy settings and the traffic per channel; the rounds;
// the clients' scores; the ledger.
func runFiles(s runreport.Summary, settings map[string]string, changed []string, start time.Time, res SimResult, priv SimPrivacy,
	column string, rows []runreport.Round, score func(map[string]float64) float64) runreport.RunFiles {
	// The metrics map is the caller's summary's too: what the directory
	// adds (job_seconds, peak_rss_mib) is in the printed report as well.
	s.Seconds = time.Since(start).Seconds()
	if res.Seconds > 0 {
		s.Metrics["job_seconds"] = res.Seconds
	}
	s.Settings, s.Changed = settings, changed
	cp := ClaimParams(priv)
	s.PrivacySettings = &cp
	if s.Comm != nil && len(res.Traffic) > 0 {
		c := *s.Comm
		c.Channels = map[string]runreport.Traffic{}
		for k, t := range res.Traffic {
			c.Channels[string(k)] = runreport.Traffic{Messages: t.Messages, Bytes: t.Bytes}
		}
		s.Comm = &c
	}
	return runreport.RunFiles{Summary: s, ScoreColumn: column, Rounds: rows, PerRound: res.Agg.PerRound, ClientScore: score, Ledger: res.Ledger}
}

// effective records in a run's settings the values the job chose for the
// settings its caller left unset (the algorithm, rounds and local epochs
// of the task), so that the summary says what ran.
func effective(settings map[string]string, sc SimConfig) {
	for key, v := range map[string]string{"algo": sc.Algo, "rounds": strconv.Itoa(sc.Rounds), "local-epochs": strconv.Itoa(sc.LocalEpochs)} {
		if _, ok := settings[key]; ok {
			settings[key] = v
		}
	}
}
