package scenarios

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/secagg"
)

// secagg-forged-key: a bank (client-1, with its own key and login) forges
// key advertisements as round 2 opens, before the honest banks (who pause
// before training) advertise:
//
//	victim-subject  an advertisement of client-0 on client-0's subject:
//	                the server's permissions refuse the publish
//	other-party     an advertisement of client-0 on client-1's own
//	                subject: the aggregator's validator rejects it (subject)
//	bad-signature   client-1's advertisement with its signature broken:
//	                secagg.Server refuses it (counted, SecAggRefused)
//	unsigned        client-1's advertisement with no signature: refused
//
// Each must be refused and counted, and round 2's keys must hold the
// honest advertisements only (every one verifies for its party, none has
// a forged key), with a sum of all five banks.

const (
	forgedRounds = 3
	forgedRound  = 2
	forgedBy     = 1
	forgedVictim = 0
)

// InvSecAggForgedKey: a forged key reached a round's keys.
const InvSecAggForgedKey = "secagg-forged-key"

func secAggForgedKeyScenario() Scenario {
	const name = "secagg-forged-key"
	return Scenario{
		Name: name,
		Doc:  "a bank forges key advertisements (on the victim's subject, naming the victim on its own, badly signed, unsigned): the server, the validator and secagg.Server refuse and count each, and the round's keys hold the honest keys only",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			run, err := runSecAggForged(ctx, o)
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			return judgeSecAggForged(name, run), nil
		},
	}
}

// forgedRun is what the judge needs of the forging job.
type forgedRun struct {
	closes      []aggregator.RoundClosed
	sent        int               // forged advertisements published (the refused publish included)
	permissions int               // the server's permission violations reported to the forger
	rejects     map[string]uint64 // the aggregator validator's, by reason
	refused     map[string]map[string]int
	keys        []secagg.SignedAdvertisement // round 2's, as the banks got them
	badKeys     []string                     // keys that do not verify for their party
	forgedInKey []string                     // parties whose key in the round is a forged one
}

func runSecAggForged(ctx context.Context, o ScenarioOptions) (forgedRun, error) {
	j, err := startSecAggJob(ctx, o, saJobOptions{job: "secagg-forged", rounds: forgedRounds, slowdown: 200 * time.Millisecond,
		round: aggregator.Config{RoundTimeout: 20 * time.Second}})
	if err != nil {
		return forgedRun{}, err
	}
	defer j.close()
	job, by, victim := j.local.Job(), deploy.ClientID(forgedBy), deploy.ClientID(forgedVictim)
	// The server's refusals of publishes on the victim's subject.
	var mu sync.Mutex
	var permissions int
	signer, err := bus.CredsSigner(by, j.local.Creds(by))
	if err != nil {
		return forgedRun{}, err
	}
	nc, err := bus.Connect(j.local.URL(), bus.ConnectOptions{Name: "forger-" + by, Creds: j.local.Creds(by), OnError: func(err error) {
		if msg := strings.ToLower(err.Error()); strings.Contains(msg, "permission") && strings.Contains(msg, bus.Subject(job, bus.KindSAAdv, victim)) {
			mu.Lock()
			permissions++
			mu.Unlock()
		}
	}})
	if err != nil {
		return forgedRun{}, err
	}
	tap := &saTap{tr: bus.NewNATSTransport(nc, true), signer: signer, job: job, seq: 1 << 40}
	defer tap.tr.Close()

	var run forgedRun
	var forgedKeys [][]byte
	var attackErr error
	var once sync.Once
	// forge runs on the forger's subscription; what it leaves is read
	// under mu once the job is over.
	forge := func(ctx context.Context, a *bus.SecAggRound) {
		var sent int
		var errs []error
		defer func() {
			mu.Lock()
			run.sent, attackErr = sent, errors.Join(errs...)
			mu.Unlock()
		}()
		cfg, _, err := a.Protocol(job, forgedRound)
		if err != nil {
			errs = append(errs, err)
			return
		}
		sign := bus.SecAggSigner(signer)
		ad := func(party string) secagg.SignedAdvertisement {
			enc, mask := make([]byte, secagg.KeySize), make([]byte, secagg.KeySize)
			_, _ = rand.Read(enc)
			_, _ = rand.Read(mask)
			mu.Lock()
			forgedKeys = append(forgedKeys, mask)
			mu.Unlock()
			s := secagg.SignedAdvertisement{Advertisement: secagg.Advertisement{Job: job, Party: party, Round: forgedRound,
				ConfigDigest: cfg.Digest(), EncKey: enc, MaskKey: mask}}
			var err error
			if s.Sig, err = sign.Sign(s.Bytes()); err != nil {
				errs = append(errs, err)
			}
			return s
		}
		victimAd, otherParty, badSig, unsigned := ad(victim), ad(victim), ad(by), ad(by)
		badSig.Sig = bytes.Clone(badSig.Sig)
		badSig.Sig[0] ^= 0x80
		unsigned.Sig = nil
		sends := []struct {
			from, subject string
			ad            secagg.SignedAdvertisement
		}{
			{by, bus.Subject(job, bus.KindSAAdv, victim), victimAd},
			{by, bus.Subject(job, bus.KindSAAdv, by), otherParty},
			{by, bus.Subject(job, bus.KindSAAdv, by), badSig},
			{by, bus.Subject(job, bus.KindSAAdv, by), unsigned},
		}
		for _, s := range sends {
			data, err := tap.seal(bus.KindSAAdv, s.from, forgedRound, &bus.SecAggBody{Msg: s.ad.Encode()})
			if err == nil {
				err = tap.tr.Publish(ctx, s.subject, data)
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			sent++
		}
		if err := tap.tr.Flush(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	_, err = tap.tr.Subscribe(func(m bus.Msg) {
		env, err := bus.Open(m.Data)
		if err != nil || env.Round != forgedRound {
			return
		}
		switch env.Kind {
		case bus.KindRound:
			var ro bus.RoundOpen
			if env.UnmarshalBody(&ro) == nil && ro.SecAgg != nil {
				once.Do(func() { forge(ctx, ro.SecAgg) })
			}
		case bus.KindSAKeys:
			var b bus.SecAggBody
			if env.UnmarshalBody(&b) != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, raw := range b.Ads {
				if a, err := secagg.DecodeSignedAdvertisement(raw); err == nil {
					run.keys = append(run.keys, a)
				}
			}
		}
	}, bus.Subject(job, bus.KindRound), bus.Subject(job, bus.KindSAKeys))
	if err != nil {
		return forgedRun{}, err
	}
	if err := tap.tr.Flush(ctx); err != nil {
		return forgedRun{}, err
	}
	res, err := j.run(ctx)
	if err != nil {
		return forgedRun{}, err
	}
	// The server's refusal of the publish arrives asynchronously: a round
	// trip after the job has certainly brought it.
	_ = tap.tr.Flush(ctx)
	mu.Lock()
	defer mu.Unlock()
	if attackErr != nil {
		return forgedRun{}, fmt.Errorf("forging: %w", attackErr)
	}
	run.closes, run.permissions, run.rejects, run.refused = res.Closes, permissions, res.Rejects, res.SecAggRefused
	verify := bus.SecAggVerifier(j.local.Keyring())
	for _, a := range run.keys {
		if a.Verify(verify) != nil {
			run.badKeys = append(run.badKeys, a.Party)
		}
		for _, k := range forgedKeys {
			if bytes.Equal(a.MaskKey, k) {
				run.forgedInKey = append(run.forgedInKey, a.Party)
			}
		}
	}
	return run, nil
}

func judgeSecAggForged(name string, r forgedRun) Outcome {
	by := deploy.ClientID(forgedBy)
	if r.sent != 4 {
		return fail(name, InvNotExercised, "%d of 4 forged advertisements published", r.sent)
	}
	if r.permissions < 1 {
		return fail(name, InvNotRejected, "the server did not refuse an advertisement on the victim's subject (no permission violation)")
	}
	// The validator charges no sender for a subject reject (RejectsBy is
	// the contract's); no honest party sends one.
	if got := r.rejects[bus.ReasonSubject]; got != 1 {
		return fail(name, InvNotRejected, "%d subject rejects for an advertisement of another party on %s's subject, want 1 (all: %v)", got, by, r.rejects)
	}
	var refusedAds int
	for id, kinds := range r.refused {
		if id != by && kinds["adv"] > 0 {
			return fail(name, InvSecAggForgedKey, "advertisements of %s refused (%v): only %s forged", id, kinds, by)
		}
	}
	refusedAds = r.refused[by]["adv"]
	if refusedAds != 2 {
		return fail(name, InvSecAggNotRefused, "%d advertisements of %s refused by secagg.Server, want the 2 it signed badly or not at all (refused %v, rejected %v)",
			refusedAds, by, r.refused, r.rejects)
	}
	if len(r.keys) != secBanks || len(r.badKeys) > 0 || len(r.forgedInKey) > 0 {
		return fail(name, InvSecAggForgedKey, "round %d's keys: %d advertisements, %v not verifying, forged keys of %v", forgedRound, len(r.keys), r.badKeys, r.forgedInKey)
	}
	if len(r.closes) != forgedRounds {
		return fail(name, InvNoProgress, "%d of %d rounds closed", len(r.closes), forgedRounds)
	}
	for _, rc := range r.closes {
		if rc.SecAgg == nil || rc.SecAgg.Failure != "" || len(rc.SecAgg.Survivors) != secBanks {
			return fail(name, InvNoProgress, "round %d closed without all %d banks' secure sum: %+v", rc.Round, secBanks, rc.SecAgg)
		}
	}
	return Outcome{Name: name, Metrics: map[string]float64{
		"forged_sent": float64(r.sent), "permission_refused": float64(r.permissions),
		"validator_rejected_subject": float64(r.rejects[bus.ReasonSubject]), "secagg_refused_adv": float64(refusedAds),
		"keys_in_round": float64(len(r.keys)),
		"rounds":        float64(len(r.closes)),
	}}
}
