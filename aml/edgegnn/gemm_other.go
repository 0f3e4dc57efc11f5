//go:build !amd64 || purego

package edgegnn

func edgeTilesApply(k, n int) bool { return false }

func edgeTiles(d, a, b, bias []float32, k, n, lo, hi int) {
	panic("edgegnn: no tiles on this platform")
}
