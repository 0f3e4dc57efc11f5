// Command gf-tap is a by-hand test tool for issue 31 (scripts/byhand-issue31.sh):
// it subscribes to gf.<job>.> with a party's credentials and reports, per
// message kind, what crossed the wire into that party's account — above
// all whether any bank's update carried its parameters or gradient
// estimator in the clear. Run with the aggregator's seed it is the view of
// a curious aggregator:
//
//	gf-tap --nats nats://127.0.0.1:4222 --creds keys/aggregator.nk --job aml-1 > tap.json
//
// It prints one JSON object when it is stopped (SIGTERM, SIGINT) or after
// --for. Not part of graphfed's deployment.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/bus"
	"graphfed/deploy"
)

type report struct {
	Messages int            `json:"messages"`
	Kinds    map[string]int `json:"kinds"`
	// UpdatesInClear are updates whose parameters or gradient estimator
	// travelled in the clear; UpdatesMasked those that said Masked with
	// no vectors; ByReference updates whose body was a blob reference.
	UpdatesInClear int      `json:"updates_in_clear"`
	UpdatesMasked  int      `json:"updates_masked"`
	UpdatesOther   int      `json:"updates_other"`
	ClearFrom      []string `json:"clear_from,omitempty"`
	MaskedInputs   int      `json:"masked_inputs"`
	Unreadable     int      `json:"unreadable"`
}

func main() {
	url := flag.String("nats", "nats://127.0.0.1:4222", "server")
	creds := flag.String("creds", "", "the tapping party's NKey seed file")
	job := flag.String("job", "", "job id")
	dur := flag.Duration("for", 0, "stop after this long (0: at SIGTERM/SIGINT)")
	flag.Parse()
	if err := run(*url, *creds, *job, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "gf-tap:", err)
		os.Exit(1)
	}
}

func run(url, creds, job string, dur time.Duration) error {
	tr, err := deploy.Conn(deploy.ConnOptions{URL: url, Creds: creds, Name: "gf-tap"})
	if err != nil {
		return err
	}
	defer tr.Close()
	var mu sync.Mutex
	r := report{Kinds: map[string]int{}}
	sub, err := tr.Conn().Subscribe("gf."+job+".>", func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		r.Messages++
		env, err := bus.Open(m.Data)
		if err != nil {
			r.Unreadable++
			return
		}
		r.Kinds[string(env.Kind)]++
		fmt.Fprintf(os.Stderr, "%s kind=%s from=%s round=%d bytes=%d\n", time.Now().Format("15:04:05.000"), env.Kind, env.From, env.Round, len(m.Data))
		switch env.Kind {
		case bus.KindUpdate:
			var u bus.Update
			if err := env.UnmarshalBody(&u); err != nil {
				r.UpdatesOther++ // a blob reference or garbage
				return
			}
			switch {
			case u.Params.Len() > 0 || u.Grad.Len() > 0:
				r.UpdatesInClear++
				r.ClearFrom = append(r.ClearFrom, env.From)
			case u.Masked:
				r.UpdatesMasked++
			default:
				r.UpdatesOther++
			}
		case bus.KindSAMasked:
			r.MaskedInputs++
		}
	})
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	fmt.Fprintln(os.Stderr, "gf-tap: listening on", sub.Subject)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dur)
		defer cancel()
	}
	<-ctx.Done()
	mu.Lock()
	defer mu.Unlock()
	return json.NewEncoder(os.Stdout).Encode(r)
}
