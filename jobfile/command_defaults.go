package jobfile

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"graphfed/deploy"
)

// FlagGroup is a titled set of flags that commands register through one
// shared helper (the privacy flags, say). A defaults file's sections
// follow the groups, so a flag added to a helper lands in its section
// without a list of names.
type FlagGroup struct {
	Title string
	Flags *pflag.FlagSet
}

// DefaultsSpec asks for the defaults file of `graphfed Run --algo Algo`.
type DefaultsSpec struct {
	Run, Algo string
	// NewRoot builds the command tree whose command Run is documented;
	// its persistent flags are the "Global" section.
	NewRoot NewRoot
	// Groups title the shared flag sets, first group first where one
	// flag is in several.
	Groups []FlagGroup
}

// WriteCommandDefaults writes a complete job file for spec.Run and
// spec.Algo, every key commented out at its default (WriteDefaults),
// after checking the choice of command and algorithm. Hidden flags are
// left out: they are not a command's settings.
func WriteCommandDefaults(w io.Writer, spec DefaultsSpec) error {
	run, algo := spec.Run, spec.Algo
	if !slices.Contains(Commands(), run) {
		return fmt.Errorf("run --print-defaults: unknown --run %q (want %s)", run, strings.Join(Commands(), ", "))
	}
	if algo == "" {
		return fmt.Errorf("run --print-defaults: give --algo (%s)", strings.Join(Algorithms(), ", "))
	}
	if !slices.Contains(Algorithms(), algo) {
		return fmt.Errorf("run --print-defaults: unknown --algo %q (want %s)", algo, strings.Join(Algorithms(), ", "))
	}
	fs, err := CommandFlags(spec.NewRoot(), run)
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
	set := []Pair{{Key: RunKey, Value: run}, {Key: "algo", Value: algo}}
	if task := taskFor(fs, algo); task != "" {
		set = append(set, Pair{Key: "task", Value: task})
	}
	return WriteDefaults(w, header, set, flagSections(fs, spec.NewRoot().PersistentFlags(), "graphfed "+run, spec.Groups))
}

// Algorithms are the algorithms of every task, each once.
func Algorithms() []string {
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

// taskFor is the task to set beside algo when the command's default task
// lacks it (agent --task node with lpsfed: rec); "" when the default does.
func taskFor(fs *pflag.FlagSet, algo string) string {
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

// flagSections groups the visible flags of fs: the global flags, the
// command's own (titled own), then the shared groups and usage topics,
// each in the order the command registered its flags.
func flagSections(fs, global *pflag.FlagSet, own string, groups []FlagGroup) []Section {
	group := map[string]string{}
	for _, g := range groups {
		g.Flags.VisitAll(func(f *pflag.Flag) {
			if _, ok := group[groupKey(f)]; !ok {
				group[groupKey(f)] = g.Title
			}
		})
	}
	order := []string{"Global", own}
	bySection := map[string][]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
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
	var out []Section
	for _, t := range order {
		out = append(out, Section{Title: t, Flags: bySection[t]})
	}
	return out
}

// groupKey identifies a flag definition: commands share names with other
// meanings (agent's --durable is not the aggregator's).
func groupKey(f *pflag.Flag) string { return f.Name + "\x00" + f.Usage }

// usageTopic maps the first word of a usage string's "topic:" prefix
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
