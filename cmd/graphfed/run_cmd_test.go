package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"graphfed/deploy"
	"graphfed/jobfile"
)

// exampleJobs are the job files under examples/.
func exampleJobs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.yaml", "*/*.yaml"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "examples", pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

// Every example parses and every key and value suits the command it runs.
func TestExampleJobFilesCheck(t *testing.T) {
	files := exampleJobs(t)
	want := map[string]string{"aml-demo.yaml": "sim", "cora-cefedgnn.yaml": "sim", "lpsfed-gowalla.yaml": "sim", "fedgsp.yaml": "sim",
		"aggregator.yaml": "aggregator", "bank-0.yaml": "agent", "bank-1.yaml": "agent", "bank-2.yaml": "agent"}
	seen := map[string]bool{}
	for _, f := range files {
		job, err := jobfile.Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if fs, err := jobfile.CommandFlags(newRootCmd(), job.Run); err != nil {
			t.Errorf("%v", err)
		} else if err := job.Check(fs); err != nil {
			t.Errorf("%v", err)
		}
		base := filepath.Base(f)
		if w, ok := want[base]; ok && job.Run != w {
			t.Errorf("%s runs %s, want %s", f, job.Run, w)
		}
		seen[base] = true
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("examples/ has no %s", name)
		}
	}
}

// execRoot runs graphfed with args in this process: its error and stdout.
func execRoot(args ...string) (string, error) {
	root := newRootCmd()
	root.SilenceErrors = true
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// The defaults file of every command and algorithm parses and checks as
// printed, and with every key uncommented it sets every flag of the
// command to its default (the chosen algorithm aside); hidden flags have
// no key.
func TestPrintDefaultsReadsBackForEveryAlgo(t *testing.T) {
	dir := t.TempDir()
	for _, run := range jobfile.Commands() {
		for _, algo := range jobfile.Algorithms() {
			out, err := execRoot("run", "--print-defaults", "--algo", algo, "--run", run)
			if err != nil {
				t.Fatalf("%s %s: %v", run, algo, err)
			}
			for i, text := range []string{out, jobfile.UncommentKeys(out)} {
				path := filepath.Join(dir, run+"-"+algo+".yaml")
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				job, err := jobfile.Load(path)
				if err != nil {
					t.Fatalf("%v\n%s", err, text)
				}
				fs, err := jobfile.CommandFlags(newRootCmd(), run)
				if err != nil {
					t.Fatal(err)
				}
				if err := job.Check(fs); err != nil {
					t.Fatalf("%v\n%s", err, text)
				}
				if job.Run != run || fs.Lookup("algo").Value.String() != algo {
					t.Errorf("%s: run %s algo %s, want %s %s", path, job.Run, fs.Lookup("algo").Value, run, algo)
				}
				// The task is set where the command's default lacks the algorithm.
				if task, _ := fs.GetString("task"); run == "agent" && deploy.CheckTaskAlgo(task, algo) != nil {
					t.Errorf("agent --algo %s: task %s lacks it", algo, task)
				}
				if i == 0 {
					continue
				}
				fs.VisitAll(func(f *pflag.Flag) {
					if f.Hidden {
						if f.Changed || strings.Contains(out, "#"+f.Name+":") {
							t.Errorf("%s --algo %s: a key for the hidden --%s", run, algo, f.Name)
						}
						return
					}
					// An unset setting's key ("") leaves its flag ungiven.
					if !f.Changed && f.DefValue != "" {
						t.Errorf("%s --algo %s: no key for --%s", run, algo, f.Name)
					}
					if f.Name != "algo" && f.Name != "task" && f.Value.String() != f.DefValue {
						t.Errorf("%s --algo %s: key %s reads back as %s, default %s", run, algo, f.Name, f.Value, f.DefValue)
					}
				})
			}
		}
	}
}

func TestPrintDefaultsRefusesBadChoices(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--print-defaults"},
		{"run", "--print-defaults", "--algo", "fedsgd"},
		{"run", "--print-defaults", "--algo", "fedavg", "--run", "train"},
	} {
		if _, err := execRoot(args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// writeJob writes a job file into a temporary directory.
func writeJob(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The file's keys reach the command as given flags, after the command
// line and before the command's own checks (the aggregator's required
// --job comes from the file); a flag on the command line wins.
func TestRunFileKeysAndOverrides(t *testing.T) {
	cases := []struct {
		name, yaml string
		args       []string
		want       map[string]string
	}{
		{name: "sim", yaml: "run: sim\nscenario: aml\nseed: 1\nout: runs/demo\nlog-level: warn\nfanout: [3, 2]\nslow: {1: 4}\n",
			args: []string{"--seed", "2", "--json"},
			want: map[string]string{"scenario": "aml", "seed": "2", "out": "runs/demo", "log-level": "warn", "json": "true", "fanout": "[3,2]", "slow": "[1=4]"}},
		{name: "aggregator needs its job", yaml: "run: aggregator\njob: aml-1\nclients: [bank-0, bank-1]\nrounds: 3\n",
			args: []string{"--rounds", "4"},
			want: map[string]string{"job": "aml-1", "clients": "[bank-0,bank-1]", "rounds": "4"}},
		{name: "agent", yaml: "run: agent\njob: aml-1\ntask: aml\ndata: banks/bank-0\ndurable: true\n",
			want: map[string]string{"job": "aml-1", "task": "aml", "data": "banks/bank-0", "durable": "true"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, err := jobfile.Load(writeJob(t, tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			root := job.Root(newRootCmd, tc.args)
			target, err := jobfile.FindCommand(root, job.Run)
			if err != nil {
				t.Fatal(err)
			}
			ran := false
			target.RunE = func(c *cobra.Command, _ []string) error {
				ran = true
				for name, want := range tc.want {
					f := c.Flags().Lookup(name)
					if f == nil || f.Value.String() != want || !f.Changed {
						t.Errorf("--%s = %v, want %s given", name, f.Value, want)
					}
				}
				if c.Flags().Changed("quorum") {
					t.Error("--quorum is given though neither the file nor the command line has it")
				}
				return nil
			}
			root.SilenceErrors = true
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if !ran {
				t.Fatal("the command did not run")
			}
		})
	}
}

// A misspelt key and a bad value stop `graphfed run` with FILE:LINE.
func TestRunReportsFileLineField(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"run: sim\nscenario: aml\nsede: 1\n", ":3: unknown field sede"},
		{"run: sim\nscenario: aml\n\nrounds: many\n", `:4: field rounds: invalid argument "many" for "--rounds" flag`},
		{"run: aggregator\nscenario: aml\n", ":2: unknown field scenario"},
		{"run: sim\nlog-level: [warn]\n", ":2: field log-level: a list, but --log-level takes one string"},
	}
	for _, tc := range cases {
		path := writeJob(t, tc.yaml)
		_, err := execRoot("run", path)
		if err == nil || !strings.HasPrefix(err.Error(), path+tc.want) {
			t.Errorf("error %v, want %s%s...", err, path, tc.want)
		}
	}
	if _, err := execRoot("run", "--seed", "2", "job.yaml"); err == nil || !strings.Contains(err.Error(), "job file comes first") {
		t.Errorf("flags before the file: %v", err)
	}
}
