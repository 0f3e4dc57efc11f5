// Package profile writes Go profiles of a whole command run (CPU and
// heap), for the performance work the benchmarks cannot show alone: the
// command binds the file names into a Profiler, starts it before the
// command runs and stops it on the way out, however the command ended.
package profile

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profiler writes a CPU profile of the run to CPU and a heap profile at
// its end to Heap; an empty name skips that profile. The errors are named
// after the flags graphfed binds them to (--cpuprofile, --memprofile).
type Profiler struct {
	CPU, Heap string

	cpuFile     *os.File
	heapWritten bool
}

// Start begins the CPU profile.
func (p *Profiler) Start() error {
	if p.CPU == "" || p.cpuFile != nil {
		return nil
	}
	f, err := os.Create(p.CPU)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return errors.Join(fmt.Errorf("--cpuprofile: %w", err), f.Close())
	}
	p.cpuFile = f
	return nil
}

// Stop ends the CPU profile and writes the heap profile (in use and
// allocated, after a GC). A second Stop does nothing, so a command can
// stop on success and again on every way out.
func (p *Profiler) Stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		err := p.cpuFile.Close()
		p.cpuFile = nil
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	if p.Heap == "" || p.heapWritten {
		return nil
	}
	p.heapWritten = true
	f, err := os.Create(p.Heap)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return errors.Join(fmt.Errorf("--memprofile: %w", err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	return nil
}
