package graph

// The AMLworld vocabulary (DESIGN.md, "AML world"): the 15 currencies, the 7
// payment formats and the 8 laundering typologies, as the published files
// spell them. The numeric codes are graphfed's own and stable: they are the
// values stored in AMLGraph's per-edge arrays.

// AMLCurrency is one of the 15 AMLworld currencies.
type AMLCurrency uint8

// The currencies, in the order DESIGN.md lists them.
const (
	AMLUSDollar AMLCurrency = iota
	AMLEuro
	AMLYuan
	AMLYen
	AMLRupee
	AMLRuble
	AMLUKPound
	AMLCanadianDollar
	AMLAustralianDollar
	AMLMexicanPeso
	AMLBrazilReal
	AMLSwissFranc
	AMLShekel
	AMLSaudiRiyal
	AMLBitcoin
	// AMLNumCurrencies is the number of currencies.
	AMLNumCurrencies = 15
)

var amlCurrencyNames = [AMLNumCurrencies]string{
	"US Dollar", "Euro", "Yuan", "Yen", "Rupee", "Ruble", "UK Pound",
	"Canadian Dollar", "Australian Dollar", "Mexican Peso", "Brazil Real",
	"Swiss Franc", "Shekel", "Saudi Riyal", "Bitcoin",
}

// String is the currency's name as written in the CSV ("US Dollar").
func (c AMLCurrency) String() string {
	if int(c) < len(amlCurrencyNames) {
		return amlCurrencyNames[c]
	}
	return "invalid currency"
}

// Decimals is the number of decimals an amount in this currency is written
// with: 6 for Bitcoin, 2 otherwise.
func (c AMLCurrency) Decimals() int {
	if c == AMLBitcoin {
		return 6
	}
	return 2
}

// AMLCurrencyByName maps a CSV currency name to its code.
func AMLCurrencyByName(s string) (AMLCurrency, bool) { return amlCurrencyBytes([]byte(s)) }

// amlCurrencyBytes looks a currency up without allocating (a switch on
// string(b) does not copy b).
func amlCurrencyBytes(b []byte) (AMLCurrency, bool) {
	switch string(b) {
	case "US Dollar":
		return AMLUSDollar, true
	case "Euro":
		return AMLEuro, true
	case "Yuan":
		return AMLYuan, true
	case "Yen":
		return AMLYen, true
	case "Rupee":
		return AMLRupee, true
	case "Ruble":
		return AMLRuble, true
	case "UK Pound":
		return AMLUKPound, true
	case "Canadian Dollar":
		return AMLCanadianDollar, true
	case "Australian Dollar":
		return AMLAustralianDollar, true
	case "Mexican Peso":
		return AMLMexicanPeso, true
	case "Brazil Real":
		return AMLBrazilReal, true
	case "Swiss Franc":
		return AMLSwissFranc, true
	case "Shekel":
		return AMLShekel, true
	case "Saudi Riyal":
		return AMLSaudiRiyal, true
	case "Bitcoin":
		return AMLBitcoin, true
	}
	return 0, false
}

// AMLFormat is one of the 7 AMLworld payment formats.
type AMLFormat uint8

// The payment formats.
const (
	AMLFormatACH AMLFormat = iota
	AMLFormatCheque
	AMLFormatCash
	AMLFormatCreditCard
	AMLFormatWire
	AMLFormatReinvestment
	AMLFormatBitcoin
	// AMLNumFormats is the number of payment formats.
	AMLNumFormats = 7
)

var amlFormatNames = [AMLNumFormats]string{
	"ACH", "Cheque", "Cash", "Credit Card", "Wire", "Reinvestment", "Bitcoin",
}

// String is the format's name as written in the CSV ("Credit Card").
func (f AMLFormat) String() string {
	if int(f) < len(amlFormatNames) {
		return amlFormatNames[f]
	}
	return "invalid format"
}

// AMLFormatByName maps a CSV payment-format name to its code.
func AMLFormatByName(s string) (AMLFormat, bool) { return amlFormatBytes([]byte(s)) }

func amlFormatBytes(b []byte) (AMLFormat, bool) {
	switch string(b) {
	case "ACH":
		return AMLFormatACH, true
	case "Cheque":
		return AMLFormatCheque, true
	case "Cash":
		return AMLFormatCash, true
	case "Credit Card":
		return AMLFormatCreditCard, true
	case "Wire":
		return AMLFormatWire, true
	case "Reinvestment":
		return AMLFormatReinvestment, true
	case "Bitcoin":
		return AMLFormatBitcoin, true
	}
	return 0, false
}

// AMLTypology is one of the 8 laundering patterns of the Patterns file.
type AMLTypology uint8

// The typologies, as AMLworld names them.
const (
	AMLFanOut AMLTypology = iota
	AMLFanIn
	AMLGatherScatter
	AMLScatterGather
	AMLCycle
	AMLRandomWalk
	AMLBipartite
	AMLStack
	// AMLNumTypologies is the number of typologies.
	AMLNumTypologies = 8
)

var amlTypologyNames = [AMLNumTypologies]string{
	"FAN-OUT", "FAN-IN", "GATHER-SCATTER", "SCATTER-GATHER", "CYCLE", "RANDOM", "BIPARTITE", "STACK",
}

// String is the typology's name as written in the Patterns file ("FAN-OUT").
func (t AMLTypology) String() string {
	if int(t) < len(amlTypologyNames) {
		return amlTypologyNames[t]
	}
	return "invalid typology"
}

// AMLTypologyByName maps a Patterns-file type name to its code.
func AMLTypologyByName(s string) (AMLTypology, bool) {
	for i, n := range amlTypologyNames {
		if n == s {
			return AMLTypology(i), true
		}
	}
	return 0, false
}

// AMLTransHeader is the exact first line of a *_Trans.csv file (without the
// line break). The column name Account appears twice.
const AMLTransHeader = "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,Amount Paid,Payment Currency,Payment Format,Is Laundering"

// AMLAccountsHeader is the exact first line of a *_accounts.csv file.
const AMLAccountsHeader = "Bank Name,Bank ID,Account Number,Entity ID,Entity Name"

// amlTransColumns is the number of columns of a transaction row.
const amlTransColumns = 11
