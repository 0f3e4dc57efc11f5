// Command gf-forge is a red-team tool for the by-hand attack tests of
// issue 29 (scripts/byhand-issue29.sh). It prints one sealed graphfed
// envelope, signed with a party's NKey seed, to stdout, for the nats CLI
// to send:
//
//	gf-forge --job aml-1 --from bank-0406 --seed keys/bank-0406.nk update --round 1 --value 1e30 > u.bin
//	nats --nkey keys/bank-0406.nk pub gf.aml-1.update.bank-0406 --force-stdin --no-templates < u.bin
//
// It holds no secret of its own and bypasses nothing on the server: it
// signs as the party whose seed it is given, which is exactly what an
// attacker who holds that bank's seed can do. What it lets a tester make
// that the nats CLI cannot is the signature (bus.Signer over the
// envelope's BLAKE3 digest) around a body of the attacker's choosing:
//
//	update  an update for --round with every parameter (and, with --grad,
//	        every gradient-estimator value: CE-FedGNN's updates carry one)
//	        equal to --value and the weight --weight (attacks 1 and 2);
//	hello   a join request stating --schema and --params (attack 3), to
//	        send as a request (nats req) on gf.<job>.hello.<from>;
//	emb     an embedding message to bank --to of about --bytes bytes,
//	        --dim values a row, for node ids from --node-base, which no
//	        bank holds by default (attack 5).
//
// The subject to publish on is printed on stderr. Nothing is sent: the
// sending is the nats CLI's, as an outsider would do it.
//
// Not part of graphfed's deployment: build it only for such tests
// (go build -o gf-forge ./cmd/gf-forge).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"graphfed/bus"
)

// The bodies below have the wire form of bus.Update, bus.Hello and
// bus.Embeddings (the same msgpack keys; bus.Vector encodes as
// bus.Sensitive does): bus.Sensitive can only be made by a privacy gate,
// and a forger has none. The unit test opens the output with bus's own
// validator into the bus types.

type update struct {
	Round     uint64     `msgpack:"round"`
	BaseRound uint64     `msgpack:"base"`
	Weight    float64    `msgpack:"weight"`
	Params    bus.Vector `msgpack:"params"`
	Grad      bus.Vector `msgpack:"grad"`
	Loss      float64    `msgpack:"loss"`
}

type embeddings struct {
	Round   uint64     `msgpack:"round"`
	Layer   int        `msgpack:"layer"`
	Dim     int        `msgpack:"dim"`
	NodeIDs []int64    `msgpack:"nodes"`
	Data    bus.Vector `msgpack:"data"`
}

// options are the command line's.
type options struct {
	job, from, seed string
	seq             uint64
	at              time.Time
	kind            string

	round         uint64
	params        int
	value, weight float64
	grad          bool
	schema, algo  string
	train         int
	to            string
	dim, bytes    int
	rows          int
	nodeBase      int64
	embValue      float64
	layer         int
}

func main() {
	subject, err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gf-forge:", err)
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, subject)
}

// run parses args, forges the envelope, writes it to w and returns the
// subject it belongs on.
func run(args []string, w io.Writer) (string, error) {
	o, err := parse(args)
	if err != nil {
		return "", err
	}
	data, subject, err := forge(o)
	if err != nil {
		return "", err
	}
	_, err = w.Write(data)
	return subject, err
}

const usage = `usage: gf-forge --job JOB --from PARTY --seed SEED.nk [--seq N] [--time UNIXNANO] KIND [kind flags]
kinds: update (--round --params --value --weight [--grad]), hello (--schema --params --train --algo),
       emb (--to --round --dim --bytes|--rows --node-base --value)`

func parse(args []string) (options, error) {
	o := options{at: time.Now()}
	g := flag.NewFlagSet("gf-forge", flag.ContinueOnError)
	g.SetOutput(io.Discard)
	g.StringVar(&o.job, "job", "", "job id")
	g.StringVar(&o.from, "from", "", "the party signing (the seed's)")
	g.StringVar(&o.seed, "seed", "", "the party's NKey seed file (graphfed keys' <party>.nk)")
	g.Uint64Var(&o.seq, "seq", 0, "envelope sequence number (0: the current time in nanoseconds, unique per run)")
	var at int64
	g.Int64Var(&at, "time", 0, "envelope send time, unix nanoseconds (0: now)")
	if err := g.Parse(args); err != nil {
		return o, fmt.Errorf("%w\n%s", err, usage)
	}
	if g.NArg() < 1 {
		return o, errors.New(usage)
	}
	if o.job == "" || o.from == "" || o.seed == "" {
		return o, fmt.Errorf("--job, --from and --seed are required\n%s", usage)
	}
	if at != 0 {
		o.at = time.Unix(0, at)
	}
	if o.seq == 0 {
		o.seq = uint64(o.at.UnixNano())
	}
	o.kind = g.Arg(0)
	k := flag.NewFlagSet("gf-forge "+o.kind, flag.ContinueOnError)
	k.SetOutput(io.Discard)
	switch o.kind {
	case "update":
		k.Uint64Var(&o.round, "round", 1, "the update's round")
		k.IntVar(&o.params, "params", 0, "parameter count (the job's; required)")
		k.Float64Var(&o.value, "value", 0, "every parameter's value")
		k.Float64Var(&o.weight, "weight", 1, "the update's weight (training-set size)")
		k.BoolVar(&o.grad, "grad", false, "carry a gradient estimator of --params values equal to --value (CE-FedGNN)")
	case "hello":
		k.StringVar(&o.schema, "schema", "evil", "model schema hash stated")
		k.IntVar(&o.params, "params", 1, "parameter count stated")
		k.IntVar(&o.train, "train", 1, "training size declared")
		k.StringVar(&o.algo, "algo", "cefedgnn", "algorithm stated")
	case "emb":
		k.StringVar(&o.to, "to", "", "the bank it is addressed to (required)")
		k.Uint64Var(&o.round, "round", 1, "the embeddings' round")
		k.IntVar(&o.layer, "layer", 0, "the layer")
		k.IntVar(&o.dim, "dim", 64, "values per row")
		k.IntVar(&o.bytes, "bytes", 17_000_000, "about this many bytes of rows and ids (ignored with --rows)")
		k.IntVar(&o.rows, "rows", 0, "rows (0: from --bytes)")
		k.Int64Var(&o.nodeBase, "node-base", 1<<40, "first node id (the default is an account no bank holds)")
		k.Float64Var(&o.embValue, "value", 0.5, "every value")
	default:
		return o, fmt.Errorf("unknown kind %q\n%s", o.kind, usage)
	}
	if err := k.Parse(g.Args()[1:]); err != nil {
		return o, fmt.Errorf("%w\n%s", err, usage)
	}
	if k.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q\n%s", k.Args(), usage)
	}
	return o, nil
}

// forge builds and signs the envelope o asks for.
func forge(o options) (data []byte, subject string, err error) {
	signer, err := bus.LoadSigner(o.from, o.seed)
	if err != nil {
		return nil, "", err
	}
	env := bus.Envelope{Job: o.job, From: o.from, Seq: o.seq, Time: o.at.UnixNano()}
	var body any
	switch o.kind {
	case "update":
		if o.params < 1 {
			return nil, "", errors.New("update: --params must be the job's parameter count")
		}
		u := &update{Round: o.round, BaseRound: o.round - min(o.round, 1), Weight: o.weight, Params: fill(o.params, o.value)}
		if o.grad {
			u.Grad = fill(o.params, o.value)
		}
		env.Kind, env.Round, body = bus.KindUpdate, o.round, u
		subject = bus.Subject(o.job, bus.KindUpdate, o.from)
	case "hello":
		env.Kind, body = bus.KindHello, &bus.Hello{SchemaHash: o.schema, NumParams: o.params, TrainSize: o.train, Algo: o.algo}
		subject = bus.Subject(o.job, bus.KindHello, o.from)
	case "emb":
		if o.to == "" || o.dim < 1 {
			return nil, "", errors.New("emb: --to and a positive --dim are required")
		}
		rows := o.rows
		if rows <= 0 {
			rows = max(1, o.bytes/(4*o.dim+9)) // a float32 per value, an int64 id (msgpack: 9 bytes)
		}
		e := &embeddings{Round: o.round, Layer: o.layer, Dim: o.dim, NodeIDs: make([]int64, rows), Data: fill(rows*o.dim, o.embValue)}
		for i := range e.NodeIDs {
			e.NodeIDs[i] = o.nodeBase + int64(i)
		}
		env.Kind, env.Round, body = bus.KindEmb, o.round, e
		subject = bus.Subject(o.job, bus.KindEmb, o.from, o.to)
	}
	data, err = signer.Seal(env, body)
	return data, subject, err
}

func fill(n int, v float64) bus.Vector {
	x := make(bus.Vector, n)
	for i := range x {
		x[i] = float32(v)
	}
	return x
}
