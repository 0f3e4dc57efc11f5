package lpsfed

import (
	"fmt"

	"graphfed/learner"
	"graphfed/spectral"
)

// Scalars lists what round releases besides the MLPs: nothing under
// FedAvg; ρ_c = KL(K^R ‖ K^c) when the reference kernel changed since the
// last ρ_c released (lpsfed-bpr and lpsfed); M^c every round (lpsfed).
func (l *Learner) Scalars(round uint64) []learner.Scalar {
	if l.algo == AlgoFedAvg || l.algo == "" {
		return nil
	}
	var out []learner.Scalar
	if l.ref != nil && l.refVersion != l.rhoSent {
		rho, err := divergence(l.ref, l.kernel)
		if err != nil {
			// A reference of the wrong length or a kernel with no mass:
			// without ρ_c the server mixes this client as ρ̄ = 1.
			l.cfg.Log.Warn().Err(err).Uint64("round", round).Msg("no structural similarity released")
		} else {
			out = append(out, learner.Scalar{Kind: learner.ScalarRho, Value: rho, Clip: l.cfg.RhoClip, Version: l.refVersion})
		}
	}
	if l.algo == AlgoLPSFed {
		if m, ok := l.model.MeanMargin(); ok {
			out = append(out, learner.Scalar{Kind: learner.ScalarMargin, Value: m, Clip: l.cfg.MarginClip})
		}
	}
	return out
}

// ScalarReleased records that s passed the gate and went out.
func (l *Learner) ScalarReleased(s learner.Scalar) {
	if s.Kind == learner.ScalarRho {
		l.rhoSent = s.Version
	}
}

// Kernel is the client's low-pass kernel K^c (Eq. 6 and 16) from the Φ
// lowest eigenvalues of its normalized Laplacian, zero eigenvalues
// floored as spectral.LowPassKernel documents, so that Eq. 11 is finite.
func Kernel(lambda []float64) ([]float64, error) {
	k, err := spectral.LowPassKernel(lambda, spectral.KernelFloor)
	if err != nil {
		return nil, fmt.Errorf("lpsfed: kernel: %w", err)
	}
	return k, nil
}

// divergence is the structural divergence ρ_c = KL(K^R ‖ K^c) (Eq. 11)
// between the server's reference kernel and the client's own.
func divergence(kr, kc []float64) (float64, error) {
	d, err := spectral.KL(kr, kc)
	if err != nil {
		return 0, fmt.Errorf("lpsfed: divergence: %w", err)
	}
	return d, nil
}
