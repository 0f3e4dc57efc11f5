package jobfile

import (
	"slices"

	"github.com/spf13/pflag"
)

// Settings is every flag's value by name, and the sorted names of those
// given (on the command line or by a job file): what a run directory's
// summary records of the command that made it.
func Settings(fs *pflag.FlagSet) (map[string]string, []string) {
	all := map[string]string{}
	var changed []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		all[f.Name] = f.Value.String()
		if f.Changed {
			changed = append(changed, f.Name)
		}
	})
	slices.Sort(changed)
	return all, changed
}
