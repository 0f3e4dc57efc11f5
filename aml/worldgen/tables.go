package worldgen

import (
	"math"

	"graphfed/aml/amlworld"
)

// Constant tables of the world: exchange rates, currency and format mixes,
// hour-of-day profiles. Nothing here is mutated.

// usdPerUnit is the value of one unit of each currency in US dollars
// (September 2022 levels), indexed by amlworld.Currency.
var usdPerUnit = [amlworld.NumCurrencies]float64{
	1.0,     // US Dollar
	1.0,     // Euro
	0.145,   // Yuan
	0.0070,  // Yen
	0.0125,  // Rupee
	0.0165,  // Ruble
	1.16,    // UK Pound
	0.76,    // Canadian Dollar
	0.68,    // Australian Dollar
	0.050,   // Mexican Peso
	0.19,    // Brazil Real
	1.03,    // Swiss Franc
	0.29,    // Shekel
	0.266,   // Saudi Riyal
	20000.0, // Bitcoin
}

// currencyShare is the share of entities whose accounts are held in each
// currency.
var currencyShare = [amlworld.NumCurrencies]float64{
	0.36, 0.18, 0.06, 0.04, 0.05, 0.03, 0.06, 0.04, 0.03, 0.03, 0.03, 0.03, 0.02, 0.03, 0.01,
}

// Payment-format mixes (weights over amlworld.Format, Bitcoin excluded: a row
// is paid in format Bitcoin exactly when either side's currency is Bitcoin).
var (
	fmtSalary   = []float64{0.70, 0.20, 0, 0, 0.10, 0, 0}
	fmtBill     = []float64{0.50, 0.20, 0, 0.30, 0, 0, 0}
	fmtPurchase = []float64{0.15, 0.15, 0.15, 0.55, 0, 0, 0}
	fmtB2B      = []float64{0.40, 0.30, 0, 0, 0.25, 0.05, 0}
	fmtP2P      = []float64{0.40, 0.30, 0.20, 0, 0.10, 0, 0}
	fmtOwn      = []float64{0.55, 0.20, 0.05, 0, 0.15, 0.05, 0}
	fmtSelf     = []float64{0.06, 0.02, 0, 0.02, 0, 0.90, 0}
	// Laundering leans on ACH and wires and avoids reinvestment, but every
	// format also carries plenty of normal traffic.
	fmtLaunder = []float64{0.46, 0.14, 0.10, 0.08, 0.20, 0.02, 0}
)

// Hour-of-day profiles (weights over hours 0..23).
var (
	hoursDay = []float64{0.3, 0.2, 0.1, 0.1, 0.1, 0.3, 0.6, 1.2, 2.0, 2.6, 2.8, 2.9,
		3.0, 2.9, 2.8, 2.7, 2.7, 2.8, 2.9, 2.6, 2.0, 1.4, 0.9, 0.5}
	hoursOffice = []float64{0.05, 0.05, 0.05, 0.05, 0.05, 0.1, 0.4, 1.5, 3, 3.5, 3.5, 3.2,
		2.5, 3.2, 3.5, 3.4, 3, 2, 0.8, 0.3, 0.15, 0.1, 0.05, 0.05}
	hoursBatch = []float64{3, 3, 2.5, 2, 1.5, 1, 0.5, 0.3, 0.2, 0.1, 0.1, 0.1,
		0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 1}
	// Laundering happens at all hours, a little more at night than normal
	// traffic, so the hour alone says little.
	hoursLaunder = []float64{0.8, 0.7, 0.6, 0.6, 0.6, 0.7, 0.9, 1.2, 1.6, 1.8, 1.9, 1.9,
		1.9, 1.9, 1.9, 1.9, 1.9, 1.9, 1.8, 1.6, 1.4, 1.2, 1.0, 0.9}
)

// reportThreshold is the cash-reporting threshold (in US-dollar value) that
// structured laundering amounts stay just under.
const reportThreshold = 10_000.0

// round rounds an amount to the decimals of its currency, never below the
// smallest unit.
func round(v float64, c amlworld.Currency) float64 {
	scale := 100.0
	if c == amlworld.Bitcoin {
		scale = 1e6
	}
	r := math.Round(v*scale) / scale
	if r < 1/scale {
		r = 1 / scale
	}
	return r
}

// convert turns a US-dollar value into an amount in currency c.
func convert(usd float64, c amlworld.Currency) float64 { return round(usd/usdPerUnit[c], c) }

// exchange converts an amount paid in currency from into currency to.
func exchange(amount float64, from, to amlworld.Currency) float64 {
	if from == to {
		return amount
	}
	return round(amount*usdPerUnit[from]/usdPerUnit[to], to)
}

// bankNames are the names banks are given, in order, suffixed " #k".
var bankNames = []string{
	"Arcadia Bank", "First Bank of Carolina", "Harbor Trust", "Bank of Lyon", "Northfield Savings",
	"Meridian Bank", "Cedar Credit Union", "Pacific Commerce Bank", "Granite Bank", "Silverline Bank",
	"Union Bank of Tessin", "Orchard Bank", "Bank of the Plains", "Keystone Bank", "Riverside Bank",
	"Atlas Bank", "Summit National", "Bay State Bank", "Lakeshore Bank", "Old Mill Bank",
}

// Entity kinds.
const (
	kindIndividual uint8 = iota
	kindSoleProp
	kindPartnership
	kindCorporation
)

var kindNames = [...]string{"Individual", "Sole Proprietorship", "Partnership", "Corporation"}

// kindShare is the share of entities of each kind.
var kindShare = []float64{0.88, 0.05, 0.02, 0.05}
