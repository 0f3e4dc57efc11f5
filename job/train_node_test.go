package job

import (
	"context"
	"path/filepath"
	"testing"

	"graphfed/gnn"
)

// TestTrainParamsOver checks that set parameters override the defaults
// and unset ones keep them, a set zero dropout or weight decay included.
func TestTrainParamsOver(t *testing.T) {
	zero := 0.0
	d := NodeTrainHyper()
	for _, tc := range []struct {
		name string
		p    TrainParams
		want TrainHyper
	}{
		{"unset", TrainParams{}, d},
		{"ints and lr", TrainParams{Epochs: 7, Hidden: 4, LR: 0.5},
			TrainHyper{Epochs: 7, Hidden: 4, LR: 0.5, Dropout: d.Dropout, WeightDecay: d.WeightDecay}},
		{"zero dropout and decay", TrainParams{Dropout: &zero, WeightDecay: &zero},
			TrainHyper{Epochs: d.Epochs, Hidden: d.Hidden, LR: d.LR}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.over(d); got != tc.want {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
		})
	}
	if c := gnn.DefaultTrainConfig(); d.Epochs != c.Epochs || d.Hidden != c.Hidden || d.LR != c.LR {
		t.Errorf("node defaults %+v are not gnn's %+v", d, c)
	}
}

// TestTrainNode trains a few epochs on the tiny TSV dataset and checks the
// report's algorithm, name and metrics.
func TestTrainNode(t *testing.T) {
	dir := filepath.Join("..", "graph", "testdata", "tsv", "tiny")
	for _, model := range []string{"", gnn.KindSAGE} {
		t.Run(model, func(t *testing.T) {
			res, err := TrainNode(context.Background(), TrainNodeSpec{Dataset: dir, Model: model, Params: TrainParams{Epochs: 3}, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			want := "centralized-" + DefaultNodeModel
			if model != "" {
				want = "centralized-" + model
			}
			if res.Algo != want || res.Dataset != "tiny" || res.Metrics["epochs"] != 3 {
				t.Errorf("%+v", res)
			}
			for _, k := range []string{"test_acc", "val_acc", "train_acc", "test_macro_f1"} {
				if v, ok := res.Metrics[k].(float64); !ok || v < 0 || v > 1 {
					t.Errorf("%s = %v", k, res.Metrics[k])
				}
			}
		})
	}
	if _, err := TrainNode(context.Background(), TrainNodeSpec{}); err == nil {
		t.Error("no dataset: accepted")
	}
}
