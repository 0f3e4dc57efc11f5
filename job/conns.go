package job

import (
	"fmt"
	"syscall"

	"github.com/rs/zerolog"
)

// ConnsHelp says what the modes are, for a flag's help.
const ConnsHelp = "how parties reach the embedded server: tcp (a socket each, as separate processes would), in-process (in-memory pipes: no file descriptor per party, for thousands of clients) or auto (tcp unless the parties' sockets would not fit the open-file limit)"

// Connection modes of a simulation (InProcessConns).
const (
	ConnsAuto      = "auto"
	ConnsTCP       = "tcp"
	ConnsInProcess = "in-process"
)

// InProcessConns decides how a simulation of parties parties connects to
// its embedded server: mode tcp or in-process as told, and auto (or "")
// in-process exactly when TCP would not fit the open-file limit. Over TCP
// every party costs two descriptors in the process (client and server
// ends), and 10,000 parties exceed a typical 20,000 limit; nats.go's
// RetryOnFailedConnect then hides the failed dial as a request that times
// out 30 s later. An external server (natsURL) is always TCP.
func InProcessConns(mode, natsURL string, parties int, log zerolog.Logger) (bool, error) {
	switch mode {
	case ConnsTCP:
		return false, nil
	case ConnsInProcess:
		if natsURL != "" {
			return false, fmt.Errorf("--conns in-process needs the embedded server, not --nats %s", natsURL)
		}
		return true, nil
	case ConnsAuto, "":
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
