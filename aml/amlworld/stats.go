package amlworld

// Stats summarises a Graph for `graphfed data stats --aml`.
type Stats struct {
	Rows           int64
	Accounts       int
	Banks          int
	LaunderingRows int64
	LaunderingRate float64 // LaunderingRows / Rows
	SelfTransfers  int64   // rows with Src == Dst
	CrossBankRows  int64   // rows whose endpoints sit at different banks
	CrossBankShare float64 // CrossBankRows / Rows
	// LaunderingCrossBankShare is the cross-bank share among laundering rows.
	LaunderingCrossBankShare float64
	// MixedCurrencyRows have different paying and receiving currencies.
	MixedCurrencyRows int64
	// BankEdges[b] counts the edges bank b knows: those with at least one
	// endpoint at b. A cross-bank edge counts once at each of its two banks,
	// an intra-bank edge once at its bank.
	BankEdges []int64
	// BankEdgeRatio is the largest BankEdges over the smallest (0 without
	// banks; +Inf cannot occur since every listed bank holds an account
	// that appears on some edge).
	BankEdgeRatio float64
	FirstTime     int64 // Unix seconds of the earliest row
	LastTime      int64 // Unix seconds of the latest row
	Formats       [NumFormats]int64
	Currencies    [NumCurrencies]int64 // by payment currency
}

// Stats computes g's summary in one pass over the edges.
func (g *Graph) Stats() Stats {
	s := Stats{Rows: int64(g.NumEdges()), Accounts: g.NumAccounts(), Banks: g.NumBanks()}
	s.BankEdges = make([]int64, g.NumBanks())
	var launderCross int64
	for e := range g.Src {
		a, b := g.AccountBank[g.Src[e]], g.AccountBank[g.Dst[e]]
		s.BankEdges[a]++
		cross := a != b
		if cross {
			s.BankEdges[b]++
			s.CrossBankRows++
		}
		if g.Src[e] == g.Dst[e] {
			s.SelfTransfers++
		}
		if g.Label[e] == 1 {
			s.LaunderingRows++
			if cross {
				launderCross++
			}
		}
		if g.PayCurrency[e] != g.RecvCurrency[e] {
			s.MixedCurrencyRows++
		}
		s.Formats[g.Format[e]]++
		s.Currencies[g.PayCurrency[e]]++
		t := g.Time[e]
		if e == 0 || t < s.FirstTime {
			s.FirstTime = t
		}
		if e == 0 || t > s.LastTime {
			s.LastTime = t
		}
	}
	if s.Rows > 0 {
		s.LaunderingRate = float64(s.LaunderingRows) / float64(s.Rows)
		s.CrossBankShare = float64(s.CrossBankRows) / float64(s.Rows)
	}
	if s.LaunderingRows > 0 {
		s.LaunderingCrossBankShare = float64(launderCross) / float64(s.LaunderingRows)
	}
	if len(s.BankEdges) > 0 {
		lo, hi := s.BankEdges[0], s.BankEdges[0]
		for _, c := range s.BankEdges {
			lo, hi = min(lo, c), max(hi, c)
		}
		if lo > 0 {
			s.BankEdgeRatio = float64(hi) / float64(lo)
		}
	}
	return s
}
