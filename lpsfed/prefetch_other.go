//go:build !amd64 || purego

package lpsfed

// prefetchLines is a no-op without the amd64 prefetch instruction.
func prefetchLines(p *float32, lines int) {}
