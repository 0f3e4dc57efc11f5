package amlworld

// The AMLworld vocabulary (DESIGN.md, "AML world"): the 15 currencies, the 7
// payment formats and the 8 laundering typologies, as the published files
// spell them. The numeric codes are graphfed's own and stable: they are the
// values stored in Graph's per-edge arrays.

// Currency is one of the 15 AMLworld currencies.
type Currency uint8

// The currencies, in the order DESIGN.md lists them.
const (
	USDollar Currency = iota
	Euro
	Yuan
	Yen
	Rupee
	Ruble
	UKPound
	CanadianDollar
	AustralianDollar
	MexicanPeso
	BrazilReal
	SwissFranc
	Shekel
	SaudiRiyal
	Bitcoin
	// NumCurrencies is the number of currencies.
	NumCurrencies = 15
)

var amlCurrencyNames = [NumCurrencies]string{
	"US Dollar", "Euro", "Yuan", "Yen", "Rupee", "Ruble", "UK Pound",
	"Canadian Dollar", "Australian Dollar", "Mexican Peso", "Brazil Real",
	"Swiss Franc", "Shekel", "Saudi Riyal", "Bitcoin",
}

// String is the currency's name as written in the CSV ("US Dollar").
func (c Currency) String() string {
	if int(c) < len(amlCurrencyNames) {
		return amlCurrencyNames[c]
	}
	return "invalid currency"
}

// Decimals is the number of decimals an amount in this currency is written
// with: 6 for Bitcoin, 2 otherwise.
func (c Currency) Decimals() int {
	if c == Bitcoin {
		return 6
	}
	return 2
}

// CurrencyByName maps a CSV currency name to its code.
func CurrencyByName(s string) (Currency, bool) { return amlCurrencyBytes([]byte(s)) }

// amlCurrencyBytes looks a currency up without allocating (a switch on
// string(b) does not copy b).
func amlCurrencyBytes(b []byte) (Currency, bool) {
	switch string(b) {
	case "US Dollar":
		return USDollar, true
	case "Euro":
		return Euro, true
	case "Yuan":
		return Yuan, true
	case "Yen":
		return Yen, true
	case "Rupee":
		return Rupee, true
	case "Ruble":
		return Ruble, true
	case "UK Pound":
		return UKPound, true
	case "Canadian Dollar":
		return CanadianDollar, true
	case "Australian Dollar":
		return AustralianDollar, true
	case "Mexican Peso":
		return MexicanPeso, true
	case "Brazil Real":
		return BrazilReal, true
	case "Swiss Franc":
		return SwissFranc, true
	case "Shekel":
		return Shekel, true
	case "Saudi Riyal":
		return SaudiRiyal, true
	case "Bitcoin":
		return Bitcoin, true
	}
	return 0, false
}

// Format is one of the 7 AMLworld payment formats.
type Format uint8

// The payment formats.
const (
	FormatACH Format = iota
	FormatCheque
	FormatCash
	FormatCreditCard
	FormatWire
	FormatReinvestment
	FormatBitcoin
	// NumFormats is the number of payment formats.
	NumFormats = 7
)

var amlFormatNames = [NumFormats]string{
	"ACH", "Cheque", "Cash", "Credit Card", "Wire", "Reinvestment", "Bitcoin",
}

// String is the format's name as written in the CSV ("Credit Card").
func (f Format) String() string {
	if int(f) < len(amlFormatNames) {
		return amlFormatNames[f]
	}
	return "invalid format"
}

// FormatByName maps a CSV payment-format name to its code.
func FormatByName(s string) (Format, bool) { return amlFormatBytes([]byte(s)) }

func amlFormatBytes(b []byte) (Format, bool) {
	switch string(b) {
	case "ACH":
		return FormatACH, true
	case "Cheque":
		return FormatCheque, true
	case "Cash":
		return FormatCash, true
	case "Credit Card":
		return FormatCreditCard, true
	case "Wire":
		return FormatWire, true
	case "Reinvestment":
		return FormatReinvestment, true
	case "Bitcoin":
		return FormatBitcoin, true
	}
	return 0, false
}

// Typology is one of the 8 laundering patterns of the Patterns file.
type Typology uint8

// The typologies, as AMLworld names them.
const (
	FanOut Typology = iota
	FanIn
	GatherScatter
	ScatterGather
	Cycle
	RandomWalk
	Bipartite
	Stack
	// NumTypologies is the number of typologies.
	NumTypologies = 8
)

var amlTypologyNames = [NumTypologies]string{
	"FAN-OUT", "FAN-IN", "GATHER-SCATTER", "SCATTER-GATHER", "CYCLE", "RANDOM", "BIPARTITE", "STACK",
}

// String is the typology's name as written in the Patterns file ("FAN-OUT").
func (t Typology) String() string {
	if int(t) < len(amlTypologyNames) {
		return amlTypologyNames[t]
	}
	return "invalid typology"
}

// TypologyByName maps a Patterns-file type name to its code.
func TypologyByName(s string) (Typology, bool) {
	for i, n := range amlTypologyNames {
		if n == s {
			return Typology(i), true
		}
	}
	return 0, false
}

// TransHeader is the exact first line of a *_Trans.csv file (without the
// line break). The column name Account appears twice.
const TransHeader = "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,Amount Paid,Payment Currency,Payment Format,Is Laundering"

// AccountsHeader is the exact first line of a *_accounts.csv file.
const AccountsHeader = "Bank Name,Bank ID,Account Number,Entity ID,Entity Name"

// amlTransColumns is the number of columns of a transaction row.
const amlTransColumns = 11
