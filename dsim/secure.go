package dsim

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/nats-io/nkeys"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
	"graphfed/secagg"
)

// Secure aggregation in the simulator (issue 31): which seeds run it, the
// parties' identities and randomness, all drawn from the seed. HPKE's
// ephemeral keys are the one thing a secure run draws from the system
// (crypto/hpke takes no reader): they change only the bytes of sealed
// shares, which the run's hash leaves out (sim.route) and nothing else
// reads, so that a secure seed is as deterministic as any other.

// secureSeed picks the secure seeds: every eighth block of three
// consecutive seeds ((seed/3)%8 == 2: seeds 6-8, 30-32, ...), one each of
// FedAvg, CE-FedGNN and LPSFed. Every other seed keeps the job, trace and
// golden file it had before secure aggregation joined. One in eight, not
// more: a secure seed costs about five plain ones (X25519, ed25519 and
// HPKE for every party and round), and the sweep's time is bounded.
func secureSeed(seed uint64) bool { return (seed/3)%8 == 2 }

// secIdentities are the job's NKeys, as graphfed keys lays them out
// (deploy.NewSecAggIdentities), but drawn from the seed: advertisements
// and lists are signed with ed25519, which is deterministic, so every
// byte they put on the wire is a function of the seed.
type secIdentities struct {
	ring    *bus.Keyring
	signers map[string]*bus.Signer
}

func newSecIdentities(seed uint64, banks []string) (*secIdentities, error) {
	r := rand.NewChaCha8(seedKey(seed, "identities"))
	ids := &secIdentities{signers: map[string]*bus.Signer{}}
	var parties []bus.Party
	for _, id := range append([]string{aggID}, banks...) {
		kp, err := nkeys.CreatePairWithRand(nkeys.PrefixByteUser, r)
		if err != nil {
			return nil, fmt.Errorf("dsim: identity of %s: %w", id, err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("dsim: identity of %s: %w", id, err)
		}
		role := bus.RoleBank
		if id == aggID {
			role = bus.RoleAggregator
		}
		parties = append(parties, bus.Party{ID: id, Role: role, PublicKey: pub})
		if ids.signers[id], err = bus.NewSigner(id, kp); err != nil {
			return nil, fmt.Errorf("dsim: identity of %s: %w", id, err)
		}
	}
	ring, err := bus.NewKeyring(jobID, parties)
	if err != nil {
		return nil, fmt.Errorf("dsim: keyring: %w", err)
	}
	ids.ring = ring
	return ids, nil
}

func (ids *secIdentities) signer(id string) secagg.Signer { return bus.SecAggSigner(ids.signers[id]) }
func (ids *secIdentities) verifier() secagg.Verifier      { return bus.SecAggVerifier(ids.ring) }

// seedKey is a ChaCha8 key for one use of the seed.
func seedKey(seed uint64, use string) [32]byte {
	return sha256.Sum256(fmt.Appendf(nil, "graphfed dsim secagg v1\x00%d\x00%s", seed, use))
}

// aggSecAgg is the aggregator's secure aggregation for cfg, and the
// contract it needs: the clip and noise the agents release with, which
// size the fixed point (aggregator.Contract.Clip > 0).
func aggSecAgg(cfg Config, ids *secIdentities, rc *aggregator.Config) {
	rc.SecAgg = aggregator.SecAgg{On: true, Job: jobID, Signer: ids.signer(aggID), Verifier: ids.verifier()}
	rc.Contract.Clip, rc.Contract.Sigma, rc.Contract.GradSigma = cfg.ModelClip, cfg.ModelSigma, cfg.GradSigma
}

// agentSecAgg is agent id's part: its NKey, the keyring, and a ChaCha8
// stream of its own for keys, seeds and rounding; it waits for its
// neighbours' shares half a round timeout, well within the aggregator's
// input wait (a round timeout).
func agentSecAgg(cfg Config, ids *secIdentities, id string) agent.SecAggConfig {
	return agent.SecAggConfig{Signer: ids.signer(id), Verifier: ids.verifier(),
		Rand: rand.NewChaCha8(seedKey(cfg.Seed, "agent "+id)), ShareWait: cfg.RoundTimeout / 2}
}

// shadowRelease is what agent a's gate released on the model (and
// gradient) channel for round: a gate of its own, under the agent's
// privacy configuration and noise seed, over an empty ledger, given
// what the agent's learner holds after the step that released it. Under
// a fixed seed each release draws its noise from a stream of (seed,
// client, channel, round, index), so this is the released vector, which
// under secure aggregation never goes on the wire: the ground truth the
// secure sum is checked against (check_secure.go).
func (s *sim) shadowRelease(a *simAgent, round uint64) (params, grad []float32, err error) {
	pc := privacy.Config{Job: jobID, Client: a.id, Delta: s.cfg.Delta, Seed: &a.noise}
	g, err := privacy.NewGate(s.ctx, pc, privacy.NewMemLedger(), s.clock)
	if err != nil {
		return nil, nil, fmt.Errorf("dsim: shadow gate of %s: %w", a.id, err)
	}
	release := func(ch privacy.Channel, v []float32, sigma float64) ([]float32, error) {
		rel, err := g.Release(context.WithoutCancel(s.ctx), privacy.Request{Channel: ch, Round: round, Flat: v, Dim: len(v),
			Sigma: sigma, Clip: s.cfg.ModelClip})
		if err != nil {
			return nil, fmt.Errorf("dsim: shadow release of %s's round %d %s: %w", a.id, round, ch, err)
		}
		return bus.FromReleased(rel).Floats(), nil
	}
	if params, err = release(privacy.ChannelModel, a.learner.Params(), s.cfg.ModelSigma); err != nil {
		return nil, nil, err
	}
	if gs, ok := a.learner.(interface{ Grad() []float32 }); ok && s.cfg.Strategy() == StrategyCEFedGNN {
		if g := gs.Grad(); len(g) > 0 {
			if grad, err = release(privacy.ChannelGrad, g, s.cfg.GradSigma); err != nil {
				return nil, nil, err
			}
		}
	}
	return params, grad, nil
}

// shadowMatches compares the updates an agent released in the clear with
// shadowRelease (Config.shadowCheck).
func (s *sim) shadowMatches(a *simAgent, acts []agent.MachineAction) *Violation {
	for _, x := range acts {
		pu, ok := x.(agent.PublishUpdate)
		if !ok || pu.Update.Params.Len() == 0 || pu.Update.Masked {
			continue
		}
		params, grad, err := s.shadowRelease(a, pu.Update.Round)
		if err != nil {
			s.err = err
			return nil
		}
		if !slices.Equal(params, pu.Update.Params.Floats()) || !slices.Equal(grad, pu.Update.Grad.Floats()) {
			return violation(InvSecureSum, "%s's round %d release %v %v, shadowRelease %v %v", a.id, pu.Update.Round,
				pu.Update.Params.Floats(), pu.Update.Grad.Floats(), params, grad)
		}
	}
	return nil
}
