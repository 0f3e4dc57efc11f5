package lightgcn

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/workload/rec"
)

// TestLRAt checks each schedule's rate at the epochs around its changes.
func TestLRAt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		schedule string
		decay    float64
		epochs   int
		mile     []int
		want     map[int]float64 // epoch → rate, for LR 0.01
	}{
		{"constant", ScheduleConstant, 0.1, 100, nil, map[int]float64{1: 0.01, 50: 0.01, 100: 0.01}},
		{"empty is constant", "", 0.1, 100, nil, map[int]float64{1: 0.01, 100: 0.01}},
		{"step one milestone", ScheduleStep, 0.1, 300, []int{100},
			map[int]float64{1: 0.01, 100: 0.01, 101: 0.001, 300: 0.001}},
		{"step two milestones", ScheduleStep, 0.3, 500, []int{80, 200},
			map[int]float64{80: 0.01, 81: 0.003, 200: 0.003, 201: 0.0009, 500: 0.0009}},
		{"step milestone past the end", ScheduleStep, 0.5, 10, []int{20}, map[int]float64{1: 0.01, 10: 0.01}},
		{"cosine to zero", ScheduleCosine, 0, 100, nil,
			map[int]float64{1: 0.01, 51: 0.005, 101: 0, 26: 0.005 * (1 + math.Sqrt2/2)}},
		{"cosine to a tenth", ScheduleCosine, 0.1, 100, nil, map[int]float64{1: 0.01, 51: 0.0055, 101: 0.001}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.LR, c.LRSchedule, c.LRDecay, c.Epochs, c.LRDecayEpochs = 0.01, tc.schedule, tc.decay, tc.epochs, tc.mile
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			for e, want := range tc.want {
				if got := c.LRAt(e); math.Abs(got-want) > 1e-12 {
					t.Errorf("epoch %d: lr %v, want %v", e, got, want)
				}
			}
			for e := 2; e <= tc.epochs; e++ {
				if c.LRAt(e) > c.LRAt(e-1) {
					t.Fatalf("lr rises from epoch %d (%v) to %d (%v)", e-1, c.LRAt(e-1), e, c.LRAt(e))
				}
			}
		})
	}
}

// TestScheduleValidate lists the schedules Validate refuses and what the
// error names.
func TestScheduleValidate(t *testing.T) {
	for _, tc := range []struct {
		name, schedule string
		decay          float64
		mile           []int
		errHas         string
	}{
		{"unknown", "linear", 0.1, nil, "want constant, step or cosine"},
		{"step without milestones", ScheduleStep, 0.1, nil, "without decay epochs"},
		{"step milestone 0", ScheduleStep, 0.1, []int{0, 10}, "increasing"},
		{"step milestones not increasing", ScheduleStep, 0.1, []int{100, 100}, "increasing"},
		{"step factor 1", ScheduleStep, 1, []int{10}, "in (0, 1)"},
		{"step factor 0", ScheduleStep, 0, []int{10}, "in (0, 1)"},
		{"constant with milestones", ScheduleConstant, 0.1, []int{10}, "constant learning rate"},
		{"cosine with milestones", ScheduleCosine, 0.1, []int{10}, "anneals over all"},
		{"cosine fraction 1", ScheduleCosine, 1, nil, "in [0, 1)"},
		{"cosine fraction negative", ScheduleCosine, -0.1, nil, "in [0, 1)"},
	} {
		c := DefaultConfig()
		c.LRSchedule, c.LRDecay, c.LRDecayEpochs = tc.schedule, tc.decay, tc.mile
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.errHas)
		}
	}
}

// TestSpecSchedule checks that decay epochs alone choose the step
// schedule and that an unset factor keeps DefaultConfig's.
func TestSpecSchedule(t *testing.T) {
	c := Spec{LRDecayEpochs: []int{100, 150}}.Config()
	if c.LRSchedule != ScheduleStep || c.LRDecay != 0.1 || len(c.LRDecayEpochs) != 2 {
		t.Fatalf("config %+v", c)
	}
	half := 0.5
	c = Spec{LRSchedule: ScheduleCosine, LRDecay: &half}.Config()
	if c.LRSchedule != ScheduleCosine || c.LRDecay != 0.5 {
		t.Fatalf("config %+v", c)
	}
	if c = (Spec{}).Config(); c.LRSchedule != ScheduleConstant || c.LR != 0.001 {
		t.Fatalf("default spec: %+v", c)
	}
}

// TestTrainFollowsSchedule trains a few epochs under a step schedule and
// checks that Adam took each epoch's rate and the curve records it.
func TestTrainFollowsSchedule(t *testing.T) {
	d, err := rec.GenerateWorld(rec.DefaultWorld())
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Dim, cfg.Epochs, cfg.EvalEvery, cfg.LR = 8, 4, 1, 0.01
	cfg.LRSchedule, cfg.LRDecay, cfg.LRDecayEpochs = ScheduleStep, 0.5, []int{1, 3}
	res, err := Train(context.Background(), d, cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.01, 0.005, 0.005, 0.0025}
	if len(res.Curve) != len(want) {
		t.Fatalf("curve %+v", res.Curve)
	}
	for k, p := range res.Curve {
		if math.Abs(p.LR-want[k]) > 1e-15 {
			t.Errorf("epoch %d: lr %v, want %v", p.Epoch, p.LR, want[k])
		}
	}
}
