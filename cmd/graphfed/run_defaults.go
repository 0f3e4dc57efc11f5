package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"graphfed/deploy"
	"graphfed/jobfile"
)

// printDefaults is `graphfed run --print-defaults --algo ALGO [--run CMD]`:
// a complete job file for CMD on stdout, every key at its default.
func printDefaults(cmd *cobra.Command, args []string) error {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(cmd.ErrOrStderr())
	fs.AddFlagSet(cmd.Flags())
	fs.AddFlagSet(cmd.InheritedFlags())
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run --print-defaults: unexpected argument %q", fs.Arg(0))
	}
	run, _ := fs.GetString("run")
	algo, _ := fs.GetString("algo")
	if !slices.Contains(jobfile.Commands(), run) {
		return fmt.Errorf("run --print-defaults: unknown --run %q (want %s)", run, strings.Join(jobfile.Commands(), ", "))
	}
	if algo == "" {
		return fmt.Errorf("run --print-defaults: give --algo (%s)", strings.Join(knownAlgos(), ", "))
	}
	if !slices.Contains(knownAlgos(), algo) {
		return fmt.Errorf("run --print-defaults: unknown --algo %q (want %s)", algo, strings.Join(knownAlgos(), ", "))
	}
	sections, err := flagSections(run)
	if err != nil {
		return err
	}
	header := []string{
		fmt.Sprintf("graphfed job file: `graphfed %s --algo %s` with every setting at its default.", run, algo),
		"Run it with: graphfed run FILE.yaml [flags]; flags given on the command line override the keys here.",
		fmt.Sprintf("Every key is a flag of `graphfed %s`, with the same name and the same values (docs/JOBS.md).", run),
		"Keys are commented out (#key: default): setting a key is giving its flag. A key left out, or at 0 or empty, takes the job library's " +
			"default for the task that runs (its algorithm, rounds, local epochs, round timeout); an explicit seed seeds the privacy noise too. " +
			"Uncomment the lines you mean to set. Paths are relative to the working directory.",
	}
	set := []jobfile.Pair{{Key: jobfile.RunKey, Value: run}, {Key: "algo", Value: algo}}
	if task := taskFor(run, algo); task != "" {
		set = append(set, jobfile.Pair{Key: "task", Value: task})
	}
	return jobfile.WriteDefaults(cmd.OutOrStdout(), header, set, sections)
}

// taskFor is the task to set beside algo when the command's default task
// lacks it (agent --task node with lpsfed: rec); "" when the default does.
func taskFor(run, algo string) string {
	fs, err := commandFlags(run)
	if err != nil {
		return ""
	}
	f := fs.Lookup("task")
	if f == nil || f.DefValue == "" || deploy.CheckTaskAlgo(f.DefValue, algo) == nil {
		return ""
	}
	for _, t := range deploy.Tasks() {
		if slices.Contains(deploy.Algorithms(t), algo) {
			return t
		}
	}
	return ""
}

// knownAlgos are the algorithms of every task, each once.
func knownAlgos() []string {
	var out []string
	for _, t := range deploy.Tasks() {
		for _, a := range deploy.Algorithms(t) {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// flagGroups are the flag sets the commands register through shared
// helpers; the sections of a defaults file follow them, so a flag added to
// a helper lands in its section without a list of names here.
func flagGroups() []struct {
	title    string
	register func(*cobra.Command)
} {
	return []struct {
		title    string
		register func(*cobra.Command)
	}{
		{"Rounds: adaptive deadline", func(c *cobra.Command) { registerDeadlineFlags(c, new(float64), new(time.Duration)) }},
		{"Asynchrony", func(c *cobra.Command) { (&asyncFlags{}).register(c) }},
		{"Robust aggregation", func(c *cobra.Command) { (&robustFlags{}).register(c.Flags()) }},
		{"Privacy", func(c *cobra.Command) { (&privacyFlags{}).register(c.Flags()) }},
		{"Durability (JetStream)", func(c *cobra.Command) { (&recoveryFlags{}).register(c) }},
		{"Large messages (object store)", func(c *cobra.Command) { (&blobFlags{}).register(c) }},
		{"AML", func(c *cobra.Command) { (&simFlags{}).registerAML(c) }},
		{"Recommendation (LPSFed)", func(c *cobra.Command) { (&simFlags{}).registerRec(c) }},
		{"FedGSP", func(c *cobra.Command) { (&fedgspFlags{}).registerServer(c) }},
		{"Process", func(c *cobra.Command) { registerMemoryLimit(c, 0, "") }},
	}
}

// usageTopics map the first word of a usage string's "topic:" prefix
// (agent's "aml: ...", "rec: ...") to a section.
func usageTopic(usage string) string {
	head, _, ok := strings.Cut(usage, ":")
	if !ok || len(head) > 40 {
		return ""
	}
	words := strings.FieldsFunc(head, func(r rune) bool { return r == ' ' || r == '(' })
	if len(words) == 0 {
		return ""
	}
	switch strings.ToLower(words[0]) {
	case "aml":
		return "AML"
	case "rec", "recommendation", "lpsfed":
		return "Recommendation (LPSFed)"
	case "node":
		return "Node classification"
	case "fedgsp":
		return "FedGSP"
	}
	return ""
}

// groupKey identifies a flag definition: commands share names with other
// meanings (agent's --durable is not the aggregator's).
func groupKey(f *pflag.Flag) string { return f.Name + "\x00" + f.Usage }

// flagSections groups the flags of `graphfed run`: the global flags, the
// command's own, then the shared groups and usage topics, each in the
// order the command registered its flags.
func flagSections(run string) ([]jobfile.Section, error) {
	fs, err := commandFlags(run)
	if err != nil {
		return nil, err
	}
	group := map[string]string{}
	for _, g := range flagGroups() {
		c := &cobra.Command{Use: "scratch"}
		g.register(c)
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if _, ok := group[groupKey(f)]; !ok {
				group[groupKey(f)] = g.title
			}
		})
	}
	global := newRootCmd().PersistentFlags()
	own := "graphfed " + run
	order := []string{"Global", own}
	bySection := map[string][]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) {
		title := own
		switch {
		case global.Lookup(f.Name) != nil:
			title = "Global"
		case group[groupKey(f)] != "":
			title = group[groupKey(f)]
		case usageTopic(f.Usage) != "":
			title = usageTopic(f.Usage)
		}
		if !slices.Contains(order, title) {
			order = append(order, title)
		}
		bySection[title] = append(bySection[title], f)
	})
	var out []jobfile.Section
	for _, t := range order {
		out = append(out, jobfile.Section{Title: t, Flags: bySection[t]})
	}
	return out, nil
}
