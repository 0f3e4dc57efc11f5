package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

// asyncFlags are sim's knobs for asynchrony: per-client speed and FedBuff.
type asyncFlags struct {
	slow   map[string]string
	buffer int
}

func (a *asyncFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringToStringVar(&a.slow, "slow", nil, "clients slower than their hardware, as INDEX=FACTOR (e.g. 3=5: client 3 runs 5x slower)")
	f.IntVar(&a.buffer, "buffer", 0, "aggregate every B updates, current or late (FedBuff); 0: close rounds at quorum or deadline")
}

// slowFactors parses --slow for a job of n clients.
func (a *asyncFlags) slowFactors(n int) (map[int]float64, error) {
	out := map[int]float64{}
	for k, v := range a.slow {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("--slow %s=%s: client index must be in 0..%d", k, v, n-1)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 1) {
			return nil, fmt.Errorf("--slow %s=%s: factor must be a number ≥ 1", k, v)
		}
		out[i] = f
	}
	return out, nil
}
