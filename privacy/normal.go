package privacy

import "math"

// normCDF is Φ(x), the standard normal distribution function, accurate to a
// few ulps in relative terms wherever it does not underflow (x > −37).
func normCDF(x float64) float64 {
	return 0.5 * math.Erfc(-x/math.Sqrt2)
}

// logTailSwitch is where logNormCDF switches from log(erfc) to the
// asymptotic series: erfc(30/√2) ≈ 5e-198 is still a normal float64, and
// the series truncated after the x⁻¹⁰ term has relative error below
// 10395/x¹² ≈ 2e-14 there.
const logTailSwitch = -30

// logNormCDF is log Φ(x), accurate in the far left tail where Φ itself
// underflows (Φ(−40) ≈ 4e-350):
//
//   - x > 0: log1p(−Φ(−x)), no cancellation as Φ(x) → 1;
//   - −30 ≤ x ≤ 0: log(erfc(−x/√2)/2), erfc keeps full relative accuracy;
//   - x < −30: the asymptotic (Mills ratio) series
//     log Φ(x) = −x²/2 − log(−x) − ½log(2π) + log(1 − x⁻² + 3x⁻⁴ − 15x⁻⁶ + 105x⁻⁸ − 945x⁻¹⁰).
func logNormCDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x > 0:
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x >= logTailSwitch:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	case math.IsInf(x, -1):
		return math.Inf(-1)
	}
	t := 1 / (x * x)
	series := 1 + t*(-1+t*(3+t*(-15+t*(105+t*(-945)))))
	return -0.5*x*x - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log(series)
}
