package yamldoc

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/shareddata"
	yaml "go.yaml.in/yaml/v3"
)

// diffFast decodes data through the fast path and through yaml.v3 and
// reports the first difference ("" when they agree). fast is false when
// the fast path declined the file, which is always allowed.
func diffFast(name string, data []byte) (fast bool, diff string) {
	got, ok := decodeFast(name, data)
	if !ok {
		return false, ""
	}
	text, cut := cutLongScalars(data)
	want, err := decodeYAML(name, data, text, cut)
	if err != nil {
		return true, fmt.Sprintf("the fast path accepted what yaml.v3 refuses: %v", err)
	}
	if len(got) != len(want) {
		return true, fmt.Sprintf("%d documents, yaml.v3 %d", len(got), len(want))
	}
	for i := range want {
		g, w := &got[i], &want[i]
		switch {
		case g.Index != w.Index || g.Line != w.Line:
			return true, fmt.Sprintf("document %d: index/line %d/%d, yaml.v3 %d/%d", i, g.Index, g.Line, w.Index, w.Line)
		case !reflect.DeepEqual(g.Value, w.Value):
			return true, fmt.Sprintf("document %d: value\n%#v\nyaml.v3\n%#v", i, g.Value, w.Value)
		case !reflect.DeepEqual(g.Ambiguous, w.Ambiguous):
			return true, fmt.Sprintf("document %d: ambiguous %+v, yaml.v3 %+v", i, g.Ambiguous, w.Ambiguous)
		case !reflect.DeepEqual(g.Duplicates, w.Duplicates):
			return true, fmt.Sprintf("document %d: duplicates %+v, yaml.v3 %+v", i, g.Duplicates, w.Duplicates)
		}
		if d := diffNodes("", g.node, w.node, cut); d != "" {
			return true, fmt.Sprintf("document %d: %s", i, d)
		}
		for _, path := range valuePaths(w.Value) {
			if gl, wl := g.LineOf(path), w.LineOf(path); gl != wl {
				return true, fmt.Sprintf("document %d: LineOf(%q) = %d, yaml.v3 %d", i, path, gl, wl)
			}
		}
	}
	return true, ""
}

// diffNodes compares what the conversion and LineOf read of two node
// trees; yaml.v3's values have long runs cut out.
func diffNodes(at string, g, w *yaml.Node, cut *cuts) string {
	if g.Kind != w.Kind || g.Style != w.Style || g.Tag != w.Tag || g.Value != cut.restore(w.Value) || g.Line != w.Line ||
		len(g.Content) != len(w.Content) || g.Anchor != w.Anchor || (g.Alias == nil) != (w.Alias == nil) {
		return fmt.Sprintf("node %s: kind %v style %v tag %q value %q line %d children %d; yaml.v3 kind %v style %v tag %q value %q line %d children %d",
			at, g.Kind, g.Style, g.Tag, g.Value, g.Line, len(g.Content), w.Kind, w.Style, w.Tag, w.Value, w.Line, len(w.Content))
	}
	for i := range w.Content {
		if d := diffNodes(at+"/"+strconv.Itoa(i), g.Content[i], w.Content[i], cut); d != "" {
			return d
		}
	}
	return ""
}

// valuePaths lists the field path of every value in v, in the syntax
// LineOf takes, plus one that does not resolve below each collection.
func valuePaths(v any) []string {
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := prefix
				switch {
				case strings.Contains(k, `"]`):
					continue // not expressible
				case k == "" || strings.ContainsAny(k, ".[]\""):
					p += `["` + k + `"]`
				case p == "":
					p = k
				default:
					p += "." + k
				}
				out = append(out, p)
				walk(p, t[k])
			}
			out = append(out, prefix+".no-such-key")
		case []any:
			for i, e := range t {
				p := prefix + "[" + strconv.Itoa(i) + "]"
				out = append(out, p)
				walk(p, e)
			}
			out = append(out, prefix+"["+strconv.Itoa(len(t))+"]")
		}
	}
	walk("", v)
	return out
}

// yamlFiles lists the .yaml and .yml files under root.
func yamlFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFastYAMLMatchesYAMLv3 runs every YAML file of the shared corpus and
// of the repository's testdata through both paths: wherever the fast path
// takes a file, its documents must equal yaml.v3's in every respect, and
// it must take most corpus files.
func TestFastYAMLMatchesYAMLv3(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, files []string) (fast int) {
		t.Helper()
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			took, diff := diffFast(filepath.Base(f), data)
			if diff != "" {
				t.Errorf("%s: %s", f, diff)
			}
			if took {
				fast++
			}
		}
		return fast
	}
	t.Run("testdata", func(t *testing.T) {
		t.Parallel()
		files := yamlFiles(t, filepath.Join("..", ".."))
		fast := check(t, files)
		t.Logf("fast path took %d of %d repository YAML files", fast, len(files))
	})
	t.Run("corpus", func(t *testing.T) {
		t.Parallel()
		files := yamlFiles(t, shareddata.Require(t, "corpus"))
		if len(files) < 100 {
			t.Fatalf("only %d YAML files in the corpus", len(files))
		}
		fast := check(t, files)
		t.Logf("fast path took %d of %d corpus YAML files (%.1f%%)", fast, len(files), 100*float64(fast)/float64(len(files)))
		if fast*10 < len(files)*9 {
			t.Errorf("the fast path took only %d of %d corpus files: it must take most of them", fast, len(files))
		}
	})
}

// TestFastYAMLCases pins the constructs the fast path reads, and those it
// leaves to yaml.v3, against yaml.v3's results.
func TestFastYAMLCases(t *testing.T) {
	t.Parallel()
	for _, c := range fastYAMLSeeds {
		took, diff := diffFast("x.yaml", []byte(c.doc))
		if diff != "" {
			t.Errorf("%q: %s", c.doc, diff)
		}
		if took != c.fast {
			t.Errorf("%q: fast path taken %v, want %v", c.doc, took, c.fast)
		}
	}
	for _, doc := range generatorSeeds {
		if took, diff := diffFast("x.yaml", []byte(doc)); !took || diff != "" {
			t.Errorf("%.40q: fast path taken %v, difference %q", doc, took, diff)
		}
	}
}

// generatorSeeds are documents as controller-gen and operator-sdk write them.
var generatorSeeds = []string{`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.4.1
  creationTimestamp: null
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    listKind: WidgetList
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: 'APIVersion defines the versioned schema of this representation
          of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources'
        properties:
          size:
            description: Size is the size of the widget, in units; it may
              be zero.
            format: int32
            minimum: 0
            type: integer
          selector:
            description: |-
              A label query over volumes to consider for binding.

                indented example
            x-kubernetes-map-type: atomic
        required:
        - size
        type: object
    served: true
    storage: true
    subresources:
      status: {}
status:
  acceptedNames:
    kind: ""
    plural: ""
  conditions: []
  storedVersions: []
`, `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  annotations:
    alm-examples: |-
      [
        {
          "apiVersion": "example.com/v1",
          "kind": "Widget"
        }
      ]
    capabilities: Basic Install
    olm.skipRange: '>=1.0.0 <1.2.0'
  name: widget-operator.v1.2.0
spec:
  keywords: ['widgets', "gadgets"]
  installModes:
  - supported: true
    type: OwnNamespace
  - supported: false
    type: AllNamespaces
  version: 1.2.0
  replaces: widget-operator.v1.1.0
`}

var fastYAMLSeeds = []struct {
	doc  string
	fast bool
}{
	{"a: 1\nb: two\nc: 'three'\nd: \"four\"\n", true},
	{"apiVersion: v1\nkind: List\nitems:\n- a: 1\n  b: [ ]\n- {}\n- []\n", true},
	{"k: ['TLS', \"a b\", c d , -1, [x, {y: z}], {}, []]\nm: {\"a\":1, b: 'c', d: [e]}\n- x\n", false},
	{"k: ['TLS', \"a b\", c d , -1, [x, {y: z}], {}, []]\nm: {\"a\":1, b: 'c', d: [e]}  # c\n", true},
	{"k: [a,\n  b]\n", false},
	{"k: [a: b]\n", false},
	{"k: [a, ]\n", false},
	{"k: {a, b}\n", false},
	{"k: {a: }\n", false},
	{"k: [http://x]\n", false},
	{"k: [a#b, 'c']\n", true},
	{"k: [a] x\n", false},
	{"items:\n- a: 1\n  b: []\n- {}\n- []\n-\n- x\n", true},
	{"items:\n  - a: 1\n    b:\n    - c\n    - d\n  -   e: f\n      g: h\n", true},
	{"# comment\n---\na: on\nb: yes\non: x\nc: =\nd: 0x1F\ne: 1e3\nf: .inf\ng: ~\nh: null\ni: 2020-01-01\nj: 0o17\nk: -1\n", true},
	{"a: 1\n---\n---\n# only a comment\n---\nb: 2\n...\n", false},
	{"a: 1\n---\n---\n# only a comment\n---\nb: 2\n", true},
	{"d: long text\n  that goes on\n\n  and on\n\n\n  and on # end\n", false},
	{"d: long text\n  that goes on\n\n  and on\n\n\n  and on  \ne: 1\n", true},
	{"- long text\n  - that goes on\n- x\n", true},
	{"d: 'single ''quoted''\n  over  \n\n  lines '\ne: \"double \\\"quoted\\\"\\n\\t\\x41\\u00e9\\U0001F600 \\\n   over\n\n  lines \"\n", true},
	{"d: \"bad \\q escape\"\n", false},
	{"l: |\n  line one\n    indented\n\n  line three\n\nf: >\n  folded one\n  folded two\n\n  para\n    more\n  back\nk: |+\n  keep\n\n\ns: >-\n  strip\n\n", true},
	{"l: |\n\n  \n  x\n", true},
	{"l: |\n\n   \n  x\n", false},
	{"l: |\n     \n  x\n", false},
	{"l: |2\n   x\n", true},
	{"l: |1-\n    x\n\n   y\n  \n", true},
	{"- >-2\n\n     x\n    y\n", true},
	{"l: |0\n x\n", false},
	{"l: |2\n x\n", false},
	{"l: |22\n   x\n", false},
	{"l: |-+\n   x\n", false},
	{"l: |\n  x\n      \n  y\n", true},
	{"l: |\nm: 1\n", false},
	{"- |\n  in a list\n- >\n  folded\n  in a list\n", true},
	{"a: &x 1\nb: *x\n", false},
	{"a: !!str 1\n", false},
	{"a: {b: 1}\n", true},
	{"a: {b: 1, b: 2, on: yes}\n", true},
	{"? a\n: b\n", false},
	{"%YAML 1.2\n---\na: 1\n", false},
	{"\ufeffa: 1\n", false},
	{"a:\tb\n", false},
	{"a: b\r\n", false},
	{"a: b: c\n", false},
	{"a: b\n c: d\n", false},
	{"a:\n  b: 1\n c: 2\n", false},
	{"<<: {a: 1}\n", false},
	{"\"quoted key\": 1\n'single': 2\n\"a.b\": 3\n", true},
	{"a:\nb:\n  c:\n", true},
	{"scalar\n", false},
	{"a: 1 # c\nb: x#y\nc: \"q\" # c\n", true},
	{"a: \"q\"x\n", false},
	{"a: b #c\n  d\n", false},
	{"a: x\na: y\n", true},
	{"k: \"é ü\"\nü: ✓\n", true},
	{"  a: 1\n  b:\n  - 2\n", true},
	{"- a\nb: 1\n", false},
	{"a: |\n  x\n# c\n  y\n", false},
	{"a: >\n  one\n   two\n  three\n\n   four\n", true},
	{"a: >+\n  x\n\n", true},
	{"a: |-\n  x", true},
	{"a: 'x\n", false},
	{"a: \"x\\\n\"\n", true},
	{"a: -\n", false},
	{"a: :x\nb: ?y\nc: -z\n", true},
	{"- - a\n", false},
	{"a: 'b'\n  c\n", false},
	{"a:\n- b\n  c\n- d\n", true},
	{"- description:\n    A set of nodes (a, b) for x,\n    which manage: y\n", false},
	{"- description:\n    A set of nodes (a, b) for x,\n\n    which manage y\n  name: n\n", true},
	{"a:\n  'quoted\n   on'\nb:\n  |\n   lit\nc:\n  [x]\nd:\n  # c\n  plain # c\n-\n", false},
	{"a:\n  'quoted\n   on'\nb:\n  |\n   lit\nc:\n  [x]\nd:\n  # c\n  plain # c\n", true},
	{"-\n  x\n-\n  'y'\n", true},
	{"a:\n  x\n  b: c\n", false},
	{"a:\n  x\nb: c\n", true},
}

// TestFastYAMLLongScalars: the fast path reads long base64 runs as they
// are, yaml.v3 with them cut out (cutLongScalars); both give the same.
func TestFastYAMLLongScalars(t *testing.T) {
	t.Parallel()
	long := "iV" + strings.Repeat("BORw0KGgo+/AAA=", 200)
	for _, c := range []struct {
		doc  string
		fast bool
	}{
		{"spec:\n  icon:\n  - base64data: " + long + "\n    mediatype: image/png\n", true},
		{"a: " + long + "  \nb: 1\n", true},
		{"- " + long + "\n- y" + long + "\n", true},
		{"a: first\n  " + long + "\n  last\nb: x\n", true},
		{"a: |\n  " + long + "\n  " + long + "\nb: y\n", true},
		{"a: \"start\n  " + long + "\n  end\"\n", true},
		{"a: 'x " + long + "'\n", true},
		{"a: 1 # " + long + "\nb: 2\n", true},
		{"a: 9" + long + "\n", true},
		{"a: " + long + "\n---\nb: " + long + "x\n", true},
		{"a: " + long, true},
		{"a: [" + long + "]\n", true},
		{"a: opmcut" + long + "\n", true},
		{"a: &x " + long + "\nb: *x\n", false},
		{"a: !!binary " + long + "\n", false},
	} {
		took, diff := diffFast("x.yaml", []byte(c.doc))
		if diff != "" {
			t.Errorf("%.60q: %s", c.doc, diff)
		}
		if took != c.fast {
			t.Errorf("%.60q: fast path taken %v, want %v", c.doc, took, c.fast)
		}
	}
}

// FuzzFastYAML: whenever the fast path takes an input, its documents equal
// yaml.v3's (values and their types, ambiguities, duplicates, lines, the
// node trees and LineOf for every path).
func FuzzFastYAML(f *testing.F) {
	for _, c := range fastYAMLSeeds {
		f.Add([]byte(c.doc))
	}
	for _, doc := range generatorSeeds {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, diff := diffFast("x.yaml", data); diff != "" {
			t.Fatal(diff)
		}
	})
}

// BenchmarkDecodeLargeCRDs decodes the largest CRDs of the corpus through
// Decode (fast path) and through yaml.v3 alone, reporting MB/s.
func BenchmarkDecodeLargeCRDs(b *testing.B) {
	root := shareddata.Require(b, "corpus")
	files := []string{
		"real/kubedb-installer/2026.2.26/manifests/installer.kubedb.com_kubedbs.yaml",
		"edge/E05-replaces-bare-version/datadog-operator/1.3.0/manifests/datadoghq.com_datadogagents.yaml",
		"edge/E04-invalid-installmode-type/percona-server-mongodb-operator/1.18.0/manifests/perconaservermongodbs.psmdb.percona.com.crd.yaml",
	}
	var data [][]byte
	size := 0
	for _, f := range files {
		d, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
		size += len(d)
	}
	for _, path := range []string{"fast", "yaml.v3"} {
		b.Run(path, func(b *testing.B) {
			b.SetBytes(int64(size))
			for range b.N {
				for i, d := range data {
					var err error
					if path == "fast" {
						_, err = Decode(files[i], d)
					} else {
						text, cut := cutLongScalars(d)
						_, err = decodeYAML(files[i], d, text, cut)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestPlainTagMatchesYAMLv3: the resolver shortcut gives yaml.v3's tag for
// every first byte, with the words and numbers yaml.v3 knows as tails.
func TestPlainTagMatchesYAMLv3(t *testing.T) {
	t.Parallel()
	tails := []string{"", "e", "rue", "RUE", "ull", "ULL", "alse", "ALSE", "an", "NaN", "inf", ".inf", ".Inf", "1", "12", "0", "x1f", "o17", "b101",
		"1e3", "1.5", ".5", "_000", "001-01-01", "es", "ES", "n", "N", "ff", "FF", "amespace", "ame", "ype", "n1", "ffff", "<", ".", "~"}
	var p fastParser
	for c := range 256 {
		for _, tail := range tails {
			v := string([]byte{byte(c)}) + tail
			want := (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag()
			if got := p.plainTag(v); got != want {
				t.Errorf("plainTag(%q) = %s, yaml.v3 %s", v, got, want)
			}
		}
	}
	if got := p.plainTag(""); got != "!!null" {
		t.Errorf("plainTag(\"\") = %s", got)
	}
}

// genYAML writes a random document of the kinds manifests hold, with the
// irregular spacing, comments and odd scalars hand-written files have; a
// mutation step then breaks some of them at random, so that both sides of
// the fast path's limits are tried.
func genYAML(r *rand.Rand) []byte {
	var b strings.Builder
	scalars := []string{"a", "name", "two words", "on", "yes", "No", "y", "=", "~", "null", "true", "False", "0x1F", "0o17", "017",
		"1e3", "1.5", "-1", "+2", ".inf", "-.Inf", ".nan", "2020-01-01", "1_000", "0b101", "<<", "a:b", "a#b", "-x", ":x", "?x", "é",
		"'single'", "'it''s'", `"dq"`, `"esc \" \\ \n \t \x41 \u00e9 \U0001F600 \/ \N \_"`, `"bad \q"`, "[]", "{}", "[a, 'b', \"c\"]",
		"{a: 1, \"b\":2}", "[a: b]", "&x a", "*x", "!!str 1", "a # c", "''", `""`, "|", ">", "- x", "x: y", "@x", "`x", "%x", "a  b  ",
		"'open  ", `"open `, "end'", `end"`, `"break\`, "mid '' it'", `mid \" it"`, "x\\", "  "}
	keys := []string{"a", "b", "on", "name", "\"q.k\"", "'s k'", "a b", "1", "true", "~", "<<", "k:x", "-k", "a", "a"}
	pad := func(n int) string { return strings.Repeat(" ", n) }
	var gen func(indent, depth int)
	value := func(indent, depth int) {
		switch k := r.Intn(10); {
		case k < 5 || depth > 3:
			b.WriteString(" " + scalars[r.Intn(len(scalars))])
			for r.Intn(4) == 0 { // continuation lines
				b.WriteString("\n" + strings.Repeat("\n", r.Intn(2)) + pad(indent+r.Intn(4)) + scalars[r.Intn(len(scalars))])
			}
			b.WriteString(pad(r.Intn(2)) + "\n")
		case k < 7:
			b.WriteString(" " + []string{"|", ">", "|-", ">+", "|+", ">-", "|2", "| # c", "|1-", ">+3", "|0"}[r.Intn(11)] + "\n")
			in := indent + 1 + r.Intn(3)
			for range 1 + r.Intn(4) {
				switch r.Intn(5) {
				case 0:
					b.WriteString(pad(r.Intn(in+3)) + "\n")
				case 1:
					b.WriteString(pad(in+1+r.Intn(2)) + "more " + scalars[r.Intn(len(scalars))] + "\n")
				default:
					b.WriteString(pad(in) + scalars[r.Intn(len(scalars))] + "\n")
				}
			}
		default:
			b.WriteString(pad(r.Intn(2)) + "\n")
			if r.Intn(8) > 0 {
				gen(indent+r.Intn(4), depth+1)
			}
		}
	}
	gen = func(indent, depth int) {
		seq := r.Intn(3) == 0
		for range 1 + r.Intn(4) {
			if r.Intn(6) == 0 {
				b.WriteString(pad(r.Intn(indent+2)) + "# comment\n")
			}
			if r.Intn(8) == 0 {
				b.WriteString(pad(r.Intn(3)) + "\n")
			}
			b.WriteString(pad(indent))
			if seq {
				b.WriteString("-")
				if r.Intn(3) == 0 {
					b.WriteString(pad(1+r.Intn(2)) + keys[r.Intn(len(keys))] + ":")
					value(indent+2, depth+1)
					continue
				}
				value(indent, depth)
				continue
			}
			b.WriteString(keys[r.Intn(len(keys))] + ":")
			value(indent, depth)
		}
	}
	for range 1 + r.Intn(2) {
		if r.Intn(3) == 0 {
			b.WriteString("---\n")
		}
		gen(r.Intn(2), 0)
	}
	out := []byte(b.String())
	for r.Intn(3) == 0 && len(out) > 0 { // mutate
		i := r.Intn(len(out))
		c := " \n:#-'\"[]{},|>\\a0"[r.Intn(17)]
		if r.Intn(2) == 0 {
			out = append(out[:i], append([]byte{c}, out[i:]...)...)
		} else {
			out = append(out[:i], out[i+1:]...)
		}
	}
	return out
}

// TestFastYAMLGenerated runs generated documents through both paths.
func TestFastYAMLGenerated(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(1))
	fast, n := 0, 20000
	for range n {
		doc := genYAML(r)
		took, diff := diffFast("x.yaml", doc)
		if diff != "" {
			t.Fatalf("%q: %s", doc, diff)
		}
		if took {
			fast++
		}
	}
	t.Logf("fast path took %d of %d generated documents", fast, n)
	if fast < n/10 {
		t.Errorf("the fast path took only %d of %d generated documents: the generator no longer tries it", fast, n)
	}
}

// FuzzFastYAMLGenerated is FuzzFastYAML over generated documents, for
// inputs the fast path takes far more often than mutated bytes.
func FuzzFastYAMLGenerated(f *testing.F) {
	for i := range int64(8) {
		f.Add(i)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		doc := genYAML(rand.New(rand.NewSource(seed)))
		if _, diff := diffFast("x.yaml", doc); diff != "" {
			t.Fatalf("%q: %s", doc, diff)
		}
	})
}

// TestLineOfKeyStartingWithBracket: a bracketed key that starts with ']'
// resolves instead of panicking.
func TestLineOfKeyStartingWithBracket(t *testing.T) {
	t.Parallel()
	docs, err := Decode("x.yaml", []byte("a:\n  b: 1\n  \"]x\": 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := docs[0].LineOf(`a["]x"]`); got != 3 {
		t.Errorf(`LineOf(a["]x"]) = %d, want 3`, got)
	}
	if got := docs[0].LineOf(`a["]`); got != 1 {
		t.Errorf(`LineOf(a["]) = %d, want 1`, got)
	}
}
