//go:build !amd64

package aggregator

func accumulate(acc []float64, x []float32, w float64) { accumulateGo(acc, x[:len(acc)], w) }

func finish(out []float32, acc []float64, total float64) { finishGo(out[:len(acc)], acc, total) }
