package privacy

import (
	"fmt"
	"math"
)

// Channel names a kind of released value. Channels are strings so that
// ledger entries stay readable.
type Channel string

// The released channels, and the non-release calibration record.
const (
	// ChannelModel: model parameters (CE-FedGNN W, σ1; LPSFed MLPs).
	ChannelModel Channel = "model"
	// ChannelGrad: gradient estimators (CE-FedGNN G, σ2).
	ChannelGrad Channel = "grad"
	// ChannelMargin: LPSFed margins.
	ChannelMargin Channel = "margin"
	// ChannelEmb: node embeddings (CE-FedGNN boundary embeddings, σ0),
	// accounted per node under metric DP.
	ChannelEmb Channel = "emb"
	// ChannelDescriptor: FedGSP's spectral descriptors (the principal
	// directions of a client's homophily and heterophily bases), released
	// once per client, rows clipped to norm 1.
	ChannelDescriptor Channel = "descriptor"
	// ChannelCalibration marks a ledger entry that releases nothing and
	// records the metric-DP distances ρ measured by Calibrate, so that an
	// audit needs only the ledger.
	ChannelCalibration Channel = "calibration"
	// ChannelRound marks one of the aggregator's round records: no release,
	// the ledger heads (seq and digest of the last entry) each bank had
	// reported as of the close of round Round (Round 0: the start record,
	// written before round 1 opens). They are what makes a ledger that
	// lost the tail of a chain evident (completeness.go).
	ChannelRound Channel = "round"
	// ChannelDone marks the aggregator's done record: every bank's final
	// ledger head, written when the job is over. A job whose aggregator
	// recorded its start but whose ledger holds no done record has lost
	// its tail, or has not finished.
	ChannelDone Channel = "done"
	// ChannelSecAgg marks a bank's record of one round of secure
	// aggregation (Entry.SecAgg, secagg_record.go): no release, the round's
	// cohort, threshold and the bank's neighbours, written before its
	// masked input goes out, so that an audit can say from the ledger
	// alone what the aggregator could see of the bank's update.
	ChannelSecAgg Channel = "secagg"
)

// AggregatorClient is the client id the aggregator files its records
// under (bus.AggregatorID; the package imports no other graphfed package,
// so the id is spelled here, and the bus tests check that both agree).
const AggregatorClient = "aggregator"

// ParseChannel accepts the lower-case channel names.
func ParseChannel(s string) (Channel, error) {
	c := Channel(s)
	if !c.valid() {
		return "", errorf("parse channel", ErrInvalid, fmt.Sprintf("channel %q (want model, grad, margin, emb, descriptor, calibration, secagg, round or done)", s))
	}
	return c, nil
}

func (c Channel) valid() bool {
	switch c {
	case ChannelModel, ChannelGrad, ChannelMargin, ChannelEmb, ChannelDescriptor, ChannelCalibration, ChannelSecAgg, ChannelRound, ChannelDone:
		return true
	}
	return false
}

// releases reports whether entries on the channel release data (all but
// calibration and secure-aggregation records and the aggregator's
// records).
func (c Channel) releases() bool {
	return c.valid() && c != ChannelCalibration && c != ChannelSecAgg && !c.record()
}

// Releases reports whether entries on c release data: false for the
// calibration, secure-aggregation and aggregator's records, which a
// reader counting releases must skip.
func (c Channel) Releases() bool { return c.releases() }

// record reports whether entries on the channel are the aggregator's
// records (round and done), which release nothing and charge no budget.
func (c Channel) record() bool { return c == ChannelRound || c == ChannelDone }

// IsRecord reports whether c is a channel of the aggregator's records.
func (c Channel) IsRecord() bool { return c.record() }

// Sensitivity is the L2 distance between the clipped releases of two
// neighbouring inputs, which the gate records as Entry.Rho for the model,
// grad, margin and descriptor channels. graphfed uses the replace-one neighbouring
// relation at client level: a neighbouring client may hold any data at all,
// so each of the rows clipped to norm clip may become any other row in the
// ball, at distance up to 2·clip, and all of them at once:
//
//	ρ = 2·clip·sqrt(rows).
//
// FedGSP's descriptors are such rows (4·K·kpr unit directions, clip 1):
// ρ = 2·sqrt(4·K·kpr), 18.3 for Cora's K=7, kpr=3. A meaningful ε then
// needs a σ per coordinate comparable to ρ, far above the directions'
// own coordinates (about 1/sqrt(Dim)): the noise swamps them.
//
// Embeddings are accounted under metric DP instead: their distance ρ is not
// a worst case but a percentile measured at audit time (Calibrate), so
// Sensitivity returns 0 for ChannelEmb and the accountant tracks Σ 1/σ²
// per node, to be scaled by ρ² when ε is evaluated.
func Sensitivity(ch Channel, clip float64, rows int) float64 {
	if ch == ChannelEmb || !ch.releases() {
		return 0
	}
	return 2 * clip * math.Sqrt(float64(rows))
}
