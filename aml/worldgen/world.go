package worldgen

import (
	"math"
	"math/rand/v2"
	"strconv"

	"graphfed/aml/amlworld"
)

// world is the static part of a generated world: banks, entities, accounts
// and the weighted pools transactions draw their accounts from. Accounts are
// numbered 0..N-1 and an entity's accounts are contiguous.
type world struct {
	cfg Config

	bankIDs   []string
	bankNames []string
	bankTab   *alias // bank weights (sizes differ)

	acctBank []uint16
	acctCur  []amlworld.Currency
	acctEnt  []int32
	acctNum  []string // 9 upper-case hex characters, unique

	entStart []int32 // entity e owns accounts entStart[e] .. entStart[e+1]-1
	entKind  []uint8
	entSeq   []int32 // running number within its kind, for the entity name

	byBank    [][]int32
	people    pool // individuals' accounts, by activity
	firms     pool // companies' accounts, by activity
	anyone    pool // all accounts, by activity
	merchants [amlworld.NumCurrencies]pool
	neighbors [amlworld.NumCurrencies]pool // individuals, uniform
	multi     []int32                      // entities holding two or more accounts

	// Households (per entity; meaningful for individuals): employer payroll
	// account or -1, monthly salary in US dollars, up to two monthly bills.
	employer []int32
	salary   []float32
	bills    [][2]bill
	// Payroll cadence per entity (meaningful for companies).
	cadence []uint8
	phase   []uint8

	launderers       []int32
	launderersByBank [][]int32
}

// bill is a recurring monthly payment: payee account, day of month (0 = no
// bill) and amount in US dollars.
type bill struct {
	payee int32
	dom   uint8
	usd   float32
}

// Payroll cadences.
const (
	payWeekly uint8 = iota
	payBiweekly
	paySemimonthly
	payMonthly
)

func newWorld(cfg Config) *world {
	r := stream(cfg.Seed, 1)
	w := &world{cfg: cfg}
	w.makeBanks(r)
	w.makeEntities(r)
	w.makePools(r)
	w.makeHouseholds(r)
	w.makeLaunderers(r)
	return w
}

// makeBanks names the banks and sizes them by a Zipf law over a random
// order. Ids mix AMLworld's styles ("010", "0112", "70", "00952",
// "0111632"); with three or more banks the third one's id is the first's
// without its leading zero ("10" next to "010"), which only string keys keep
// apart.
func (w *world) makeBanks(r *rand.Rand) {
	n := w.cfg.Banks
	seen := map[string]bool{}
	w.bankIDs = make([]string, 0, n)
	add := func(id string) bool {
		if seen[id] || id == "" {
			return false
		}
		seen[id] = true
		w.bankIDs = append(w.bankIDs, id)
		return true
	}
	first := "0" + strconv.Itoa(10+r.IntN(90))
	add(first)
	for k := 1; len(w.bankIDs) < n; k++ {
		if len(w.bankIDs) == 2 && add(first[1:]) {
			continue
		}
		var id string
		switch k % 5 {
		case 0:
			id = strconv.Itoa(10 + r.IntN(90)) // "70"
		case 1:
			id = pad(100+r.IntN(900), 4) // "0112"
		case 2:
			id = pad(100+r.IntN(9900), 5) // "00952"
		case 3:
			id = pad(100000+r.IntN(900000), 7) // "0111632"
		default:
			id = strconv.Itoa(100 + r.IntN(900)) // "211"
		}
		add(id)
	}
	w.bankNames = make([]string, n)
	for b := range w.bankNames {
		w.bankNames[b] = bankNames[b%len(bankNames)] + " #" + strconv.Itoa(b+1)
	}
	weights := make([]float64, n)
	for b, k := range r.Perm(n) {
		weights[b] = 1 / math.Pow(float64(k+1), w.cfg.BankSkew)
	}
	w.bankTab = newAlias(weights)
}

func pad(v, width int) string {
	s := strconv.Itoa(v)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// makeEntities creates entities until the accounts reach cfg.Accounts.
func (w *world) makeEntities(r *rand.Rand) {
	n := w.cfg.Accounts
	w.acctBank = make([]uint16, 0, n)
	w.acctCur = make([]amlworld.Currency, 0, n)
	w.acctEnt = make([]int32, 0, n)
	var kindSeq [4]int32
	for len(w.acctBank) < n {
		e := int32(len(w.entStart))
		w.entStart = append(w.entStart, int32(len(w.acctBank)))
		kind := uint8(pick(r, kindShare))
		kindSeq[kind]++
		w.entKind = append(w.entKind, kind)
		w.entSeq = append(w.entSeq, kindSeq[kind])
		var count int
		if kind == kindIndividual {
			count = 1 + pick(r, []float64{0.85, 0.12, 0.03})
		} else {
			count = 1 + pick(r, []float64{0.5, 0.3, 0.15, 0.05})
		}
		count = min(count, n-len(w.acctBank))
		cur := amlworld.Currency(pick(r, currencyShare[:]))
		bank := uint16(w.bankTab.draw(r))
		if int(e) < w.cfg.Banks {
			bank = uint16(e) // every bank holds at least one account
		}
		for k := 0; k < count; k++ {
			b, c := bank, cur
			if k > 0 {
				if r.Float64() < 0.6 {
					b = uint16(w.bankTab.draw(r))
				}
				if r.Float64() < 0.08 {
					c = amlworld.Currency(pick(r, currencyShare[:]))
				}
			}
			w.acctBank = append(w.acctBank, b)
			w.acctCur = append(w.acctCur, c)
			w.acctEnt = append(w.acctEnt, e)
		}
	}
	w.entStart = append(w.entStart, int32(n))
	// Account numbers: an affine bijection of 36-bit integers, so all are
	// distinct (hence unique within each bank) and look random.
	mul := splitmix(w.cfg.Seed^0xacc0)&(1<<36-1) | 1
	add := splitmix(w.cfg.Seed^0xacc1) & (1<<36 - 1)
	w.acctNum = make([]string, n)
	for i := range w.acctNum {
		w.acctNum[i] = hex9((uint64(i)*mul + add) & (1<<36 - 1))
	}
}

// entityID is the 9-hex-character id of entity e.
func (w *world) entityID(e int32) string {
	mul := splitmix(w.cfg.Seed^0xe470)&(1<<36-1) | 1
	add := splitmix(w.cfg.Seed^0xe471) & (1<<36 - 1)
	return hex9((uint64(e)*mul + add) & (1<<36 - 1))
}

// entityName is e.g. "Corporation #33520".
func (w *world) entityName(e int32) string {
	return kindNames[w.entKind[e]] + " #" + strconv.Itoa(int(w.entSeq[e]))
}

func hex9(v uint64) string {
	const digits = "0123456789ABCDEF"
	var b [9]byte
	for i := 8; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

func (w *world) isCompany(a int32) bool { return w.entKind[w.acctEnt[a]] != kindIndividual }

// makePools builds the weighted account pools.
func (w *world) makePools(r *rand.Rand) {
	n := len(w.acctBank)
	activity := make([]float64, n)
	popularity := make([]float64, n)
	var people, firms []int32
	var merch, neigh [amlworld.NumCurrencies][]int32
	w.byBank = make([][]int32, w.cfg.Banks)
	for i := 0; i < n; i++ {
		a := int32(i)
		w.byBank[w.acctBank[i]] = append(w.byBank[w.acctBank[i]], a)
		if w.isCompany(a) {
			activity[i] = logNormal(r, 3, 1.2)
			popularity[i] = logNormal(r, 1, 1.6)
			firms = append(firms, a)
			merch[w.acctCur[i]] = append(merch[w.acctCur[i]], a)
		} else {
			activity[i] = logNormal(r, 1, 0.8)
			people = append(people, a)
			neigh[w.acctCur[i]] = append(neigh[w.acctCur[i]], a)
		}
	}
	act := func(a int32) float64 { return activity[a] }
	pop := func(a int32) float64 { return popularity[a] }
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	w.people = newPool(people, act)
	w.firms = newPool(firms, act)
	w.anyone = newPool(all, act)
	for c := range merch {
		w.merchants[c] = newPool(merch[c], pop)
		w.neighbors[c] = newPool(neigh[c], nil)
	}
	for e := 0; e+1 < len(w.entStart); e++ {
		if w.entStart[e+1]-w.entStart[e] >= 2 {
			w.multi = append(w.multi, int32(e))
		}
	}
}

// merchant draws a company paid by an account in currency c: one in c,
// weighted by popularity, or any company when c has none.
func (w *world) merchant(r *rand.Rand, c amlworld.Currency) int32 {
	if p := &w.merchants[c]; !p.empty() {
		return p.draw(r)
	}
	return w.firms.draw(r)
}

// neighbor draws an individual in currency c (any individual if none).
func (w *world) neighbor(r *rand.Rand, c amlworld.Currency) int32 {
	if p := &w.neighbors[c]; !p.empty() {
		return p.draw(r)
	}
	return w.people.draw(r)
}

// makeHouseholds gives individuals employers and bills and companies a
// payroll cadence.
func (w *world) makeHouseholds(r *rand.Rand) {
	ne := len(w.entStart) - 1
	w.employer = make([]int32, ne)
	w.salary = make([]float32, ne)
	w.bills = make([][2]bill, ne)
	w.cadence = make([]uint8, ne)
	w.phase = make([]uint8, ne)
	for e := 0; e < ne; e++ {
		w.employer[e] = -1
		if w.entKind[e] != kindIndividual {
			w.cadence[e] = uint8(pick(r, []float64{0.2, 0.3, 0.25, 0.25}))
			w.phase[e] = uint8(r.IntN(28) + 1)
			continue
		}
		primary := w.entStart[e]
		cur := w.acctCur[primary]
		if r.Float64() < 0.75 {
			w.employer[e] = w.merchant(r, cur)
			w.salary[e] = float32(logNormal(r, 3800, 0.5))
		}
		nb := pick(r, []float64{0.3, 0.4, 0.3})
		for k := 0; k < nb; k++ {
			w.bills[e][k] = bill{payee: w.merchant(r, cur), dom: uint8(1 + r.IntN(28)), usd: float32(logNormal(r, 90, 0.8))}
		}
	}
}

// makeLaunderers picks the pool most laundering accounts come from.
func (w *world) makeLaunderers(r *rand.Rand) {
	n := len(w.acctBank)
	k := max(int(math.Round(float64(n)*w.cfg.LaundererShare)), 2*w.cfg.Banks)
	perm := r.Perm(n)[:min(k, n)]
	w.launderersByBank = make([][]int32, w.cfg.Banks)
	for _, i := range perm {
		a := int32(i)
		w.launderers = append(w.launderers, a)
		w.launderersByBank[w.acctBank[a]] = append(w.launderersByBank[w.acctBank[a]], a)
	}
}
