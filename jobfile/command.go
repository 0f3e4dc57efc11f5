package jobfile

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NewRoot builds a fresh command tree (graphfed's root). A job is checked
// and run on fresh trees so that no earlier parse is left in their flags.
type NewRoot func() *cobra.Command

// RunFile runs the job file at path: it checks the whole file against the
// command the file names, then runs that command on a fresh root with
// args, the command line after the file. The file's keys are set after
// args are parsed, on the flags args left alone, so the command line wins.
func RunFile(ctx context.Context, newRoot NewRoot, path string, args []string, stdout, stderr io.Writer) error {
	job, err := Load(path)
	if err != nil {
		return err
	}
	fs, err := CommandFlags(newRoot(), job.Run)
	if err != nil {
		return err
	}
	if err := job.Check(fs); err != nil {
		return err
	}
	root := job.Root(newRoot, args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root.ExecuteContext(ctx)
}

// Root is a fresh root that runs j's command with args and then j's keys
// for the flags args left alone. It does not print its errors: the
// caller's root prints them once.
func (j *Job) Root(newRoot NewRoot, args []string) *cobra.Command {
	root := newRoot()
	root.SilenceErrors = true
	pre := root.PersistentPreRunE
	// Root's persistent pre-run comes after the flags are parsed and
	// before the command's own pre-run (privacy resolution), its
	// required-flag check and its run.
	root.PersistentPreRunE = func(c *cobra.Command, cargs []string) error {
		if err := j.Apply(c.Flags(), func(f *pflag.Flag) bool { return f.Changed }); err != nil {
			return err
		}
		if pre == nil {
			return nil
		}
		return pre(c, cargs)
	}
	root.SetArgs(append([]string{j.Run}, args...))
	return root
}

// CommandFlags are the flags of root's command name, the root's
// persistent ones included, in the order they were registered.
func CommandFlags(root *cobra.Command, name string) (*pflag.FlagSet, error) {
	c, err := FindCommand(root, name)
	if err != nil {
		return nil, err
	}
	c.InheritedFlags() // merges the root's persistent flags into c.Flags()
	fs := c.Flags()
	fs.SortFlags = false
	return fs, nil
}

// FindCommand is root's subcommand name.
func FindCommand(root *cobra.Command, name string) (*cobra.Command, error) {
	c, _, err := root.Find([]string{name})
	if err != nil || c == root {
		return nil, fmt.Errorf("run: no command %q", name)
	}
	return c, nil
}
