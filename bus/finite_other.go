//go:build !amd64

package bus

// firstNonFinite returns the index of the first NaN or ±Inf, or -1.
func firstNonFinite(xs []float32) int { return firstNonFiniteGo(xs) }
