package audit

import (
	"fmt"
	"strconv"
	"strings"

	"graphfed/privacy"
)

// ParseRho reads node distances at percentiles, "q=rho,q=rho" (e.g.
// 50=0.0533,90=0.1466); empty or blank means none (use the ledger's).
// The audit, not the parser, judges the values.
func ParseRho(s string) ([]privacy.RhoAt, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []privacy.RhoAt
	for _, part := range strings.Split(s, ",") {
		qs, rs, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("%q is not percentile=distance", part)
		}
		q, err := strconv.ParseFloat(qs, 64)
		if err != nil {
			return nil, err
		}
		r, err := strconv.ParseFloat(rs, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, privacy.RhoAt{Q: q, Rho: r})
	}
	return out, nil
}
