//go:build !amd64 || purego

package edgegnn

func reluRows(d, x []float32) int { return 0 }

func residualRows(u, out, e, bias, hs, hd []float32, src, dst []int32, n int) bool { return false }
