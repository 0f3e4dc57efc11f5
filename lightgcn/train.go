package lightgcn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"graphfed/graph"
)

// EvalPoint is one evaluation of a training run.
type EvalPoint struct {
	Epoch   int     `json:"epoch"`
	LR      float64 `json:"lr"`   // the epoch's learning rate
	Loss    float64 `json:"loss"` // the epoch's mean BPR + Reg·L2 loss
	Recall  float64 `json:"recall_at_k"`
	NDCG    float64 `json:"ndcg_at_k"`
	Seconds float64 `json:"seconds"` // since training started, evaluations included
}

// Result is a training run: the best evaluation (by Recall@K, as the
// paper reports its figures), the last one, and the curve.
type Result struct {
	Dataset      string
	K            int // of Recall@K and NDCG@K
	Best, Last   EvalPoint
	Epochs       int         // epochs completed
	EpochSeconds float64     // mean seconds of a training epoch, evaluations excluded
	Seconds      float64     // the whole run
	Users        int         // test users evaluated
	Curve        []EvalPoint `json:"curve"`
}

// Train trains a LightGCN on d.Train for cfg.Epochs epochs of
// ⌈|train|/Batch⌉ steps, evaluating on d.Test every cfg.EvalEvery epochs
// and after the last, at the rate cfg.LRAt gives each epoch. Progress
// goes to log. When ctx is cancelled it
// stops after the current step and returns the run so far with ctx's
// error.
func Train(ctx context.Context, d *graph.Interactions, cfg Config, log zerolog.Logger) (*Result, error) {
	if d == nil || d.Train == nil || d.Test == nil {
		return nil, fmt.Errorf("lightgcn: train: no train or test interactions")
	}
	m, err := New(d.Train, cfg)
	if err != nil {
		return nil, err
	}
	nnz := d.Train.NNZ()
	if nnz == 0 {
		return nil, fmt.Errorf("lightgcn: train: no training interactions")
	}
	steps := (nnz + cfg.Batch - 1) / cfg.Batch
	log.Info().Str("dataset", d.Name).Int("users", d.Users).Int("items", d.Items).Int("train", nnz).
		Int("test", d.Test.NNZ()).Int("adj_nnz", m.prop.a.NNZ()).Int("steps_per_epoch", steps).
		Int("dim", cfg.Dim).Int("layers", cfg.Layers).Float64("lr", cfg.LR).Int("batch", cfg.Batch).
		Float64("reg", cfg.Reg).Str("lr_schedule", cfg.LRSchedule).Float64("lr_decay", cfg.LRDecay).
		Ints("lr_decay_epochs", cfg.LRDecayEpochs).Msg("lightgcn: training")
	smp := newSampler(d.Train, cfg.Seed+1)
	users, pos, neg := make([]int32, cfg.Batch), make([]int32, cfg.Batch), make([]int32, cfg.Batch)
	res := &Result{Dataset: d.Name, K: cfg.TopK}
	start := time.Now()
	var trainSec float64
	evaluate := func(epoch int, lr, loss float64) error {
		t0 := time.Now()
		sc, err := m.Evaluate(d.Test)
		if err != nil {
			return err
		}
		p := EvalPoint{Epoch: epoch, LR: lr, Loss: loss, Recall: sc.Recall, NDCG: sc.NDCG, Seconds: time.Since(start).Seconds()}
		res.Users, res.Last = sc.Users, p
		res.Curve = append(res.Curve, p)
		if len(res.Curve) == 1 || p.Recall > res.Best.Recall {
			res.Best = p
		}
		log.Info().Int("epoch", epoch).Float64("lr", lr).Float64("loss", loss).Float64("recall", sc.Recall).Float64("ndcg", sc.NDCG).
			Int("best_epoch", res.Best.Epoch).Float64("best_recall", res.Best.Recall).
			Float64("eval_s", time.Since(t0).Seconds()).Msgf("lightgcn: recall@%d %.4f ndcg@%d %.4f", sc.K, sc.Recall, sc.K, sc.NDCG)
		return nil
	}
	finish := func(err error) (*Result, error) {
		res.Seconds = time.Since(start).Seconds()
		if res.Epochs > 0 {
			res.EpochSeconds = trainSec / float64(res.Epochs)
		}
		return res, err
	}
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		t0 := time.Now()
		lr := cfg.LRAt(epoch)
		m.opt.lr = lr
		var loss float64
		for s := range steps {
			if err := ctx.Err(); err != nil {
				return finish(fmt.Errorf("lightgcn: train: epoch %d: %w", epoch, err))
			}
			nb := min(cfg.Batch, nnz-s*cfg.Batch)
			smp.fill(users[:nb], pos[:nb], neg[:nb])
			l, err := m.Step(users[:nb], pos[:nb], neg[:nb])
			if err != nil {
				return finish(err)
			}
			loss += l.BPR + cfg.Reg*l.L2
		}
		loss /= float64(steps)
		sec := time.Since(t0).Seconds()
		trainSec += sec
		res.Epochs = epoch
		log.Info().Int("epoch", epoch).Float64("lr", lr).Float64("loss", loss).Float64("epoch_s", sec).Msg("lightgcn: epoch")
		if (cfg.EvalEvery > 0 && epoch%cfg.EvalEvery == 0) || epoch == cfg.Epochs {
			if err := evaluate(epoch, m.opt.lr, loss); err != nil {
				return finish(err)
			}
		}
	}
	if cfg.Epochs == 0 {
		if err := evaluate(0, cfg.LR, 0); err != nil {
			return finish(err)
		}
	}
	return finish(nil)
}

// sampler draws BPR triples as the official code's UniformSample_original
// does: a user uniformly among all users, one of the user's training items
// uniformly, and a negative item uniformly among the items the user has
// not interacted with (by rejection). The official code skips a drawn
// user without training items; here such a user is redrawn, so an epoch
// always has the same number of triples.
type sampler struct {
	train *graph.CSR
	users []int32 // users with at least one training item
	rng   *rand.Rand
}

func newSampler(train *graph.CSR, seed uint64) *sampler {
	s := &sampler{train: train, rng: rand.New(rand.NewPCG(seed, 0x11c6))}
	for u := range train.Rows {
		// Users that have every item cannot have a negative.
		if d := train.Degree(u); d > 0 && d < train.Cols {
			s.users = append(s.users, int32(u))
		}
	}
	return s
}

// fill sets users[b], pos[b], neg[b] (item ids) to fresh triples for
// every b < len(users).
func (s *sampler) fill(users, pos, neg []int32) {
	pos, neg = pos[:len(users)], neg[:len(users)]
	ni := s.train.Cols
	for b := range users {
		u := s.users[s.rng.IntN(len(s.users))]
		items, _ := s.train.Row(int(u))
		users[b], pos[b] = u, items[s.rng.IntN(len(items))]
		for {
			j := int32(s.rng.IntN(ni))
			if _, in := slices.BinarySearch(items, j); !in {
				neg[b] = j
				break
			}
		}
	}
}
