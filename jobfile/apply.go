package jobfile

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Apply sets the job's settings on fs, the flags of the command it runs,
// through each flag's own parser: a key accepts what its flag accepts and
// fails with the flag's reason. A flag for which keep reports true (given
// on the command line) is left alone: flags override the file. keep may
// be nil. Setting a key is the same as giving its flag, so fs.Changed
// reports it.
func (j *Job) Apply(fs *pflag.FlagSet, keep func(*pflag.Flag) bool) error {
	for _, s := range j.Settings {
		f := fs.Lookup(s.Key)
		if f == nil {
			return &Error{File: j.File, Line: s.Line, Msg: "unknown field " + s.Key}
		}
		if keep != nil && keep(f) {
			continue
		}
		if err := j.apply(fs, f, s); err != nil {
			return err
		}
	}
	return nil
}

// Check is Apply on flags that hold nothing yet: it reports the first
// unknown key or bad value.
func (j *Job) Check(fs *pflag.FlagSet) error { return j.Apply(fs, nil) }

func (j *Job) apply(fs *pflag.FlagSet, f *pflag.Flag, s Setting) error {
	bad := func(line int, msg string) error {
		return &Error{File: j.File, Line: line, Msg: fmt.Sprintf("field %s: %s", s.Key, msg)}
	}
	sv, isList := f.Value.(pflag.SliceValue)
	isMap := IsMapFlag(f)
	switch {
	case s.Shape == List && !isList && !isMap:
		return bad(s.Line, fmt.Sprintf("a list, but --%s takes one %s", f.Name, f.Value.Type()))
	case s.Shape == Map && !isMap:
		return bad(s.Line, fmt.Sprintf("a mapping, but --%s takes %s", f.Name, f.Value.Type()))
	case len(s.Values) == 0:
		// An empty list empties a list flag; a key=value flag has no
		// way to be emptied, so an empty mapping is only its default.
		if isList {
			if err := sv.Replace(nil); err != nil {
				return bad(s.Line, err.Error())
			}
			f.Changed = true
			return nil
		}
		if f.Value.String() != "[]" {
			return bad(s.Line, "an empty mapping cannot clear --"+f.Name+"; leave the key out for the default")
		}
		f.Changed = true
		return nil
	}
	for i, v := range s.Values {
		// The first value replaces the default, as the first flag on a
		// command line does; later ones add to it.
		var err error
		if i == 0 || !isList {
			err = fs.Set(f.Name, v.Text)
		} else {
			err = sv.Append(v.Text)
		}
		if err != nil && isUnset(f, s) {
			// "" on a flag whose default is "" (a setting the job library
			// resolves when it stays unset, --seed) is that default: the
			// key is there and leaves the flag ungiven, as a defaults file
			// with its keys uncommented says.
			return nil
		}
		if err != nil {
			return bad(v.Line, err.Error())
		}
	}
	if isList && s.Shape == List {
		// Each element of a YAML list is one element, even with a comma
		// in it (Set splits its argument as the command line does).
		texts := make([]string, len(s.Values))
		for i, v := range s.Values {
			texts[i] = v.Text
		}
		if err := sv.Replace(texts); err != nil {
			return bad(s.Line, err.Error())
		}
	}
	return nil
}

// isUnset reports whether s is the one scalar "" on a flag whose
// default is "".
func isUnset(f *pflag.Flag, s Setting) bool {
	return s.Shape == Scalar && len(s.Values) == 1 && s.Values[0].Text == "" && f.DefValue == ""
}

// IsMapFlag reports whether f takes KEY=VALUE pairs (pflag's stringTo*
// types): such a key takes a YAML mapping.
func IsMapFlag(f *pflag.Flag) bool { return strings.HasPrefix(f.Value.Type(), "stringTo") }
