package operator

import (
	"fmt"
	"io"

	"github.com/rs/zerolog"
)

// Safe by default: the server, the aggregator and the agents refuse to run
// open (no login, no signatures) unless told --insecure. An open job is
// readable and forgeable by anyone who reaches the server: every update
// and model can be captured, any party's update forged, the ledger stream
// deleted and recreated empty. `graphfed sim` runs on its own loopback
// server and needs none of this.

// KeysHint says how to make a job's credentials (docs/DEPLOY.md).
const KeysHint = "generate them with `graphfed keys --job JOB --banks BANK1,BANK2,... --out DIR` " +
	"(one NKey seed per party, the job's keyring.json and server.conf; see docs/DEPLOY.md)"

// RequireCredentials refuses to run `graphfed what` without credentials
// (have false) unless insecure, and then warns loudly on warn and in the
// log. use says which flags carry the credentials.
func RequireCredentials(what string, have, insecure bool, use string, warn io.Writer, log zerolog.Logger) error {
	switch {
	case have:
		return nil
	case !insecure:
		return fmt.Errorf("graphfed %s: refusing to run without credentials (%s): anyone who reaches the server could read "+
			"every update and forge any party's messages. To set up credentials, %s. To run open anyway on a trusted "+
			"machine, pass --insecure", what, use, KeysHint)
	}
	msg := fmt.Sprintf("graphfed %s runs with --insecure, without credentials (%s): anyone who reaches the server can "+
		"read every update and model, forge any party's messages and delete the privacy ledger", what, use)
	fmt.Fprintf(warn, "\n*** WARNING: INSECURE ***\n%s.\n\n", msg)
	log.Warn().Bool("insecure", true).Msg(msg)
	return nil
}
