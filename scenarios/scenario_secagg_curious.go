package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/secagg"
)

// secagg-curious-aggregator: the aggregator's key signs what the protocol
// forbids. In round 2, once every bank has masked (their masked inputs
// are held at their connections until then), a second connection with
// the aggregator's key publishes two forged lists before the honest one:
// L1 names client-0 a dropout (an answer would reveal its mask-key
// shares), L3 names it both survivor and dropout; the honest list L2,
// every bank a survivor, follows. Each bank answers only the first list
// it can accept (client-0 refuses L1, which drops it, and L3, and answers
// L2; the others answer L1 and refuse L3 and L2), so the aggregator gets
// client-0's mask-key shares from the others but its self-mask share from
// client-0 alone: never t of both, which is what would unmask client-0's
// update. Every refusal is counted in the banks' final scores; the round
// closes without a model and the job goes on.

const (
	curiousRounds = 3
	curiousRound  = 2
	curiousVictim = 0
)

// InvSecAggUnmasked: the aggregator held t self-mask and t mask-key
// shares of one party in one round.
const InvSecAggUnmasked = "secagg-unmasked"

// InvSecAggNotRefused: a forged secure-aggregation message was not
// refused and counted.
const InvSecAggNotRefused = "secagg-not-refused"

func secAggCuriousScenario() Scenario {
	const name = "secagg-curious-aggregator"
	return Scenario{
		Name: name,
		Doc:  "an aggregator's key signs two conflicting lists for a round (bank-0 dropout; bank-0 survivor and dropout) before the honest one: every bank refuses and counts, and the reveals never hold t self-mask and t mask-key shares of bank-0",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			run, err := runSecAggCurious(ctx, o)
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			return judgeSecAggCurious(name, run), nil
		},
	}
}

// curiousRun is what the judge needs of the attacked job.
type curiousRun struct {
	closes   []aggregator.RoundClosed
	forged   int            // lists forged and published
	refused  map[string]int // each bank's secagg_refused
	selfFrom []string       // banks that revealed the victim's self-mask share in the round
	maskFrom []string       // banks that revealed the victim's mask-key share in the round
	aggRefus int            // reveals the honest aggregator refused
	t        int
}

func runSecAggCurious(ctx context.Context, o ScenarioOptions) (curiousRun, error) {
	j, err := startSecAggJob(ctx, o, saJobOptions{job: "secagg-curious", rounds: curiousRounds,
		round: aggregator.Config{RoundTimeout: 20 * time.Second}})
	if err != nil {
		return curiousRun{}, err
	}
	defer j.close()
	tap, err := newSecAggTap(j.local, bus.AggregatorID)
	if err != nil {
		return curiousRun{}, err
	}
	defer tap.tr.Close()
	job, victim := j.local.Job(), deploy.ClientID(curiousVictim)

	var mu sync.Mutex
	var digest [32]byte
	selfFrom, maskFrom := map[string]bool{}, map[string]bool{}
	_, err = tap.tr.Subscribe(func(m bus.Msg) {
		env, body, ok := secAggBody(m.Data)
		if !ok || env.Round != curiousRound {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch subjectKind(m.Subject) {
		case bus.KindSAAdv:
			if ad, err := secagg.DecodeSignedAdvertisement(body); err == nil {
				digest = ad.ConfigDigest
			}
		case bus.KindSAReveal:
			r, err := secagg.DecodeReveal(body)
			if err != nil {
				return
			}
			for _, s := range r.Self {
				if s.Party == victim {
					selfFrom[r.From] = true
				}
			}
			for _, s := range r.Mask {
				if s.Party == victim {
					maskFrom[r.From] = true
				}
			}
		}
	}, bus.Subject(job, bus.KindSAAdv, "*"), bus.Subject(job, bus.KindSAReveal, "*"))
	if err != nil {
		return curiousRun{}, err
	}
	if err := tap.tr.Flush(ctx); err != nil {
		return curiousRun{}, err
	}

	// Every bank's masked input of the round waits at its connection until
	// the forged lists are out; the last bank to mask sends them.
	var held int
	release := make(chan struct{})
	forged, attackErr := 0, error(nil)
	attack := func(ctx context.Context) {
		mu.Lock()
		d := digest
		mu.Unlock()
		var others, all []string
		for _, b := range j.banks {
			all = append(all, b.id)
			if b.id != victim {
				others = append(others, b.id)
			}
		}
		lists := []secagg.List{
			{Job: job, Round: curiousRound, ConfigDigest: d, Survivors: others, Dropouts: []string{victim}},
			{Job: job, Round: curiousRound, ConfigDigest: d, Survivors: all, Dropouts: []string{victim}},
		}
		signer := bus.SecAggSigner(tap.signer)
		for _, l := range lists {
			sig, err := signer.Sign(l.Bytes())
			if err == nil {
				err = tap.send(ctx, bus.AggregatorID, "", secagg.SignedList{List: l, Sig: sig})
			}
			if err != nil {
				attackErr = err
				return
			}
			forged++
		}
		attackErr = tap.tr.Flush(ctx)
	}
	for _, b := range j.banks {
		b.fault.onPublish = func(ctx context.Context, subject string, data []byte, publish func() error) error {
			if subjectKind(subject) != bus.KindSAMasked || envRound(data) != curiousRound {
				return publish()
			}
			mu.Lock()
			held++
			last := held == len(j.banks)
			mu.Unlock()
			if last {
				attack(ctx)
				close(release)
			}
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
			return publish()
		}
	}
	res, err := j.run(ctx)
	if err != nil {
		return curiousRun{}, err
	}
	if attackErr != nil {
		return curiousRun{}, fmt.Errorf("forging the lists: %w", attackErr)
	}
	run := curiousRun{closes: res.Closes, forged: forged, refused: map[string]int{}}
	for _, b := range j.banks {
		run.refused[b.id] = int(b.res.Final["secagg_refused"])
	}
	for _, by := range res.SecAggRefused {
		run.aggRefus += by["reveal"]
	}
	if rc, ok := j.roundClosed(curiousRound); ok && rc.SecAgg != nil {
		run.t = rc.SecAgg.Threshold
	}
	mu.Lock()
	run.selfFrom, run.maskFrom = sortedKeys(selfFrom), sortedKeys(maskFrom)
	mu.Unlock()
	return run, nil
}

func judgeSecAggCurious(name string, r curiousRun) Outcome {
	if r.forged != 2 {
		return fail(name, InvNotExercised, "%d of 2 forged lists published", r.forged)
	}
	if r.t < 2 {
		return fail(name, InvNoProgress, "round %d has no secure close (t = %d)", curiousRound, r.t)
	}
	total := 0
	for i := range secBanks {
		id := deploy.ClientID(i)
		if r.refused[id] < 1 {
			return fail(name, InvSecAggNotRefused, "%s counted no refused list (secagg_refused %v)", id, r.refused)
		}
		total += r.refused[id]
	}
	if len(r.selfFrom) >= r.t && len(r.maskFrom) >= r.t {
		return fail(name, InvSecAggUnmasked, "round %d: self-mask shares of client-0 from %v and mask-key shares from %v, t = %d",
			curiousRound, r.selfFrom, r.maskFrom, r.t)
	}
	if len(r.maskFrom) == 0 {
		// Nobody answered a forged list: the split view was not shown.
		return fail(name, InvNotExercised, "no bank answered a forged list (self-mask shares of client-0 from %v)", r.selfFrom)
	}
	if len(r.closes) != curiousRounds {
		return fail(name, InvNoProgress, "%d of %d rounds closed", len(r.closes), curiousRounds)
	}
	for _, rc := range r.closes {
		if rc.Round != curiousRound && (rc.SecAgg == nil || rc.SecAgg.Failure != "") {
			return fail(name, InvNoProgress, "round %d closed without a secure sum: %+v", rc.Round, rc.SecAgg)
		}
	}
	sc := r.closes[curiousRound-1].SecAgg
	out := Outcome{Name: name, Metrics: map[string]float64{
		"forged_lists": float64(r.forged), "banks_refused_total": float64(total), "t": float64(r.t),
		"victim_self_shares": float64(len(r.selfFrom)), "victim_mask_shares": float64(len(r.maskFrom)),
		"aggregator_refused_reveals": float64(r.aggRefus), "rounds": float64(len(r.closes)),
	}}
	if sc != nil && sc.Failure != "" {
		out.Metrics["attacked_round_without_model"] = 1
	}
	return out
}
