package jobfile

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Section is a titled group of flags in a defaults file.
type Section struct {
	Title string
	Flags []*pflag.Flag
}

// Pair is a key set in a defaults file (run and algo, say).
type Pair struct{ Key, Value string }

// WriteDefaults writes a complete job file: the header as comments, the
// keys of set, then every flag of the sections as a commented-out key
// ("#name: default") under its usage string. Keys stay commented out
// because setting a key is giving its flag, and some commands behave
// differently when a flag is given (--seed seeds the noise); uncommenting
// a line sets its key.
func WriteDefaults(w io.Writer, header []string, set []Pair, sections []Section) error {
	bw := bufio.NewWriter(w)
	for _, h := range header {
		comment(bw, "", h)
	}
	fmt.Fprintln(bw)
	isSet := map[string]bool{}
	for _, p := range set {
		isSet[p.Key] = true
		for _, s := range sections {
			for _, f := range s.Flags {
				if f.Name == p.Key {
					comment(bw, "", f.Usage)
				}
			}
		}
		fmt.Fprintf(bw, "%s: %s\n", p.Key, scalarText(p.Value))
	}
	for _, s := range sections {
		if len(s.Flags) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n# ---- %s ----\n", s.Title)
		for _, f := range s.Flags {
			if isSet[f.Name] {
				continue
			}
			fmt.Fprintln(bw)
			comment(bw, "", f.Usage)
			fmt.Fprintf(bw, "#%s: %s\n", f.Name, DefaultText(f))
		}
	}
	return bw.Flush()
}

// DefaultText is f's default as YAML: a scalar, a flow list for a list
// flag, a flow mapping for a key=value flag.
func DefaultText(f *pflag.Flag) string {
	if sv, ok := f.Value.(pflag.SliceValue); ok && f.DefValue == f.Value.String() {
		return flow(yaml.SequenceNode, sv.GetSlice())
	}
	if IsMapFlag(f) {
		inner := strings.TrimSuffix(strings.TrimPrefix(f.DefValue, "["), "]")
		var kv []string
		for pair := range strings.SplitSeq(inner, ",") {
			if k, v, ok := strings.Cut(pair, "="); ok {
				kv = append(kv, k, v)
			}
		}
		return flow(yaml.MappingNode, kv)
	}
	return scalarText(f.DefValue)
}

// scalarText is s as a YAML scalar that reads back as s (quoted when the
// plain form would not).
func scalarText(s string) string {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
	switch s {
	case "", "~", "null", "Null", "NULL":
		n.Tag = "!!str" // quoted: plain, these read back as null
	}
	return strings.TrimSuffix(encode(n), "\n")
}

func flow(kind yaml.Kind, items []string) string {
	n := &yaml.Node{Kind: kind, Style: yaml.FlowStyle}
	for _, it := range items {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: it})
	}
	return strings.TrimSuffix(encode(n), "\n")
}

func encode(n *yaml.Node) string {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(n); err != nil {
		// A scalar or a flat flow collection of strings always encodes.
		panic(fmt.Sprintf("jobfile: encode %q: %v", n.Value, err))
	}
	enc.Close()
	return b.String()
}

// comment writes text as "# " lines of at most about 100 columns.
func comment(w io.Writer, indent, text string) {
	const width = 98
	line := ""
	for word := range strings.FieldsSeq(text) {
		if line != "" && len(line)+1+len(word) > width {
			fmt.Fprintf(w, "%s# %s\n", indent, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	fmt.Fprintf(w, "%s# %s\n", indent, line)
}

// commentedKey is a key line WriteDefaults comments out.
var commentedKey = regexp.MustCompile(`(?m)^#([a-z0-9][a-z0-9-]*): `)

// UncommentKeys sets every key of a WriteDefaults file: each "#key: value"
// line becomes "key: value" (usage lines, "# ...", stay comments).
func UncommentKeys(text string) string { return commentedKey.ReplaceAllString(text, "$1: ") }
