package lpsfed

import (
	"context"
	"errors"
	"fmt"

	"graphfed/bus"
	"graphfed/privacy"
	"graphfed/spectral"
)

// release passes everything a round publishes through the privacy gate
// into u: the MLPs on the model channel; ρ_c (when the reference kernel
// changed since the last release) and M^c on the margin channel. Each
// value is clipped, charged to the ledger durably, and only then noised
// and attached. A budget refusal is not an error: the client keeps
// training and stops publishing that channel.
func (c *Client) release(ctx context.Context, round uint64, u *bus.Update) error {
	if c.withheld {
		u.Withheld = true
	} else {
		p := c.model.Shared()
		rel, err := c.gate.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: round, Flat: p, Dim: len(p),
			Sigma: c.cfg.ModelSigma, Clip: c.cfg.ModelClip})
		switch {
		case errors.Is(err, privacy.ErrBudgetExceeded):
			c.withheld, u.Withheld = true, true
			c.cfg.Log.Warn().Err(err).Uint64("round", round).Msg("privacy budget spent: model updates withheld from now on")
		case err != nil:
			return fmt.Errorf("lpsfed: client %s: release model: %w", c.cfg.Client, err)
		default:
			u.Params = bus.FromReleased(rel)
		}
	}
	if c.algo == AlgoFedAvg || u.Withheld {
		return nil
	}
	if c.ref != nil && c.refVersion != c.rhoSent {
		rho, err := divergence(c.ref, c.kernel)
		if err != nil {
			// A reference of the wrong length or a kernel with no mass:
			// without ρ_c the server mixes this client as ρ̄ = 1.
			c.cfg.Log.Warn().Err(err).Uint64("round", round).Msg("no structural similarity released")
		} else {
			v, ok, err := c.releaseScalar(ctx, round, rho, c.cfg.RhoClip)
			if err != nil {
				return err
			}
			if ok {
				u.Rho, u.RhoVersion, c.rhoSent = v, c.refVersion, c.refVersion
			}
		}
	}
	if c.algo == AlgoLPSFed {
		if m, ok := c.model.MeanMargin(); ok {
			v, ok, err := c.releaseScalar(ctx, round, m, c.cfg.MarginClip)
			if err != nil {
				return err
			}
			if ok {
				u.Margin = v
			}
		}
	}
	return nil
}

// releaseScalar releases one value on the margin channel; false when the
// budget refused it (then the channel stays closed).
func (c *Client) releaseScalar(ctx context.Context, round uint64, x, clip float64) (bus.Sensitive, bool, error) {
	if c.scalarsOff {
		return bus.Sensitive{}, false, nil
	}
	rel, err := c.gate.Release(ctx, privacy.Request{Channel: privacy.ChannelMargin, Round: round, Flat: []float32{float32(x)}, Dim: 1,
		Sigma: c.cfg.MarginSigma, Clip: clip})
	switch {
	case errors.Is(err, privacy.ErrBudgetExceeded):
		c.scalarsOff = true
		c.cfg.Log.Warn().Err(err).Uint64("round", round).Msg("privacy budget spent: margin and similarity withheld from now on")
		return bus.Sensitive{}, false, nil
	case err != nil:
		return bus.Sensitive{}, false, fmt.Errorf("lpsfed: client %s: release scalar: %w", c.cfg.Client, err)
	}
	return bus.FromReleased(rel), true, nil
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
