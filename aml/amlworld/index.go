package amlworld

// amlIndex maps packed (bank index, account number) keys to account indices:
// an open-addressing hash table with linear probing and 16-byte slots, so a
// lookup usually touches one cache line. At five million rows the account
// lookups (two per row, into a table of half a million accounts) dominated
// the load with Go's map; this halves their cost.
type amlIndex struct {
	slots []amlSlot // len is a power of two; acct == 0 marks an empty slot
	n     int
}

// amlSlot holds a key and its value. Packed accounts are never 0 (the
// packing adds the length, at least 1), so 0 marks an empty slot.
type amlSlot struct {
	acct uint64
	bank int32
	val  int32
}

func amlHash(bank int32, acct uint64) uint64 {
	h := acct ^ uint64(uint32(bank))*0x9e3779b97f4a7c15
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// get returns the value stored for (bank, acct).
func (x *amlIndex) get(bank int32, acct uint64) (int32, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for i := amlHash(bank, acct) & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.acct == 0 {
			return 0, false
		}
		if s.acct == acct && s.bank == bank {
			return s.val, true
		}
	}
}

// put stores val for a key that is not present.
func (x *amlIndex) put(bank int32, acct uint64, val int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := uint64(len(x.slots) - 1)
	i := amlHash(bank, acct) & mask
	for x.slots[i].acct != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = amlSlot{acct: acct, bank: bank, val: val}
	x.n++
}

func (x *amlIndex) grow() {
	old := x.slots
	x.slots = make([]amlSlot, max(1024, 2*len(old)))
	x.n = 0
	for _, s := range old {
		if s.acct != 0 {
			x.put(s.bank, s.acct, s.val)
		}
	}
}
