package bus

import "context"

// AwaitSubscriptions flushes tr until the server has confirmed everything
// sent before, the subscriptions above all: a message published to a
// subject before its subscription is registered goes unheard. One flush
// has a timeout (Flush's 10 s when ctx has no deadline), and a server
// busy with 10,000 parties subscribing at once may take longer, which is
// no reason for a party to give up: it tries again until ctx ends, telling
// slow (which may be nil) about each timeout.
func AwaitSubscriptions(ctx context.Context, tr Transport, slow func(error)) error {
	for {
		err := tr.Flush(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if slow != nil {
			slow(err)
		}
	}
}
