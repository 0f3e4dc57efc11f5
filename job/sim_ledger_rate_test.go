package job

import (
	"math"
	"testing"
	"time"

	"graphfed/privacy"
)

func TestLedgerRate(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	entry := func(round uint64, ch privacy.Channel) privacy.Entry {
		return privacy.Entry{Round: round, Channel: ch}
	}
	for _, tc := range []struct {
		name string
		rd   privacy.Reading
		want LedgerRate
	}{
		{"no times", privacy.Reading{Entries: []privacy.Entry{entry(1, privacy.ChannelModel), entry(1, privacy.ChannelModel)},
			Stored: []time.Time{{}, {}}}, LedgerRate{}},
		{"one entry a round", privacy.Reading{Entries: []privacy.Entry{entry(1, privacy.ChannelModel), entry(2, privacy.ChannelModel)},
			Stored: []time.Time{at(0), at(500)}}, LedgerRate{}},
		{"two bursts, records left out", privacy.Reading{
			Entries: []privacy.Entry{entry(1, privacy.ChannelModel), entry(1, privacy.ChannelModel), entry(1, privacy.ChannelModel),
				entry(1, privacy.ChannelRound), entry(2, privacy.ChannelModel), entry(2, privacy.ChannelModel)},
			Stored: []time.Time{at(1000), at(0), at(500), at(60000), at(10000), at(12000)}},
			LedgerRate{Appends: 5, Seconds: 3, PerSecond: 5.0 / 3, SlowestRound: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ledgerRate(tc.rd)
			if got.Appends != tc.want.Appends || math.Abs(got.Seconds-tc.want.Seconds) > 1e-9 ||
				math.Abs(got.PerSecond-tc.want.PerSecond) > 1e-9 || math.Abs(got.SlowestRound-tc.want.SlowestRound) > 1e-9 {
				t.Errorf("ledgerRate = %+v, want %+v", got, tc.want)
			}
		})
	}
}
