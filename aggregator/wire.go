package aggregator

import (
	"time"

	"graphfed/bus"
	"graphfed/secagg"
)

// The conversions between bus messages and the machine's events and
// actions, shared by Server and the deterministic simulator (package
// dsim), so that what the simulation checks is what ships: the subjects
// the aggregator listens on, the endpoint it opens them with, the event
// each opened body becomes, the envelopes each action becomes, and what
// an action changes in the validator.

// Subjects are the subjects the aggregator subscribes to; a durable server
// reads updates from its log instead of core NATS.
func Subjects(job string, durable bool) []string {
	s := []string{bus.Subject(job, bus.KindHello, "*"), bus.Subject(job, bus.KindBye, "*"), bus.Subject(job, bus.KindMetrics, "*")}
	if !durable {
		s = append(s, bus.Subject(job, bus.KindUpdate, "*"))
	}
	return s
}

// SubjectsFor are Subjects with the secure-aggregation subjects of a job
// that aggregates securely (the parties' advertisements, masked inputs
// and reveals), which travel on core NATS even for a durable server: a
// secure round lost with a restart closes without a model.
func (c ServerConfig) SubjectsFor(durable bool) []string {
	s := Subjects(c.Job, durable)
	if c.Round.SecAgg.On {
		s = append(s, bus.SecAggSubjects(c.Job, bus.AggregatorID)...)
	}
	return s
}

// EndpointConfig is the aggregator's bus.EndpointConfig for cfg: it
// allows no sender until its join is accepted (AdmitJoin) and no round
// beyond the job's.
func (c ServerConfig) EndpointConfig() bus.EndpointConfig {
	ec := bus.EndpointConfig{Job: c.Job, ID: bus.AggregatorID, Signer: c.Signer, Now: c.Now,
		Schema: bus.Schema{MaxRound: uint64(c.Round.Rounds), Senders: map[string]bool{}, Enrol: c.Enrol,
			Keyring: c.Keyring, MaxBytes: c.MaxBytes, NumParams: c.Round.Contract.NumParams}}
	if c.Round.SecAgg.On {
		ec.Schema.SecAgg = &bus.SecAggSchema{Words: SecAggWords(c.Round), Vectors: secAggVectors(c.Round)}
	}
	return ec
}

// secAggVectors is how many vectors of the schema's length a masked
// input of cfg's job carries.
func secAggVectors(cfg Config) int {
	if cfg.Contract.Grad != GradNone && (cfg.Algo == AlgoCEFedGNN || cfg.Algo == AlgoFedGNNST) {
		return 2
	}
	return 1
}

// SecAggWords is the exact length of a masked vector in a job of cfg
// whose schema is fixed (the parameters, the estimator when the job
// averages one, the weight slot); 0 when the schema is not fixed yet.
func SecAggWords(cfg Config) int {
	p := cfg.Contract.NumParams
	if p == 0 {
		return 0
	}
	if cfg.Contract.Grad != GradNone && (cfg.Algo == AlgoCEFedGNN || cfg.Algo == AlgoFedGNNST) {
		return 2*p + 1
	}
	return p + 1
}

// EventOf turns an opened envelope's body into the machine's event: a
// hello into a Join, an update into an UpdateIn, a bye into a Leave. A
// body that is no event (metrics) gives nil; an update whose released
// scalars are not single finite values gives an error (the update is
// rejected).
func EventOf(env bus.Envelope, body any, now time.Time) (Event, error) {
	switch b := body.(type) {
	case *bus.Hello:
		return Join{Client: env.From, SchemaHash: b.SchemaHash, NumParams: b.NumParams, Weight: float64(b.TrainSize),
			Users: b.Users, Items: b.Items, Edges: b.Edges, Now: now}, nil
	case *bus.Update:
		ev, err := updateEvent(env.From, b, now)
		if err != nil {
			return nil, err
		}
		return ev, nil
	case *bus.Bye:
		return Leave{Client: env.From, Now: now}, nil
	case *secagg.SignedAdvertisement, *secagg.MaskedInput, *secagg.Reveal:
		return SecAggIn{Client: env.From, Msg: b, Now: now}, nil
	}
	return nil, nil
}

// Outbound is what action a sends, in order: a join's answer (a reply to
// the client's hello), a round opening, a global or personalized model,
// done. Actions that send nothing give nil.
func (c ServerConfig) Outbound(a Action) []bus.Outgoing {
	j := c.Job
	switch x := a.(type) {
	case ReplyJoin:
		return []bus.Outgoing{{Subject: bus.Subject(j, bus.KindHello, x.Client), Kind: bus.KindHello, ReplyTo: x.Client,
			Body: &bus.HelloReply{Accepted: x.Accepted, Reason: x.Reason, Round: x.Round, Algo: c.Round.Algo, Rounds: c.Round.Rounds, InitSeed: c.InitSeed, Run: c.Run, Ended: c.ended(), Anchor: bus.NewLedgerRef(x.Anchor)}}}
	case OpenRound:
		return []bus.Outgoing{{Subject: bus.Subject(j, bus.KindRound), Kind: bus.KindRound, Round: x.Round,
			Body: &bus.RoundOpen{Round: x.Round, Deadline: x.Deadline.UnixNano(), ModelRound: x.ModelRound, Payload: x.Payload, Run: c.Run, Ended: c.ended(), Anchor: bus.NewLedgerRef(x.Anchor), SecAgg: x.SecAgg, SecureJob: x.SecureJob}}}
	case SecAggOut:
		o, err := bus.SecAggOutgoing(j, bus.AggregatorID, x.Msg)
		if err != nil {
			// The machine built the message from its own round: a failure
			// here is a bug, and the round closes at its wait.
			return nil
		}
		return []bus.Outgoing{o}
	case PublishModel:
		to := "all"
		if x.To != "" {
			to = x.To
		}
		return []bus.Outgoing{{Subject: bus.Subject(j, bus.KindModel, to), Kind: bus.KindModel, Round: x.Round,
			Body: &bus.Model{Round: x.Round, Params: x.Params, Grad: x.Grad, Final: x.Final, Margin: x.Margin, HasMargin: x.HasMargin, Mix: x.Mix, RhoBar: x.RhoBar}}}
	case Finished:
		return []bus.Outgoing{{Subject: bus.Subject(j, bus.KindDone), Kind: bus.KindDone, Round: x.Rounds, Body: &bus.Done{Rounds: x.Rounds, Run: c.Run, Ended: c.ended(), Anchor: bus.NewLedgerRef(x.Anchor)}}}
	}
	return nil
}

// AdmitJoin applies an accepted join to the validator: from now on the
// client may send updates, and vectors must have the job's numParams
// values (0: not known yet).
func AdmitJoin(v *bus.Validator, r ReplyJoin, numParams int) {
	if !r.Accepted {
		return
	}
	v.AllowSender(r.Client)
	if numParams > 0 {
		v.SetNumParams(numParams)
	}
}

// AdmitSnapshot prepares a restarted aggregator's validator from the
// snapshot it resumes: every client that joined may send again.
func AdmitSnapshot(v *bus.Validator, snap Snapshot) {
	for _, c := range snap.Clients {
		v.AllowSender(c.ID)
	}
	if snap.NumParams > 0 {
		v.SetNumParams(snap.NumParams)
	}
}

// ResendRound is the round opening to announce again after step ev gave
// acts: a client (re)joined while a round was open, and having subscribed
// after the announcement it would otherwise sit the round out and hold
// its quorum up until the deadline. Clients that have the round already
// ignore the repeat.
func ResendRound(m *Machine, ev Event, acts []Action) (OpenRound, bool) {
	if _, ok := ev.(Join); !ok || !m.open {
		return OpenRound{}, false
	}
	accepted := false
	for _, a := range acts {
		switch x := a.(type) {
		case ReplyJoin:
			accepted = x.Accepted
		case OpenRound:
			return OpenRound{}, false // just announced
		}
	}
	return m.openRound(), accepted
}
