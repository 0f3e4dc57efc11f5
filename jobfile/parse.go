// Package jobfile reads graphfed job files: YAML files whose keys are the
// flag names of the command they run (`run: sim`, `aggregator` or
// `agent`). It keeps every key's line so that a misspelt key or a bad value
// is reported as FILE:LINE, and it sets values through the command's own
// pflag.FlagSet, so a key accepts exactly what its flag accepts and every
// flag has a key without a list of them here. It also runs a job file on a
// fresh cobra command tree (RunFile) and writes the complete commented
// defaults file of a command (WriteCommandDefaults).
package jobfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RunKey is the key naming the command; every other key is a flag.
const RunKey = "run"

// Commands are the commands a job file can run.
func Commands() []string { return []string{"sim", "aggregator", "agent"} }

// Shape is the YAML shape of a setting's value.
type Shape int

const (
	// Scalar is one value: `seed: 1`.
	Scalar Shape = iota
	// List is a sequence of scalars: `fanout: [5, 5]`; for list flags.
	List
	// Map is a mapping of scalars: `slow: {3: 5}`; for key=value flags.
	Map
)

// Value is one scalar of a setting and where it is. In a Map setting the
// text is "KEY=VALUE", the form the flag parses.
type Value struct {
	Text string
	Line int
}

// Setting is one key of a job file other than run.
type Setting struct {
	Key    string
	Line   int
	Shape  Shape
	Values []Value
}

// Job is a parsed job file: which command and its settings in file order.
type Job struct {
	File     string
	Run      string
	RunLine  int
	Settings []Setting
}

// Error is a positioned job-file error, printed FILE:LINE: MSG.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line <= 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Load reads and parses the job file at path; errors name path as given.
func Load(path string) (*Job, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("job file: %w", err)
	}
	return Parse(path, b)
}

// yamlLine finds the line in the YAML library's messages ("yaml: line 3:
// ...") so syntax errors read like the others.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// Parse decodes a job file. file names it in errors. It checks the
// structure (one mapping of unique keys, run naming a known command,
// values that are scalars, lists or mappings of scalars); whether the keys
// and values suit the command is Apply's business.
func Parse(file string, data []byte) (*Job, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "empty job file; want at least run: " + strings.Join(Commands(), ", ")}
		}
		return nil, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: file, Line: extra.Line, Msg: "a second YAML document; a job file holds one"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(file, err)
	}
	top := &doc
	if top.Kind == yaml.DocumentNode {
		if len(top.Content) == 0 {
			return nil, &Error{File: file, Msg: "empty job file; want at least run: " + strings.Join(Commands(), ", ")}
		}
		top = top.Content[0]
	}
	top = deref(top)
	if top.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: top.Line, Msg: "want a mapping of settings (key: value), not " + kindName(top)}
	}
	j := &Job{File: file}
	seen := map[string]int{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], deref(top.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, &Error{File: file, Line: k.Line, Msg: "a key is " + kindName(k) + "; want a flag name"}
		}
		name := k.Value
		if first, dup := seen[name]; dup {
			return nil, &Error{File: file, Line: k.Line, Msg: fmt.Sprintf("duplicate field %s (first at line %d)", name, first)}
		}
		seen[name] = k.Line
		if name == RunKey {
			if err := j.setRun(v); err != nil {
				return nil, err
			}
			continue
		}
		s, err := setting(file, name, k.Line, v)
		if err != nil {
			return nil, err
		}
		j.Settings = append(j.Settings, s)
	}
	if j.Run == "" {
		return nil, &Error{File: file, Line: top.Line, Msg: "missing field run (want " + strings.Join(Commands(), ", ") + ")"}
	}
	return j, nil
}

func (j *Job) setRun(v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return &Error{File: j.File, Line: v.Line, Msg: "field run: want one of " + strings.Join(Commands(), ", ") + ", not " + kindName(v)}
	}
	for _, c := range Commands() {
		if v.Value == c {
			j.Run, j.RunLine = c, v.Line
			return nil
		}
	}
	return &Error{File: j.File, Line: v.Line, Msg: fmt.Sprintf("field run: unknown command %q (want %s)", v.Value, strings.Join(Commands(), ", "))}
}

// setting reads one key's value: a scalar, a list of scalars or a mapping
// of scalars. A null is refused: leaving a key out keeps the default, and
// an empty value that means something is written "" as on a command line.
func setting(file, name string, line int, v *yaml.Node) (Setting, error) {
	s := Setting{Key: name, Line: line}
	bad := func(n *yaml.Node, what string) error {
		return &Error{File: file, Line: n.Line, Msg: fmt.Sprintf("field %s: %s", name, what)}
	}
	scalar := func(n *yaml.Node) (Value, error) {
		n = deref(n)
		switch {
		case n.Kind != yaml.ScalarNode:
			return Value{}, bad(n, "want a scalar here, not "+kindName(n))
		case n.Tag == "!!null":
			return Value{}, bad(n, "no value (leave the key out to keep the default; write \"\" for an empty string)")
		}
		return Value{Text: n.Value, Line: n.Line}, nil
	}
	switch v.Kind {
	case yaml.ScalarNode:
		val, err := scalar(v)
		if err != nil {
			return s, err
		}
		s.Shape, s.Values = Scalar, []Value{val}
	case yaml.SequenceNode:
		s.Shape = List
		for _, e := range v.Content {
			val, err := scalar(e)
			if err != nil {
				return s, err
			}
			s.Values = append(s.Values, val)
		}
	case yaml.MappingNode:
		s.Shape = Map
		seen := map[string]bool{}
		for i := 0; i+1 < len(v.Content); i += 2 {
			key, err := scalar(v.Content[i])
			if err != nil {
				return s, err
			}
			if seen[key.Text] {
				return s, bad(v.Content[i], fmt.Sprintf("duplicate entry %q", key.Text))
			}
			seen[key.Text] = true
			val, err := scalar(v.Content[i+1])
			if err != nil {
				return s, err
			}
			s.Values = append(s.Values, Value{Text: key.Text + "=" + val.Text, Line: key.Line})
		}
	default:
		return s, bad(v, "want a scalar, a list or a mapping, not "+kindName(v))
	}
	return s, nil
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return "a scalar"
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	return "an unknown node"
}

func yamlError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: strings.TrimPrefix(msg, m[0])}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(msg, "yaml: ")}
}
