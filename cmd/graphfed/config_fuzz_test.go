package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"graphfed/aggregator"
)

// Fuzz targets for what the CLI reads besides datasets: the aggregator's
// --config file (audit's --rho list: audit.FuzzParseRho). Run one with
//
//	go test ./cmd/graphfed -run XXX -fuzz '^FuzzAggregatorConfig$' -fuzztime 10m -parallel 1

// FuzzAggregatorConfig: merging a --config file never panics; it fails
// exactly when the file is not JSON of the right shape or its round_timeout
// is not a duration; otherwise every setting comes from the file when the
// file sets it and its flag was not given, and keeps its flag value
// otherwise. The merged settings, written back as a config file, merge to
// the same settings, and the round policy built from them either validates
// or is refused, without panicking.
func FuzzAggregatorConfig(f *testing.F) {
	f.Add([]byte(`{"algo":"cefedgnn","rounds":20,"min_clients":3,"quorum":2,"round_timeout":"45s","staleness":"polynomial","stale_factor":0.25,"stale_a":0.5,"seed":7,"clients":["bank-1","bank-2"]}`), uint16(0))
	f.Add([]byte(`{"algo":"fedavg","rounds":5}`), uint16(0b11))
	f.Add([]byte(`{"round_timeout":"1h2m3.5s","staleness":"constant","stale_factor":2}`), uint16(0b1000000000))
	f.Add([]byte(`{"round_timeout":"-5s","rounds":-1,"quorum":-2}`), uint16(0))
	f.Add([]byte(`{"round_timeout":"soon"}`), uint16(0))
	f.Add([]byte(`{"Rounds":3,"ROUNDS":4,"unknown":true}`), uint16(0))
	f.Add([]byte(`{"seed":18446744073709551615,"clients":[]}`), uint16(0))
	f.Add([]byte(`[]`), uint16(0))
	f.Add([]byte(`null`), uint16(0))
	// Files rewritten for every input (a worker runs one at a time).
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, given uint16) {
		cmd := newAggregatorCmd(&globalFlags{})
		// Flags given on the command line, chosen by the bits of given.
		flagVals := []struct{ name, val string }{{"algo", "local"}, {"rounds", "9"}, {"min-clients", "4"}, {"quorum", "1"},
			{"staleness", "constant"}, {"stale-factor", "0.75"}, {"stale-a", "2"}, {"seed", "11"}, {"clients", "x,y"}, {"round-timeout", "9s"}}
		for i, fv := range flagVals {
			if given&(1<<i) != 0 {
				if err := cmd.Flags().Set(fv.name, fv.val); err != nil {
					t.Fatal(err)
				}
			}
		}
		fl := cmd.Flags()
		fc := aggregatorFile{Algo: fl.Lookup("algo").Value.String(), Rounds: mustAtoi(t, fl.Lookup("rounds").Value.String()),
			MinClients: mustAtoi(t, fl.Lookup("min-clients").Value.String()), Quorum: mustAtoi(t, fl.Lookup("quorum").Value.String()),
			Staleness: fl.Lookup("staleness").Value.String()}
		fc.StaleFactor, _ = fl.GetFloat64("stale-factor")
		fc.StaleA, _ = fl.GetFloat64("stale-a")
		fc.Seed, _ = fl.GetUint64("seed")
		fc.Clients, _ = fl.GetStringSlice("clients")
		timeout, _ := fl.GetDuration("round-timeout")
		before, beforeTimeout := fc, timeout

		path := filepath.Join(dir, "aggregator.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		err := mergeAggregatorFile(cmd, path, &fc, &timeout)

		var file aggregatorFile
		jerr := json.Unmarshal(data, &file)
		var fileTimeout time.Duration
		var derr error
		if jerr == nil && file.RoundTimeout != "" {
			fileTimeout, derr = time.ParseDuration(file.RoundTimeout)
		}
		if (err != nil) != (jerr != nil || derr != nil) {
			t.Fatalf("merge error %v; JSON error %v, duration error %v", err, jerr, derr)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "aggregator: config") {
				t.Fatalf("error without its context: %v", err)
			}
			return
		}
		// The expected merge, setting by setting.
		want, wantTimeout := before, beforeTimeout
		pick := func(flag string, fileSets bool, apply func()) {
			if fileSets && !fl.Changed(flag) {
				apply()
			}
		}
		pick("algo", file.Algo != "", func() { want.Algo = file.Algo })
		pick("rounds", file.Rounds != 0, func() { want.Rounds = file.Rounds })
		pick("min-clients", file.MinClients != 0, func() { want.MinClients = file.MinClients })
		pick("quorum", file.Quorum != 0, func() { want.Quorum = file.Quorum })
		pick("staleness", file.Staleness != "", func() { want.Staleness = file.Staleness })
		pick("stale-factor", file.StaleFactor != 0, func() { want.StaleFactor = file.StaleFactor })
		pick("stale-a", file.StaleA != 0, func() { want.StaleA = file.StaleA })
		pick("seed", file.Seed != 0, func() { want.Seed = file.Seed })
		pick("clients", len(file.Clients) > 0, func() { want.Clients = file.Clients })
		pick("round-timeout", file.RoundTimeout != "", func() { wantTimeout = fileTimeout })
		if !sameAggregatorFile(fc, want) || timeout != wantTimeout {
			t.Fatalf("merged %+v %v, want %+v %v", fc, timeout, want, wantTimeout)
		}

		// Written back as a file, the merged settings merge to themselves.
		out := fc
		out.RoundTimeout = timeout.String()
		raw, err := json.Marshal(out)
		if err != nil {
			t.Fatalf("cannot write the merged settings: %v", err)
		}
		path2 := filepath.Join(dir, "again.json")
		if err := os.WriteFile(path2, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd2 := newAggregatorCmd(&globalFlags{})
		fc2, timeout2 := aggregatorFile{}, time.Duration(0)
		if err := mergeAggregatorFile(cmd2, path2, &fc2, &timeout2); err != nil {
			t.Fatalf("merged settings written as %s do not merge: %v", raw, err)
		}
		// Zero values are "unset" in a file, so compare what the file can say.
		if (timeout != 0 && timeout2 != timeout) || (fc.Algo != fc2.Algo) || (fc.Rounds != fc2.Rounds) || fc.Seed != fc2.Seed ||
			!(fc.StaleFactor == fc2.StaleFactor || math.IsNaN(fc.StaleFactor)) || (len(fc.Clients) > 0 && !slices.Equal(fc.Clients, fc2.Clients)) {
			t.Fatalf("settings %+v %v came back as %+v %v", fc, timeout, fc2, timeout2)
		}

		cfg := aggregator.Config{Algo: fc.Algo, Rounds: fc.Rounds, MinClients: fc.MinClients, Quorum: fc.Quorum, RoundTimeout: timeout,
			Staleness: aggregator.Staleness{Policy: fc.Staleness, Factor: fc.StaleFactor, A: fc.StaleA}}
		if cfg.Validate() == nil {
			if _, err := aggregator.NewMachine(cfg); err != nil {
				t.Fatalf("valid config refused by NewMachine: %v", err)
			}
		}
	})
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func sameAggregatorFile(a, b aggregatorFile) bool {
	return a.Algo == b.Algo && a.Rounds == b.Rounds && a.MinClients == b.MinClients && a.Quorum == b.Quorum &&
		a.Staleness == b.Staleness && a.StaleFactor == b.StaleFactor && a.StaleA == b.StaleA && a.Seed == b.Seed &&
		slices.Equal(a.Clients, b.Clients)
}
