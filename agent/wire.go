package agent

import (
	"time"

	"graphfed/bus"
	"graphfed/secagg"
)

// The conversions between bus messages and the machine's events and
// actions, shared by Agent and the deterministic simulator (package dsim),
// so that what the simulation checks is what ships: the subjects an agent
// listens on, the endpoint it opens them with, the event each opened body
// becomes, and the envelopes each action becomes.

// Subjects are the subjects client subscribes to: round openings, the
// global model and its own, done, and its neighbours' embeddings.
func Subjects(job, client string) []string {
	return []string{bus.Subject(job, bus.KindRound), bus.Subject(job, bus.KindModel, "all"),
		bus.Subject(job, bus.KindModel, client), bus.Subject(job, bus.KindDone), bus.Subject(job, bus.KindEmb, "*", client)}
}

// EndpointConfig is the agent's bus.EndpointConfig for cfg and a learner
// of numParams parameters.
func (c Config) EndpointConfig(numParams int) bus.EndpointConfig {
	ec := bus.EndpointConfig{Job: c.Job, ID: c.Client, Signer: c.Signer, Now: c.Now,
		Schema: bus.Schema{NumParams: numParams, Keyring: c.Keyring}}
	if c.SecAgg.Signer != nil {
		ec.Schema.SecAgg = &bus.SecAggSchema{}
	}
	return ec
}

// EventOf turns an opened envelope's body into the machine's event: a
// model, a neighbour's embeddings, a round opening (its Superseded is the
// driver's to set), done. Other bodies give nil.
func EventOf(env bus.Envelope, body any, now time.Time) MachineEvent {
	switch b := body.(type) {
	case *bus.Model:
		return ModelIn{Round: b.Round, Params: b.Params, Grad: b.Grad, Margin: b.Margin, HasMargin: b.HasMargin, Mix: b.Mix, RhoBar: b.RhoBar, Final: b.Final, Now: now}
	case *bus.Embeddings:
		return EmbeddingsIn{From: env.From, Round: b.Round, IDs: b.NodeIDs, Rows: b.Data.Floats(), Dim: b.Dim, Now: now}
	case *bus.RoundOpen:
		return RoundOpened{Round: b.Round, ModelRound: b.ModelRound, Deadline: time.Unix(0, b.Deadline), Payload: b.Payload,
			Anchor: b.Anchor.Ref(), SecAgg: b.SecAgg, SecureJob: b.SecureJob, Now: now}
	case *bus.SecAggKeys, *secagg.SealedShare, *secagg.SignedList:
		return SecAggIn{Msg: b, Now: now}
	case *bus.Done:
		return JobDone{Anchor: b.Anchor.Ref(), Now: now}
	}
	return nil
}

// JoinReplyOf turns the aggregator's answer to a hello into the machine's
// event. The server announces its open round again after a join, with
// the model to start from (Reannounced).
func JoinReplyOf(hr bus.HelloReply, now time.Time) JoinReply {
	return JoinReply{Accepted: hr.Accepted, Reason: hr.Reason, Round: hr.Round, Algo: hr.Algo, InitSeed: hr.InitSeed,
		Reannounced: true, Anchor: hr.Anchor.Ref(), Now: now}
}

// Outbound is what action a of client sends, in order: a hello (a
// request), scores, a neighbour's embeddings, the round's update, and
// after the job the final scores and a bye. Actions that send nothing
// give nil.
func Outbound(job, client string, a MachineAction) []bus.Outgoing {
	switch x := a.(type) {
	case SendHello:
		h := x.Hello
		return []bus.Outgoing{{Subject: bus.Subject(job, bus.KindHello, client), Kind: bus.KindHello, Body: &h, Request: true}}
	case PublishMetrics:
		m := x.Metrics
		return []bus.Outgoing{{Subject: bus.Subject(job, bus.KindMetrics, client), Kind: bus.KindMetrics, Round: m.Round, Body: &m}}
	case PublishEmbeddings:
		e := x.Embeddings
		return []bus.Outgoing{{Subject: bus.Subject(job, bus.KindEmb, client, x.To), Kind: bus.KindEmb, Round: e.Round, Body: &e}}
	case PublishUpdate:
		u := x.Update
		return []bus.Outgoing{{Subject: bus.Subject(job, bus.KindUpdate, client), Kind: bus.KindUpdate, Round: u.Round, Body: &u}}
	case PublishSecAgg:
		o, err := bus.SecAggOutgoing(job, client, x.Msg)
		if err != nil {
			return nil // the machine built it from its own round
		}
		return []bus.Outgoing{o}
	case Finished:
		return []bus.Outgoing{
			{Subject: bus.Subject(job, bus.KindMetrics, client), Kind: bus.KindMetrics, Round: x.Round,
				Body: &bus.Metrics{Round: x.Round, Final: true, Scores: x.Scores, Ledger: bus.NewLedgerRef(x.Head)}},
			{Subject: bus.Subject(job, bus.KindBye, client), Kind: bus.KindBye, Round: x.Round, Body: &bus.Bye{Reason: "done"}},
		}
	}
	return nil
}
