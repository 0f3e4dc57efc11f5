package main

import (
	"fmt"
	"syscall"

	"github.com/rs/zerolog"
)

const connsHelp = "how parties reach the embedded server: tcp (a socket each, as separate processes would), in-process (in-memory pipes: no file descriptor per party, for thousands of clients) or auto (tcp unless the parties' sockets would not fit the open-file limit)"

// inProcessConns decides --conns for a simulation of parties parties. A
// TCP connection to the embedded server costs two descriptors in this
// process (client and server ends); auto keeps TCP while those, plus
// headroom for JetStream's files, fit the soft RLIMIT_NOFILE.
func inProcessConns(mode, natsURL string, parties int, log zerolog.Logger) (bool, error) {
	switch mode {
	case "tcp":
		return false, nil
	case "in-process":
		if natsURL != "" {
			return false, fmt.Errorf("--conns in-process needs the embedded server, not --nats %s", natsURL)
		}
		return true, nil
	case "auto", "":
		if natsURL != "" {
			return false, nil
		}
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return false, nil
		}
		need := uint64(2*parties + 512)
		if need <= lim.Cur {
			return false, nil
		}
		log.Info().Int("parties", parties).Uint64("need_fds", need).Uint64("nofile", lim.Cur).
			Msg("conns: in-process, as TCP connections would exceed the open-file limit")
		return true, nil
	}
	return false, fmt.Errorf("--conns %q: want tcp, in-process or auto", mode)
}
