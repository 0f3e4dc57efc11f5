package fedgsp

import "graphfed/learner"

var _ learner.DescriptorReleaser = (*Learner)(nil)

// Descriptors returns the client's spectral descriptors (see DescriptorRows),
// computing them on first use, or ok = false once they were released: they
// never change (the bases are fixed), so they go out once (summary decision
// 7). A failure to compute them (an eigendecomposition that does not
// converge) also returns ok = false: there is nothing to release.
func (l *Learner) Descriptors() (learner.Descriptor, bool) {
	if l.released {
		return learner.Descriptor{}, false
	}
	if l.desc == nil {
		compute := func() (learner.Descriptor, error) {
			return computeDescriptors(l.prop, l.x, l.dim, l.cfg.Orders, Angle(l.homophily), l.cfg.Principal)
		}
		var d learner.Descriptor
		var err error
		if l.cache != nil {
			d, err = l.cache.get(l.cacheKey, compute)
		} else {
			d, err = compute()
		}
		if err != nil {
			return learner.Descriptor{}, false
		}
		l.desc = &d
	}
	out := *l.desc
	out.Rows = append([]float32(nil), l.desc.Rows...)
	return out, true
}

// DescriptorsReleased records that the gate released the descriptors and
// they went out: they are never offered again, and the features and
// propagation matrix kept to compute them are dropped (training needs only
// the mixed inputs).
func (l *Learner) DescriptorsReleased() {
	l.released = true
	l.desc = nil
	l.cache, l.cacheKey = nil, descriptorKey{}
	l.x = nil
	l.prop = propagator{}
}

// ShareDescriptors makes the learner take its descriptors from c, computed
// once for every learner built on the same data with the same feature
// format, orders and principal directions (DescriptorCache); nil c
// computes them alone, as by default. Call it before the first
// Descriptors.
func (l *Learner) ShareDescriptors(c *DescriptorCache) { l.cache = c }
