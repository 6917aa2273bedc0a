package semver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/internal/spelling"
)

// Schema is the schema of a semver template.
const Schema = "olm.semver"

// Archetype is a channel archetype: how stable the bundles listed under it
// are. Channels are named after it.
type Archetype string

// The archetypes, least stable first: the order channels are generated in
// and the order of preference for the default channel.
const (
	Candidate Archetype = "candidate"
	Fast      Archetype = "fast"
	Stable    Archetype = "stable"
)

// Archetypes lists the archetypes, least stable first.
var Archetypes = []Archetype{Candidate, Fast, Stable}

func (a Archetype) rank() int {
	for i, x := range Archetypes {
		if x == a {
			return i
		}
	}
	return -1
}

// Kind is the kind of generated channel: one per major version or one per
// minor version.
type Kind string

// Channel kinds; "" is the unset defaultChannelTypePreference.
const (
	Major Kind = "major"
	Minor Kind = "minor"
)

// rank orders kinds when neither is preferred: minor above major above unset.
func (k Kind) rank() int {
	switch k {
	case Minor:
		return 2
	case Major:
		return 1
	}
	return 0
}

// Template is a parsed semver template.
type Template struct {
	Schema                string
	GenerateMajorChannels bool
	GenerateMinorChannels bool
	// DefaultChannelTypePreference is Major or Minor once parsed: when the
	// template leaves it out, the kind it generates (minor when both).
	DefaultChannelTypePreference Kind
	// Bundles lists each archetype's bundles in template order.
	Bundles map[Archetype][]BundleRef

	source string
}

// BundleRef is one bundle image named by the template, with where.
type BundleRef struct {
	Image string
	Line  int
	Field string // e.g. stable.bundles[2].image
}

// Error is a template problem at a place in the template file.
type Error struct {
	Source string // file name; "-" or "" for standard input
	Line   int    // 1-based; 0 when unknown
	Field  string // e.g. candidate.bundles[0].image; "" for the file as a whole
	Msg    string
	Err    error // the cause, when there is one
}

func (e *Error) Error() string {
	var b strings.Builder
	src := e.Source
	if src == "" || src == "-" {
		src = "<stdin>"
	}
	b.WriteString(src)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// fields of the template, in the order they are documented.
var (
	topFields     = []string{"schema", "generateMajorChannels", "generateMinorChannels", "defaultChannelTypePreference", "candidate", "fast", "stable"}
	channelFields = []string{"bundles"}
	bundleFields  = []string{"image"}
)

// Parse reads a semver template (YAML or JSON) strictly: unknown fields,
// duplicate fields, values of the wrong type and a second document are
// errors naming the file (source), line and field. It also applies
// upstream's defaults and checks: minor channels when neither kind is
// asked for, the default-channel preference matching a generated kind.
func Parse(data []byte, source string) (*Template, error) {
	p := &parser{source: source}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, p.errf(0, "", "the template is empty: write a %s template (schema: %s)", Schema, Schema)
		}
		return nil, p.syntax(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil && len(extra.Content) > 0 && !isNull(extra.Content[0]):
		return nil, p.errf(extra.Line, "", "a second YAML document (after ---): a template file holds one template")
	case err != nil && !errors.Is(err, io.EOF):
		return nil, p.syntax(err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	t := &Template{Bundles: map[Archetype][]BundleRef{}, source: source}
	schemaLine := root.Line
	err := p.mapping(root, "", topFields, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "schema":
			schemaLine = k.Line
			t.Schema, err = p.str(v, key)
		case "generateMajorChannels":
			t.GenerateMajorChannels, err = p.boolean(v, key)
		case "generateMinorChannels":
			t.GenerateMinorChannels, err = p.boolean(v, key)
		case "defaultChannelTypePreference":
			var s string
			s, err = p.str(v, key)
			t.DefaultChannelTypePreference = Kind(s)
		default:
			arch := Archetype(key)
			err = p.mapping(v, key, channelFields, func(_ string, _, bv *yaml.Node) error {
				return p.sequence(bv, key+".bundles", func(i int, item *yaml.Node) error {
					field := fmt.Sprintf("%s.bundles[%d]", key, i)
					ref := BundleRef{Line: item.Line, Field: field + ".image"}
					err := p.mapping(item, field, bundleFields, func(_ string, ik, iv *yaml.Node) error {
						ref.Line = ik.Line
						var err error
						ref.Image, err = p.str(iv, field+".image")
						return err
					})
					if err != nil {
						return err
					}
					if strings.TrimSpace(ref.Image) == "" {
						return p.errf(ref.Line, ref.Field, "no bundle image: give the bundle's image reference, e.g. quay.io/org/op-bundle:v1.0.0")
					}
					t.Bundles[arch] = append(t.Bundles[arch], ref)
					return nil
				})
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if t.Schema != Schema {
		what := fmt.Sprintf("schema is %q", t.Schema)
		if t.Schema == "" {
			what = "no schema"
		}
		return nil, p.errf(schemaLine, "schema", "%s; a semver template has schema %q", what, Schema)
	}
	if !t.GenerateMajorChannels && !t.GenerateMinorChannels {
		t.GenerateMinorChannels = true
	}
	prefLine := p.lines["defaultChannelTypePreference"]
	switch t.DefaultChannelTypePreference {
	case "":
		if t.GenerateMinorChannels {
			t.DefaultChannelTypePreference = Minor
		} else {
			t.DefaultChannelTypePreference = Major
		}
	case Minor:
		if !t.GenerateMinorChannels {
			return nil, p.errf(prefLine, "defaultChannelTypePreference", "is minor, but the template generates no minor-version channels: set generateMinorChannels: true or prefer major")
		}
	case Major:
		if !t.GenerateMajorChannels {
			return nil, p.errf(prefLine, "defaultChannelTypePreference", "is major, but the template generates no major-version channels: set generateMajorChannels: true or prefer minor")
		}
	default:
		return nil, p.errf(prefLine, "defaultChannelTypePreference", "unknown value %q: use major or minor", t.DefaultChannelTypePreference)
	}
	return t, nil
}

type parser struct {
	source string
	// lines of the top-level keys, for errors found after parsing.
	lines map[string]int
}

func (p *parser) errf(line int, field, format string, args ...any) *Error {
	return &Error{Source: p.source, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

var yamlLineRe = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

func (p *parser) syntax(err error) *Error {
	msg := err.Error()
	line := 0
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		msg = m[2]
		if m[1] != "" {
			line, _ = strconv.Atoi(m[1])
		}
	}
	return &Error{Source: p.source, Line: line, Msg: "not valid YAML or JSON: " + msg, Err: err}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return n.Value
		}
		return fmt.Sprintf("%q (%s)", n.Value, strings.TrimPrefix(n.Tag, "!!"))
	}
	return "an empty value"
}

// mapping walks a mapping node: keys are matched to known ignoring case (as
// upstream's JSON decoding does), unknown and repeated keys are errors. A
// null node is an empty mapping.
func (p *parser) mapping(n *yaml.Node, path string, known []string, each func(key string, k, v *yaml.Node) error) error {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errf(n.Line, path, "want a mapping (field: value lines), got %s", kindName(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		field := join(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			return p.errf(k.Line, path, "a field name must be a string, got %s", kindName(k))
		}
		key := ""
		for _, f := range known {
			if strings.EqualFold(f, k.Value) {
				key = f
				break
			}
		}
		if key == "" {
			return p.errf(k.Line, field, "unknown field%s; a %s template knows %s", didYouMean(k.Value, known), whereIn(path), strings.Join(known, ", "))
		}
		if first, dup := seen[key]; dup {
			return p.errf(k.Line, join(path, key), "given twice (first at line %d)", first)
		}
		seen[key] = k.Line
		if path == "" {
			if p.lines == nil {
				p.lines = map[string]int{}
			}
			p.lines[key] = k.Line
		}
		if err := each(key, k, v); err != nil {
			return err
		}
	}
	return nil
}

func whereIn(path string) string {
	if path == "" {
		return Schema
	}
	return Schema + " " + path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func didYouMean(s string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		d := spelling.Distance(strings.ToLower(s), strings.ToLower(k))
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD >= 0 && bestD <= len(s)/3+1 {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

func (p *parser) sequence(n *yaml.Node, path string, each func(i int, item *yaml.Node) error) error {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return p.errf(n.Line, path, "want a list (- image: ... items), got %s", kindName(n))
	}
	for i, item := range n.Content {
		if err := each(i, resolve(item)); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) str(n *yaml.Node, path string) (string, error) {
	n = resolve(n)
	if isNull(n) {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", p.errf(n.Line, path, "want a string, got %s (quote it if it is meant as text)", kindName(n))
	}
	return n.Value, nil
}

// yaml11Bools are the YAML 1.1 spellings of booleans, which upstream (a YAML
// 1.1 parser) accepts and yaml.v3 reads as strings.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

func (p *parser) boolean(n *yaml.Node, path string) (bool, error) {
	n = resolve(n)
	if isNull(n) {
		return false, nil
	}
	if n.Kind == yaml.ScalarNode {
		switch n.Tag {
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err == nil {
				return b, nil
			}
		case "!!str":
			if b, ok := yaml11Bools[n.Value]; ok && n.Style == 0 {
				return b, nil
			}
		}
	}
	return false, p.errf(n.Line, path, "want true or false, got %s", kindName(n))
}

// Images lists the distinct bundle images of the template, in the order
// they first appear (candidate, fast, stable): what Render will ask
// RenderBundle for, so that a command can fetch them ahead.
func (t *Template) Images() []string {
	refs := t.refs()
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Image
	}
	return out
}

// refs is Images with each image's first reference.
func (t *Template) refs() []BundleRef {
	seen := map[string]bool{}
	var out []BundleRef
	for _, a := range Archetypes {
		for _, r := range t.Bundles[a] {
			if !seen[r.Image] {
				seen[r.Image] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// sortedKinds lists the channel kinds the template generates: major first.
func (t *Template) kinds() []Kind {
	var out []Kind
	if t.GenerateMajorChannels {
		out = append(out, Major)
	}
	if t.GenerateMinorChannels {
		out = append(out, Minor)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rank() < out[j].rank() })
	return out
}
