package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profileFlags write Go profiles of any command, for the performance work
// the benchmarks cannot show alone (a whole job's CPU and heap).
type profileFlags struct {
	cpu, mem string
	cpuFile  *os.File
}

func (p *profileFlags) register(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to this file (go tool pprof)")
	root.PersistentFlags().StringVar(&p.mem, "memprofile", "", "write a heap profile to this file when the command ends (go tool pprof; in-use and allocated)")
}

func (p *profileFlags) start() error {
	if p.cpu == "" {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	p.cpuFile = f
	return nil
}

func (p *profileFlags) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		p.cpuFile = nil
	}
	if p.mem == "" {
		return nil
	}
	f, err := os.Create(p.mem)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	return nil
}
