package job

import (
	"context"
	"strings"
	"testing"
)

// Train refuses contradictory specs before it reads or trains anything.
func TestTrainRefuses(t *testing.T) {
	four := 4
	for _, tc := range []struct {
		name string
		edit func(*TrainSpec)
		want string
	}{
		{"aml with a dataset", func(s *TrainSpec) { s.AML.Trans, s.Node.Dataset = "x_Trans.csv", "cora" }, "--aml excludes --dataset"},
		{"aml with a scenario", func(s *TrainSpec) { s.AML.Trans, s.Node.Scenario = "x_Trans.csv", "csbm" }, "--aml excludes --dataset"},
		{"both step flags", func(s *TrainSpec) { s.AML.Trans, s.StepsAlias, s.AML.StepsPerEpoch = "x_Trans.csv", &four, &four }, "--steps is the old name"},
		{"node without data", func(s *TrainSpec) {}, "train: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultTrainSpec()
			tc.edit(&s)
			if _, err := Train(context.Background(), s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Train: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
