package aggregator

// Observer sees every step of the server's machine: the event fed to it,
// the round that was open before (0 before the first) and the actions it
// returned. A metrics recorder (the telemetry package) derives its
// counters from them, so that the machine stays free of I/O and the
// figures are the decisions themselves. It is called on the server's
// goroutine, ticks included, after the step's actions are accounted and
// before they are carried out; it must not block. Nil: none.
type Observer interface {
	Stepped(ev Event, round uint64, acts []Action)
}
