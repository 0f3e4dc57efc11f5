package jobfile

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// testFlags stand in for a command's flags: one of each kind the
// commands use.
func testFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.String("scenario", "", "generated world")
	fs.Uint64("seed", 1, "seed")
	fs.String("out", "", "run directory")
	fs.Bool("json", false, "JSON report")
	fs.Duration("round-timeout", 30*time.Second, "round deadline")
	fs.Float64("delta", 1e-4, "privacy δ")
	fs.IntSlice("fanout", []int{5, 5}, "aml: neighbours per layer")
	fs.StringSlice("clients", nil, "client ids")
	fs.StringToString("slow", nil, "INDEX=FACTOR")
	fs.Var(&unsetSeed{}, "noise-seed", "privacy noise seed; unset: from the clock")
	return fs
}

// unsetSeed is a flag that holds nothing until given, as the commands'
// optional settings do: its default is "" and "" does not parse.
type unsetSeed struct{ v *uint64 }

func (u *unsetSeed) Set(s string) error {
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return err
	}
	u.v = &n
	return nil
}

func (u *unsetSeed) String() string {
	if u.v == nil {
		return ""
	}
	return strconv.FormatUint(*u.v, 10)
}

func (u *unsetSeed) Type() string { return "uint" }

func TestParseAndApply(t *testing.T) {
	cases := []struct {
		name, yaml string
		args       []string // command line, parsed before the file
		err        string   // the whole message, or its start if it ends in "…"
		check      map[string]string
		ungiven    string // a checked flag the file's key leaves ungiven
	}{
		{name: "scalars", yaml: "run: sim\nscenario: aml\nseed: 7\nout: runs/demo\njson: true\nround-timeout: 1m\ndelta: 1e-5\n",
			check: map[string]string{"scenario": "aml", "seed": "7", "out": "runs/demo", "json": "true", "round-timeout": "1m0s", "delta": "1e-05"}},
		{name: "unknown field has its line", yaml: "run: sim\nseed: 1\nsed: 2\n", err: "job.yaml:3: unknown field sed"},
		{name: "bad value has the flag's reason", yaml: "run: sim\n\nseed: abc\n",
			err: `job.yaml:3: field seed: invalid argument "abc" for "--seed" flag: strconv.ParseUint: parsing "abc": invalid syntax`},
		{name: "bad duration", yaml: "run: sim\nround-timeout: 30\n", err: `job.yaml:2: field round-timeout: invalid argument "30" for "--round-timeout" flag…`},
		{name: "bad bool", yaml: "run: sim\njson: yes\n", err: `job.yaml:2: field json: invalid argument "yes"…`},
		{name: "duplicate key", yaml: "run: sim\nseed: 1\nout: x\nseed: 2\n", err: "job.yaml:4: duplicate field seed (first at line 2)"},
		{name: "duplicate run", yaml: "run: sim\nrun: agent\n", err: "job.yaml:2: duplicate field run (first at line 1)"},
		{name: "missing run", yaml: "seed: 1\n", err: "job.yaml:1: missing field run (want sim, aggregator, agent)"},
		{name: "unknown run", yaml: "seed: 1\nrun: train\n", err: `job.yaml:2: field run: unknown command "train" (want sim, aggregator, agent)`},
		{name: "run not a scalar", yaml: "run: [sim]\n", err: "job.yaml:1: field run: want one of sim, aggregator, agent, not a list"},
		{name: "list for a scalar flag", yaml: "run: sim\nseed: [1, 2]\n", err: "job.yaml:2: field seed: a list, but --seed takes one uint64"},
		{name: "mapping for a scalar flag", yaml: "run: sim\nout:\n  dir: x\n", err: "job.yaml:2: field out: a mapping, but --out takes string"},
		{name: "nested list", yaml: "run: sim\nfanout: [[1, 2]]\n", err: "job.yaml:2: field fanout: want a scalar here, not a list"},
		{name: "null value", yaml: "run: sim\nout:\n", err: "job.yaml:2: field out: no value…"},
		{name: "empty string", yaml: "run: sim\nout: \"\"\n", check: map[string]string{"out": ""}},
		{name: "empty string leaves an unset flag unset", yaml: "run: sim\nnoise-seed: \"\"\n", check: map[string]string{"noise-seed": ""}, ungiven: "noise-seed"},
		{name: "an unset flag takes its values", yaml: "run: sim\nnoise-seed: 9\n", check: map[string]string{"noise-seed": "9"}},
		{name: "an unset flag refuses a bad value", yaml: "run: sim\nnoise-seed: x\n", err: `job.yaml:2: field noise-seed: invalid argument "x" for "--noise-seed" flag…`},
		{name: "flow list", yaml: "run: sim\nfanout: [3, 4, 2]\n", check: map[string]string{"fanout": "[3,4,2]"}},
		{name: "block list", yaml: "run: sim\nclients:\n  - bank-a\n  - \"bank,b\"\n", check: map[string]string{"clients": "[bank-a,\"bank,b\"]"}},
		{name: "bad list element has its line", yaml: "run: sim\nfanout:\n  - 3\n  - x\n", err: `job.yaml:4: field fanout: strconv.Atoi: parsing "x": invalid syntax`},
		{name: "scalar for a list flag splits as the flag does", yaml: "run: sim\nfanout: 10,5\n", check: map[string]string{"fanout": "[10,5]"}},
		{name: "empty list empties", yaml: "run: sim\nfanout: []\n", check: map[string]string{"fanout": "[]"}},
		{name: "mapping for a key=value flag", yaml: "run: sim\nslow: {3: 5, 1: 2}\n", check: map[string]string{"slow": "[1=2,3=5]"}},
		{name: "list for a key=value flag", yaml: "run: sim\nslow: [\"3=5\"]\n", check: map[string]string{"slow": "[3=5]"}},
		{name: "alias", yaml: "run: sim\nout: &d runs/x\nscenario: *d\n", check: map[string]string{"scenario": "runs/x"}},
		{name: "syntax error has its line", yaml: "run: sim\nseed: 1\n  out: x\n", err: "job.yaml:3: mapping values are not allowed in this context"},
		{name: "two documents", yaml: "run: sim\n---\nrun: agent\n", err: "job.yaml:2: a second YAML document; a job file holds one"},
		{name: "top level list", yaml: "- run: sim\n", err: "job.yaml:1: want a mapping of settings (key: value), not a list"},
		{name: "empty file", yaml: "# nothing\n", err: "job.yaml: empty job file; want at least run: sim, aggregator, agent"},
		{name: "key not a scalar", yaml: "run: sim\n[a]: 1\n", err: "job.yaml:2: a key is a list; want a flag name"},
		{name: "flag on the command line wins", yaml: "run: sim\nseed: 1\nout: runs/demo\nfanout: [1, 1]\n", args: []string{"--seed", "2", "--fanout", "7"},
			check: map[string]string{"seed": "2", "out": "runs/demo", "fanout": "[7]"}},
		{name: "a bad key loses to nothing: flags override values, not names", yaml: "run: sim\nseed: 1\nsede: 3\n", args: []string{"--seed", "2"},
			err: "job.yaml:3: unknown field sede"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := testFlags()
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			j, err := Parse("job.yaml", []byte(tc.yaml))
			if err == nil {
				err = j.Apply(fs, func(f *pflag.Flag) bool { return f.Changed })
			}
			if tc.err != "" {
				if err == nil {
					t.Fatalf("no error, want %q", tc.err)
				}
				var pe *Error
				if !errors.As(err, &pe) {
					t.Errorf("error %T is not a *jobfile.Error", err)
				}
				want, prefix := strings.CutSuffix(tc.err, "…")
				if got := err.Error(); got != want && !(prefix && strings.HasPrefix(got, want)) {
					t.Errorf("error\n  %s\nwant\n  %s", got, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if j.Run != "sim" {
				t.Errorf("run = %q", j.Run)
			}
			for name, want := range tc.check {
				f := fs.Lookup(name)
				if got := f.Value.String(); got != want {
					t.Errorf("--%s = %s, want %s", name, got, want)
				}
				if f.Changed == (name == tc.ungiven) {
					t.Errorf("--%s: given %v after the file", name, f.Changed)
				}
			}
		})
	}
}

// A file's keys are set as given flags, in file order, and a key left out
// keeps its default and stays not given.
func TestApplyMarksOnlyItsKeys(t *testing.T) {
	j, err := Parse("j.yaml", []byte("run: agent\nout: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := testFlags()
	if err := j.Check(fs); err != nil {
		t.Fatal(err)
	}
	if fs.Changed("seed") || !fs.Changed("out") || j.Run != "agent" || j.RunLine != 1 {
		t.Errorf("seed given %v, out given %v, run %q at line %d", fs.Changed("seed"), fs.Changed("out"), j.Run, j.RunLine)
	}
}

// Every default WriteDefaults prints reads back, uncommented, as the
// flag's default.
func TestWriteDefaultsReadsBack(t *testing.T) {
	fs := testFlags()
	var all []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) { all = append(all, f) })
	var b strings.Builder
	if err := WriteDefaults(&b, []string{"a header"}, []Pair{{RunKey, "sim"}, {"scenario", "aml"}},
		[]Section{{Title: "all", Flags: all}}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if strings.Contains(text, "#scenario:") {
		t.Errorf("a key set above is repeated commented out:\n%s", text)
	}
	uncommented := UncommentKeys(text)
	j, err := Parse("defaults.yaml", []byte(uncommented))
	if err != nil {
		t.Fatalf("%v\n%s", err, uncommented)
	}
	back := testFlags()
	if err := j.Check(back); err != nil {
		t.Fatalf("%v\n%s", err, uncommented)
	}
	back.VisitAll(func(f *pflag.Flag) {
		if f.Name != "scenario" && f.Value.String() != f.DefValue {
			t.Errorf("--%s reads back as %s, default %s", f.Name, f.Value.String(), f.DefValue)
		}
		// An unset flag's key ("") leaves it ungiven.
		if wantGiven := f.Name != "noise-seed"; f.Changed != wantGiven {
			t.Errorf("--%s: given %v after its key in\n%s", f.Name, f.Changed, text)
		}
	})
}
