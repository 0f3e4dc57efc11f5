package secagg

import "math"

// DefaultThreshold is the threshold t for a cohort of n parties whose
// neighbourhoods (with the party itself) hold h = min(n, k+1) parties
// under degree k (0: DefaultDegree): the larger of ⌊h/2⌋+1, which
// Config.Validate requires (2t > h, so that a server showing two lists
// cannot collect both kinds of share of a party without colluders), and
// round(2h/3), which keeps a third of a neighbourhood as the colluders
// tolerated (doc.go) while a third may drop out. n = 3 gives t = 2 (one
// dropout tolerated), 8 gives 5, 24 gives 16.
func DefaultThreshold(n, degree int) int {
	h := n
	if n > CompleteGraphMax {
		if degree == 0 {
			degree = DefaultDegree(n)
		}
		h = degree + 1
	}
	return max(2, h/2+1, int(math.Round(2*float64(h)/3)))
}

// Pending is how many neighbours with advertised keys have not yet
// delivered their sealed share to the client; zero once every one has, or
// before the keys are in. A driver masks when it reaches zero, or at its
// deadline with what it holds (MaskInput needs t − 1).
func (c *Client) Pending() int {
	if c.stage != clientShared {
		return 0
	}
	n := 0
	for _, p := range c.neighbour {
		if p.share == nil {
			n++
		}
	}
	return n
}

// Config is the round's configuration.
func (c *Client) Config() Config { return c.cfg }

// List is the list the server signed, nil before it signed one.
func (s *Server) List() *SignedList {
	if s.list == nil {
		return nil
	}
	l := *s.list
	return &l
}
