package fedgsp

// Descriptors returns the client's spectral descriptors (see Descriptor),
// computing them on first use, or ok = false once they were released: they
// never change (the bases are fixed), so they go out once (summary decision
// 7). A failure to compute them (an eigendecomposition that does not
// converge) also returns ok = false: there is nothing to release.
func (l *Learner) Descriptors() (Descriptor, bool) {
	if l.released {
		return Descriptor{}, false
	}
	if l.desc == nil {
		d, err := computeDescriptors(l.prop, l.x, l.dim, l.cfg.Orders, Angle(l.homophily), l.cfg.Principal)
		if err != nil {
			return Descriptor{}, false
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
	l.x = nil
	l.prop = propagator{}
}
