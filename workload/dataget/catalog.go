package dataget

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"graphfed/graph"
)

// Layout is the on-disk layout a dataset is converted to.
type Layout string

const (
	// LayoutTSV is graph.LoadTSV's node-classification layout.
	LayoutTSV Layout = "tsv"
	// LayoutLightGCN is graph.LoadLightGCN's train.txt/test.txt layout.
	LayoutLightGCN Layout = "lightgcn"
)

// File is one public file a dataset is built from: its path in the
// repository at the dataset's commit, and the size and SHA-256 of its bytes
// there, computed from those bytes (not copied from a README).
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Base is the file's name without its directory.
func (f File) Base() string { return path.Base(f.Path) }

// Spec describes one dataset of the catalog.
type Spec struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	Layout  Layout `json:"layout"`
	Repo    string `json:"repo"` // owner/name on GitHub
	Commit  string `json:"commit"`
	Licence string `json:"licence"`
	Cite    string `json:"cite"`
	Files   []File `json:"files"`
	// Conversion says what the converter does to the files.
	Conversion string `json:"conversion"`
	convert    converter
}

// converter turns a spec's verified files (read by base name) into the
// spec's layout in dir.
type converter func(s Spec, read func(base string) ([]byte, error), dir string) error

// URL is where a file is fetched from: base (DefaultBaseURL unless a test
// or a mirror says otherwise) / owner / repo / commit / path, the scheme
// of raw.githubusercontent.com. The commit, not a branch, is in the URL.
func (s Spec) URL(base string, f File) string {
	return strings.TrimRight(base, "/") + "/" + s.Repo + "/" + s.Commit + "/" + f.Path
}

// Bytes is the total size of the spec's files.
func (s Spec) Bytes() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// DefaultBaseURL serves a GitHub repository's files at a commit.
const DefaultBaseURL = "https://raw.githubusercontent.com"

// Catalog lists the datasets Get can fetch, in a fresh slice.
func Catalog() []Spec {
	var out []Spec
	out = append(out, planetoidSpecs()...)
	out = append(out, heterophilousSpecs()...)
	out = append(out, lastFMSpec())
	return out
}

// Names lists the catalog's dataset names.
func Names() []string {
	var names []string
	for _, s := range Catalog() {
		names = append(names, s.Name)
	}
	return names
}

// Lookup finds a dataset of the catalog by name.
func Lookup(name string) (Spec, error) {
	i := slices.IndexFunc(Catalog(), func(s Spec) bool { return s.Name == name })
	if i < 0 {
		return Spec{}, fmt.Errorf("dataget: unknown dataset %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return Catalog()[i], nil
}

// tsvConverter adapts a converter that builds a node dataset.
func tsvConverter(build func(s Spec, read func(string) ([]byte, error)) (*graph.Dataset, error)) converter {
	return func(s Spec, read func(string) ([]byte, error), dir string) error {
		d, err := build(s, read)
		if err != nil {
			return err
		}
		return graph.WriteTSV(dir, d)
	}
}
