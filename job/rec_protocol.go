package job

import (
	"fmt"
	"math"
	"slices"

	"graphfed/workload/rec"
)

// recShape is a spec's clients and edge variation, defaults applied.
func recShape(spec RecSpec) (clients int, ev float64) {
	clients, ev = spec.Clients, spec.EdgeVariation
	if clients == 0 {
		clients = DefaultNodeClients
	}
	if ev == 0 {
		ev = DefaultEdgeVariation
	}
	return clients, ev
}

// RecProtocol is LPSFed's evaluation protocol as `graphfed split rec` and
// `graphfed sim --lightgcn` take it (issue 32): the holdout spec
// (rec.ParseHoldout: "" or lightgcn, or random:TRAIN,VAL,TEST) and its
// seed, which partitioning, and the partition's seed (nil: the run's).
type RecProtocol struct {
	Split         string
	SplitSeed     uint64
	Partitioning  int
	PartitionSeed *uint64
}

// RecSplitHelp documents --split for a recommendation dataset.
const RecSplitHelp = "lightgcn (the dataset's train.txt/test.txt, the default) or random:TRAIN,VAL,TEST " +
	"(LPSFed's random:0.8,0.1,0.1: train and test pooled, every user's items split at random under --split-seed; " +
	"with a validation share sim selects the best validation round)"

// holdout parses the split spec under the protocol's seed.
func (p RecProtocol) holdout() (rec.Holdout, error) {
	h, err := rec.ParseHoldout(p.Split)
	if err != nil {
		return rec.Holdout{}, fmt.Errorf("--split: %w", err)
	}
	h.Seed = p.SplitSeed
	return h, nil
}

// RecSplitOptions are the options of the rec.Split RunRec cuts spec's
// dataset with (before any --validation hold-out of the LightGCN split):
// `graphfed split rec` with them writes the clients the job trains.
func RecSplitOptions(spec RecSpec) (rec.SplitOptions, error) {
	h, err := checkRecProtocol(spec)
	if err != nil {
		return rec.SplitOptions{}, err
	}
	clients, ev := recShape(spec)
	seed, _ := seedOf(spec.Seed)
	return recClientsOptions(spec, h, clients, 1, ev, seed).SplitOptions(), nil
}

// recClientsOptions are the options RunRec builds its clients with, from
// the spec, the run's seed and Φ: with the same holdout, partitioning,
// partition seed, edge variation and users, `graphfed split rec` (SplitRec,
// rec.Split on ClientsOptions.SplitOptions) writes the same clients.
func recClientsOptions(spec RecSpec, h rec.Holdout, clients, phi int, ev float64, seed uint64) rec.ClientsOptions {
	pseed := seed // the run's seed, as before partition seeds existed
	if spec.Protocol.PartitionSeed != nil {
		pseed = *spec.Protocol.PartitionSeed
	}
	return rec.ClientsOptions{Clients: clients, Phi: phi, EdgeVariation: ev, MaxUsers: spec.MaxUsers,
		Holdout: h, Partitioning: spec.Protocol.Partitioning, Seed: seed, PartitionSeed: &pseed}
}

// recSelectKey is the score a validation split selects the round by.
const recSelectKey = "val_recall_at_20"

// recSelection is the model a validation split selects: the round whose
// model has the best mean validation Recall@20 over clients (the earliest
// on a tie), and its test scores. Round k's model is the one round k+1
// started from (agents score it before training) and the last round's
// the final model.
type recSelection struct {
	Round       int     `json:"round"` // 0: the initial model
	By          string  `json:"by"`
	ValRecall   float64 `json:"val_recall_at_20"`
	ValNDCG     float64 `json:"val_ndcg_at_20"`
	Recall      float64 `json:"recall_at_20"` // test, mean over clients
	NDCG        float64 `json:"ndcg_at_20"`
	Pooled      float64 `json:"recall_at_20_pooled"`
	FinalRecall float64 `json:"final_recall_at_20"` // test, the last round's model, for comparison
	// Curve is every evaluated round's mean validation and test Recall@20.
	Curve []recRoundScore `json:"curve"`
}

// recRoundScore is one evaluated model's mean scores over clients.
type recRoundScore struct {
	Round     int     `json:"round"`
	ValRecall float64 `json:"val_recall_at_20"`
	Recall    float64 `json:"recall_at_20"`
	NDCG      float64 `json:"ndcg_at_20"`
}

// selectRecRound picks the best validation round from the scores of
// every round's starting model (perRound, by round) and the final model
// after rounds rounds. It reports ok false when no model has validation
// scores from every client.
func selectRecRound(perRound map[uint64]map[string]map[string]float64, final map[string]map[string]float64, rounds, clients int) (recSelection, bool) {
	sel := recSelection{By: recSelectKey, Round: -1}
	models := map[int]map[string]map[string]float64{rounds: final}
	for r, sc := range perRound {
		if k := int(r) - 1; k >= 0 && k < rounds {
			models[k] = sc
		}
	}
	best := math.Inf(-1)
	for _, k := range slices.Sorted(func(yield func(int) bool) {
		for k := range models {
			if !yield(k) {
				return
			}
		}
	}) {
		sc := models[k]
		v, n := meanScore(sc, recSelectKey)
		if n < clients {
			continue
		}
		rs := recRoundScore{Round: k, ValRecall: v}
		rs.Recall, _ = meanScore(sc, "recall_at_20")
		rs.NDCG, _ = meanScore(sc, "ndcg_at_20")
		sel.Curve = append(sel.Curve, rs)
		if v > best {
			best = v
			sel.Round, sel.ValRecall, sel.Recall, sel.NDCG = k, v, rs.Recall, rs.NDCG
			sel.ValNDCG, _ = meanScore(sc, "val_ndcg_at_20")
			sel.Pooled = weightedScore(sc, "recall_at_20", "eval_users")
		}
	}
	sel.FinalRecall, _ = meanScore(final, "recall_at_20")
	return sel, sel.Round >= 0
}

// checkRecProtocol parses the spec's holdout and rejects contradictory
// protocol settings.
func checkRecProtocol(spec RecSpec) (rec.Holdout, error) {
	h, err := spec.Protocol.holdout()
	if err != nil {
		return h, err
	}
	if h.Random() && spec.Validation != 0 {
		return h, fmt.Errorf("--validation holds out training items of the LightGCN split; --split %s has its own validation share", h)
	}
	if spec.Protocol.Partitioning < 0 {
		return h, fmt.Errorf("--partitioning %d < 0", spec.Protocol.Partitioning)
	}
	return h, nil
}

// edgeSpread is every client's training interactions relative to the
// mean share, (train − mean)/mean, by client id: the edge variation the
// partition realized.
func edgeSpread(cs []rec.ClientStats) map[string]float64 {
	total := 0
	for _, c := range cs {
		total += c.Train
	}
	out := make(map[string]float64, len(cs))
	mean := float64(total) / float64(len(cs))
	for _, c := range cs {
		out[c.ID] = (float64(c.Train) - mean) / mean
	}
	return out
}
