package privacy

// NodeEpsilons is the per-node ε of the gate's client at each distance ρ_q
// of its latest recorded calibration: of the node with the most embedding
// privacy loss and of the median node, as Audit computes them over this
// client's entries alone (its nodes at its own ρ_q). Live metrics read it
// on every scrape instead of re-auditing the ledger. Nil before the first
// calibration; zero ε before the first embedding release.
func (g *Gate) NodeEpsilons() []PercentileEpsilon {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calib == nil {
		return nil
	}
	mu2 := g.acct.NodeMu2() // ascending
	_, worst, _ := g.acct.WorstNode()
	out := make([]PercentileEpsilon, len(g.calib.Q))
	for i, q := range g.calib.Q {
		rho := g.calib.Rho[i]
		p := PercentileEpsilon{Q: q, Rho: rho}
		if len(mu2) > 0 {
			// ρ² scales every node alike: the worst and the median node
			// are the same at every distance.
			p.WorstEpsilon = g.acct.Epsilon(Stat{Mu2: mu2[len(mu2)-1]}, rho)
			p.MedianEpsilon = g.acct.Epsilon(Stat{Mu2: Percentile(mu2, 50)}, rho)
			p.WorstReleases = worst.Releases
		}
		out[i] = p
	}
	return out
}
