package lightgcn

import (
	"fmt"
	"math"
)

// Learning-rate schedules (Config.LRSchedule). The paper and the official
// code train at a constant rate; a decay is this package's addition for
// shorter, larger-batch runs, which level off at a constant rate from the
// noise of their steps.
const (
	// ScheduleConstant trains at LR throughout (the paper's).
	ScheduleConstant = "constant"
	// ScheduleStep multiplies the rate by LRDecay after each epoch of
	// LRDecayEpochs, as torch's MultiStepLR with those milestones: epochs
	// 1..m₁ at LR, m₁+1..m₂ at LR·LRDecay, and so on.
	ScheduleStep = "step"
	// ScheduleCosine anneals the rate from LR at epoch 1 towards
	// LR·LRDecay at epoch Epochs+1 along a half cosine (torch's
	// CosineAnnealingLR with T_max = Epochs and eta_min = LR·LRDecay,
	// stepped once an epoch).
	ScheduleCosine = "cosine"
)

// LRAt is the learning rate of epoch e (1-based) under c's schedule. Adam
// takes the rate at each step (its moments do not depend on it), so
// changing it between epochs is torch's lr_scheduler.step().
func (c *Config) LRAt(e int) float64 {
	switch c.LRSchedule {
	case ScheduleStep:
		lr := c.LR
		for _, m := range c.LRDecayEpochs {
			if e > m {
				lr *= c.LRDecay
			}
		}
		return lr
	case ScheduleCosine:
		if c.Epochs <= 0 {
			return c.LR
		}
		lo := c.LR * c.LRDecay
		t := float64(min(max(e-1, 0), c.Epochs)) / float64(c.Epochs)
		return lo + (c.LR-lo)*(1+math.Cos(math.Pi*t))/2
	}
	return c.LR
}

// validateSchedule reports a schedule LRAt cannot follow.
func (c *Config) validateSchedule() error {
	switch c.LRSchedule {
	case "", ScheduleConstant:
		if len(c.LRDecayEpochs) > 0 {
			return fmt.Errorf("lightgcn: config: lr decay epochs %v with a constant learning rate (want schedule %q)", c.LRDecayEpochs, ScheduleStep)
		}
	case ScheduleStep:
		if len(c.LRDecayEpochs) == 0 {
			return fmt.Errorf("lightgcn: config: schedule %q without decay epochs", ScheduleStep)
		}
		for k, m := range c.LRDecayEpochs {
			if m < 1 || (k > 0 && m <= c.LRDecayEpochs[k-1]) {
				return fmt.Errorf("lightgcn: config: lr decay epochs %v, want increasing epochs ≥ 1", c.LRDecayEpochs)
			}
		}
		if !(c.LRDecay > 0 && c.LRDecay < 1) {
			return fmt.Errorf("lightgcn: config: lr decay %v for schedule %q, want a factor in (0, 1)", c.LRDecay, ScheduleStep)
		}
	case ScheduleCosine:
		if len(c.LRDecayEpochs) > 0 {
			return fmt.Errorf("lightgcn: config: lr decay epochs %v with schedule %q (it anneals over all the epochs)", c.LRDecayEpochs, ScheduleCosine)
		}
		if !(c.LRDecay >= 0 && c.LRDecay < 1) {
			return fmt.Errorf("lightgcn: config: lr decay %v for schedule %q, want the final fraction of the rate in [0, 1)", c.LRDecay, ScheduleCosine)
		}
	default:
		return fmt.Errorf("lightgcn: config: lr schedule %q, want %s, %s or %s", c.LRSchedule, ScheduleConstant, ScheduleStep, ScheduleCosine)
	}
	return nil
}
