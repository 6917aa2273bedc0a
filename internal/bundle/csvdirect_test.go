package bundle

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/shareddata"
	"github.com/opmkit/opm/internal/yamldoc"
)

// diffCSVPaths decodes obj both ways. direct says whether the direct path
// took it; diff is non-empty when it did and its CSV differs from the
// round trip's in any field, TypeErrors included, or when decodeCSV does
// not give the round trip's CSV.
func diffCSVPaths(obj *Object) (direct bool, diff string) {
	want := decodeCSVRoundTrip(obj)
	if got := decodeCSV(obj); !reflect.DeepEqual(got, want) {
		return false, fmt.Sprintf("decodeCSV\n%s\nround trip\n%s", dumpCSV(got), dumpCSV(want))
	}
	got, ok := decodeCSVDirect(obj)
	if !ok {
		return false, ""
	}
	if !reflect.DeepEqual(got, want) {
		return true, fmt.Sprintf("direct\n%s\nround trip\n%s", dumpCSV(got), dumpCSV(want))
	}
	return true, ""
}

func dumpCSV(c *CSV) string {
	s := fmt.Sprintf("TypeErrors %#v\nAPIVersion %q Kind %q\nMetadata %#v\nSpec %#v\nStatus %#v", c.TypeErrors, c.APIVersion, c.Kind, c.Metadata, c.Spec, c.Status)
	if len(s) > 4000 {
		s = s[:4000] + "..."
	}
	return s
}

// csvObjects decodes the YAML and JSON files under root and returns their
// documents whose kind is ClusterServiceVersion.
func csvObjects(t testing.TB, root string) []*Object {
	t.Helper()
	var objs []*Object
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(data), CSVKind) {
			return nil
		}
		docs, err := yamldoc.Decode(filepath.Base(path), data)
		if err != nil {
			return nil // not a manifest; other tests cover parse errors
		}
		for _, doc := range docs {
			if o := newObject(path, doc); o.Kind == CSVKind {
				objs = append(objs, o)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestDecodeCSVDirectMatchesRoundTrip decodes every CSV of the shared
// corpus and of the repository's testdata both ways: wherever the direct
// path takes one, the CSVs must be deeply equal, and it must take most
// corpus CSVs.
func TestDecodeCSVDirectMatchesRoundTrip(t *testing.T) {
	t.Parallel()
	if csvTypePlan() == nil {
		t.Fatal("the direct path has no plan for the CSV struct: some field type is one it does not mirror")
	}
	check := func(t *testing.T, objs []*Object) (direct int) {
		t.Helper()
		for _, o := range objs {
			took, diff := diffCSVPaths(o)
			if diff != "" {
				t.Errorf("%s: %s", o.File, diff)
			}
			if took {
				direct++
			} else if errs := decodeCSVRoundTrip(o).TypeErrors; len(errs) > 0 {
				t.Logf("%s: left to the round trip, which finds %v", o.File, errs)
			} else {
				t.Logf("%s: left to the round trip, which finds no type error", o.File)
			}
		}
		return direct
	}
	t.Run("testdata", func(t *testing.T) {
		t.Parallel()
		objs := csvObjects(t, filepath.Join("..", ".."))
		if len(objs) < 10 {
			t.Fatalf("only %d CSVs in the repository", len(objs))
		}
		direct := check(t, objs)
		t.Logf("direct path took %d of %d repository CSVs", direct, len(objs))
	})
	t.Run("corpus", func(t *testing.T) {
		t.Parallel()
		objs := csvObjects(t, shareddata.Require(t, "corpus"))
		if len(objs) < 100 {
			t.Fatalf("only %d CSVs in the corpus", len(objs))
		}
		direct := check(t, objs)
		t.Logf("direct path took %d of %d corpus CSVs (%.1f%%)", direct, len(objs), 100*float64(direct)/float64(len(objs)))
		if direct*10 < len(objs)*9 {
			t.Errorf("the direct path took only %d of %d corpus CSVs: it must take most of them", direct, len(objs))
		}
	})
}

func csvObject(t testing.TB, doc string) *Object {
	t.Helper()
	docs, err := yamldoc.Decode("x.yaml", []byte(doc))
	if err != nil || len(docs) != 1 {
		t.Fatalf("%q: %d documents, %v", doc, len(docs), err)
	}
	return newObject("x.yaml", docs[0])
}

// TestDecodeCSVDirectCases pins encoding/json's edge semantics on the CSV
// struct: both paths must agree, the direct path must take (or leave) each
// case as listed, and the result must be what is checked.
func TestDecodeCSVDirectCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		doc    string
		direct bool
		check  func(*CSV) string
	}{
		{"case-insensitive keys", "APIVERSION: v\n\u212aind: K\nSpec:\n  DisplayName: D\n  installmodes:\n  - TYPE: OwnNamespace\n    Supported: true\nMETADATA: {Name: nm}\n", true, func(c *CSV) string {
			if c.APIVersion != "v" || c.Kind != "K" || c.Spec.DisplayName != "D" || c.Metadata.Name != "nm" ||
				len(c.Spec.InstallModes) != 1 || c.Spec.InstallModes[0] != (InstallMode{InstallModeOwnNamespace, true}) {
				return "keys matched case-insensitively were not decoded"
			}
			return ""
		}},
		{"duplicate case variants", "spec:\n  displayName: a\n  DisplayName: b\n", false, func(c *CSV) string {
			if c.Spec.DisplayName != "a" { // "DisplayName" sorts before "displayName"
				return fmt.Sprintf("displayName %q, want the later key's a", c.Spec.DisplayName)
			}
			return ""
		}},
		{"duplicate case variants of a mapping merge", "Spec: {displayName: a}\nspec: {maturity: b}\n", false, func(c *CSV) string {
			if c.Spec.DisplayName != "a" || c.Spec.Maturity != "b" {
				return fmt.Sprintf("spec %q %q, want both keys' fields", c.Spec.DisplayName, c.Spec.Maturity)
			}
			return ""
		}},
		{"nulls", "kind: null\nmetadata: {annotations: null, labels: {a: null}}\nspec: {skips: null, install: null, selector: null, provider: {name: null}}\nstatus: null\n", true, func(c *CSV) string {
			if c.Kind != "" || c.Metadata.Annotations != nil || c.Spec.Skips != nil || c.Spec.Selector != nil || c.Status != nil {
				return "null did not leave fields zero"
			}
			if v, ok := c.Metadata.Labels["a"]; !ok || v != "" {
				return "a null map value is not an empty string"
			}
			return ""
		}},
		{"numbers into strings", "spec: {version: 1.0, release: 1}\n", false, func(c *CSV) string {
			if len(c.TypeErrors) != 2 {
				return fmt.Sprintf("type errors %v, want two", c.TypeErrors)
			}
			return ""
		}},
		{"number into a map of strings", "metadata: {annotations: {a: 1, b: c}}\n", false, func(c *CSV) string {
			// The round trip drops the whole mapping.
			if len(c.TypeErrors) != 1 || c.TypeErrors[0].Field != "metadata.annotations" {
				return fmt.Sprintf("type errors %v, annotations %v", c.TypeErrors, c.Metadata.Annotations)
			}
			return ""
		}},
		{"numbers into any", "status: {a: 1, b: [1.5, -0.0, 9007199254740993, x, true]}\nspec: {selector: 3}\n", true, func(c *CSV) string {
			want := map[string]any{"a": 1.0, "b": []any{1.5, math.Copysign(0, -1), 9007199254740992.0, "x", true}}
			if !reflect.DeepEqual(c.Status, want) || c.Spec.Selector != 3.0 {
				return fmt.Sprintf("status %#v selector %#v", c.Status, c.Spec.Selector)
			}
			return ""
		}},
		{"empty vs missing lists", "spec: {skips: [], keywords: null, installModes: [], maintainers: [{}]}\n", true, func(c *CSV) string {
			if c.Spec.Skips == nil || len(c.Spec.Skips) != 0 || c.Spec.InstallModes == nil || c.Spec.Keywords != nil || c.Spec.Links != nil {
				return "empty lists must be empty and non-nil, null and missing ones nil"
			}
			if len(c.Spec.Maintainers) != 1 {
				return "an empty mapping in a list is one element"
			}
			return ""
		}},
		{"empty mappings", "metadata: {annotations: {}}\nstatus: {}\nspec: {cleanup: []}\n", true, func(c *CSV) string {
			if c.Metadata.Annotations == nil || len(c.Metadata.Annotations) != 0 || c.Status == nil || c.Spec.Cleanup == nil {
				return "empty mappings and lists must be non-nil"
			}
			return ""
		}},
		{"html characters", "metadata: {name: \"<a&b>\"}\nspec: {description: \"\\u2028<>&\"}\n", true, func(c *CSV) string {
			if c.Metadata.Name != "<a&b>" || c.Spec.Description != "\u2028<>&" {
				return "strings with characters json escapes changed"
			}
			return ""
		}},
		{"unknown fields", "x: {y: [1, 2.5, null]}\nspec: {nope: 1}\n", true, nil},
		{"list where a mapping belongs", "spec: {install: [1]}\n", false, nil},
		{"mapping where a string belongs", "spec: {version: {a: b}}\n", false, nil},
		{"boolean where a string belongs", "spec: {icon: [{mediatype: true}]}\n", false, nil},
		{"string where a boolean belongs", "spec: {installModes: [{type: x, supported: 'yes'}]}\n", false, nil},
		{"not a mapping", "- a\n", false, nil},
	}
	for _, c := range cases {
		o := csvObject(t, c.doc)
		took, diff := diffCSVPaths(o)
		if diff != "" {
			t.Errorf("%s: %s", c.name, diff)
		}
		if took != c.direct {
			t.Errorf("%s: direct path taken %v, want %v", c.name, took, c.direct)
		}
		if c.check != nil {
			if msg := c.check(decodeCSV(o)); msg != "" {
				t.Errorf("%s: %s", c.name, msg)
			}
		}
	}
}

// TestDecodeCSVDirectOddValues covers values the YAML decoder does not
// produce but a caller's could: invalid UTF-8 (which json.Marshal
// replaces), numbers it cannot write, other Go types. The direct path
// leaves them all to the round trip, in known fields and unknown ones.
func TestDecodeCSVDirectOddValues(t *testing.T) {
	t.Parallel()
	for _, v := range []any{"a\xffb", math.NaN(), math.Inf(1), int(1), []string{"a"}, map[string]any{"\xff": "a"}} {
		for _, value := range []map[string]any{
			{"kind": "K", "x": map[string]any{"y": v}},
			{"kind": "K", "status": []any{v}},
			{"kind": "K", "metadata": map[string]any{"name": v}},
			{"kind": "K", "metadata": map[string]any{"annotations": map[string]any{"a": v}}},
		} {
			o := &Object{Doc: yamldoc.Document{Value: value}}
			took, diff := diffCSVPaths(o)
			if took || diff != "" {
				t.Errorf("%#v: direct path taken %v, difference %q", value, took, diff)
			}
		}
	}
	o := &Object{Doc: yamldoc.Document{Value: map[string]any{"kind": "K", "\xff": "a"}}}
	if took, diff := diffCSVPaths(o); took || diff != "" {
		t.Errorf("invalid UTF-8 key: direct path taken %v, difference %q", took, diff)
	}
}

// probe holds the field types the CSV struct does not use today, so that
// the direct path's handling of them is held to encoding/json's as well.
type probe struct {
	Name       string                     `json:"name"`
	Upper      string                     `json:"NAME"`
	K          string                     `json:"k"`
	S          string                     `json:"s"`
	Raw        json.RawMessage            `json:"raw"`
	RawPtr     *json.RawMessage           `json:"rawPtr"`
	Raws       []json.RawMessage          `json:"raws"`
	Ptr        *string                    `json:"ptr"`
	PtrPtr     **probeInner               `json:"ptrPtr"`
	AnyPtr     *any                       `json:"anyPtr"`
	Int        int                        `json:"int"`
	Int8       int8                       `json:"int8"`
	Uint8      uint8                      `json:"uint8"`
	Uint       uint                       `json:"uint"`
	Float      float64                    `json:"float"`
	Bool       bool                       `json:"bool"`
	Any        any                        `json:"any"`
	Anys       []any                      `json:"anys"`
	Map        map[string]string          `json:"map"`
	MapPtr     map[string]*probeInner     `json:"mapPtr"`
	MapRaw     map[string]json.RawMessage `json:"mapRaw"`
	Slice      []probeInner               `json:"slice"`
	Ptrs       []*probeInner              `json:"ptrs"`
	Named      namedString                `json:"named"`
	NamedMap   map[namedString]int64      `json:"namedMap"`
	Skipped    string                     `json:"-"`
	Dash       string                     `json:"-,"` //nolint:staticcheck // the name "-", as encoding/json reads it
	Untagged   string
	Omit       []string `json:",omitempty"`
	unexported string
}

type probeInner struct {
	A string   `json:"a"`
	B []string `json:"b"`
	C any      `json:"c"`
}

type namedString string

var probePlan = func() *typePlan {
	p, _ := planFor(reflect.TypeFor[probe](), map[reflect.Type]*typePlan{})
	return p
}()

// diffProbe fills a probe from x both ways; diff is non-empty when the
// direct path took x and its result differs from the round trip's, or the
// round trip reported any error.
func diffProbe(x any) (direct bool, got probe, diff string) {
	if !probePlan.fill(reflect.ValueOf(&got).Elem(), x, 0) {
		return false, got, ""
	}
	raw, err := json.Marshal(x)
	if err != nil {
		return true, got, fmt.Sprintf("the direct path took a value json.Marshal refuses: %v", err)
	}
	var want probe
	if err := json.Unmarshal(raw, &want); err != nil {
		return true, got, fmt.Sprintf("the direct path took what json.Unmarshal refuses: %v (%s)", err, raw)
	}
	if !reflect.DeepEqual(got, want) {
		return true, got, fmt.Sprintf("direct\n%#v\nround trip\n%#v\nfrom %s", got, want, raw)
	}
	return true, got, ""
}

func TestDecodeDirectProbe(t *testing.T) {
	t.Parallel()
	if probePlan == nil {
		t.Fatal("no plan for the probe type")
	}
	if p, ok := planFor(reflect.TypeFor[struct{ B []byte }](), map[reflect.Type]*typePlan{}); ok || p != nil {
		t.Error("[]byte (base64 in JSON) must not have a plan")
	}
	if _, ok := planFor(reflect.TypeFor[struct{ probeInner }](), map[reflect.Type]*typePlan{}); ok {
		t.Error("embedded structs must not have a plan")
	}
	if _, ok := planFor(reflect.TypeFor[struct {
		N int `json:"n,string"`
	}](), map[reflect.Type]*typePlan{}); ok {
		t.Error(",string fields must not have a plan")
	}
	cases := []struct {
		name   string
		doc    string
		direct bool
		check  func(p probe) string
	}{
		{"RawMessage bytes", "raw: \"<a&b>\"\nrawPtr: {z: [1, 2.5], a: '&'}\nraws: [null, x]\nmapRaw: {k: null}\n", true, func(p probe) string {
			if string(p.Raw) != `"\u003ca\u0026b\u003e"` || p.RawPtr == nil || string(*p.RawPtr) != `{"a":"\u0026","z":[1,2.5]}` {
				return fmt.Sprintf("raw %s", p.Raw)
			}
			if len(p.Raws) != 2 || string(p.Raws[0]) != "null" || string(p.MapRaw["k"]) != "null" {
				return "null in a RawMessage is the bytes null"
			}
			return ""
		}},
		{"RawMessage null", "raw: null\nrawPtr: null\n", true, func(p probe) string {
			if string(p.Raw) != "null" || p.RawPtr != nil {
				return fmt.Sprintf("raw %q rawPtr %v", p.Raw, p.RawPtr)
			}
			return ""
		}},
		{"first field by folding", "Name: a\n\u212a: b\n\u017f: c\n", true, func(p probe) string {
			if p.Name != "a" || p.Upper != "" || p.K != "b" || p.S != "c" {
				return fmt.Sprintf("name %q NAME %q k %q s %q", p.Name, p.Upper, p.K, p.S)
			}
			return ""
		}},
		{"exact names first", "NAME: a\nname: b\n", true, func(p probe) string {
			if p.Name != "b" || p.Upper != "a" {
				return fmt.Sprintf("name %q NAME %q", p.Name, p.Upper)
			}
			return ""
		}},
		{"duplicate case variants", "Name: a\nnAme: b\n", false, nil},
		{"pointers", "ptr: x\nptrPtr: {a: yy}\nanyPtr: 3\nptrs: [null, {c: [1]}]\nmapPtr: {k: null, l: {}}\n", true, func(p probe) string {
			if p.Ptr == nil || *p.Ptr != "x" || p.PtrPtr == nil || (*p.PtrPtr).A != "yy" || p.AnyPtr == nil || *p.AnyPtr != 3.0 ||
				len(p.Ptrs) != 2 || p.Ptrs[0] != nil || p.MapPtr["k"] != nil || p.MapPtr["l"] == nil {
				return "pointers"
			}
			return ""
		}},
		{"pointers null", "ptr: null\nptrPtr: null\nanyPtr: null\n", true, nil},
		{"integers", "int: -5\nint8: 127\nuint8: 255\nuint: 9223372036854775807\nfloat: 9007199254740993\n", true, func(p probe) string {
			if p.Int != -5 || p.Int8 != 127 || p.Uint8 != 255 || p.Uint != math.MaxInt64 || p.Float != 9007199254740992 {
				return fmt.Sprintf("%d %d %d %d %v", p.Int, p.Int8, p.Uint8, p.Uint, p.Float)
			}
			return ""
		}},
		{"int8 overflow", "int8: 128\n", false, nil},
		{"negative into unsigned", "uint8: -1\n", false, nil},
		{"float into int", "int: 3.0\n", false, nil},
		{"float into float", "float: 1e-7\n", true, nil},
		{"string into int", "int: '3'\n", false, nil},
		{"number into string", "named: 3\n", false, nil},
		{"named strings", "named: x\nnamedMap: {a: 1}\n", true, nil},
		{"skipped and dash", "Skipped: x\n'-': dash\nuntagged: z\nomit: []\nunexported: w\n", true, func(p probe) string {
			if p.Skipped != "" || p.Dash != "dash" || p.Untagged != "z" || p.Omit == nil || p.unexported != "" {
				return fmt.Sprintf("%+v", p)
			}
			return ""
		}},
	}
	for _, c := range cases {
		o := csvObject(t, c.doc)
		took, got, diff := diffProbe(o.Doc.Value)
		if diff != "" {
			t.Errorf("%s: %s", c.name, diff)
		}
		if took != c.direct {
			t.Errorf("%s: direct path taken %v, want %v", c.name, took, c.direct)
		}
		if took && c.check != nil {
			if msg := c.check(got); msg != "" {
				t.Errorf("%s: %s", c.name, msg)
			}
		}
	}
}

// FuzzDecodeCSVDirect decodes arbitrary YAML and JSON documents into the
// CSV struct and the probe both ways: wherever the direct path takes a
// value, its result must equal the round trip's.
func FuzzDecodeCSVDirect(f *testing.F) {
	for _, s := range []string{
		"apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: a.v1.0.0\n  annotations: {alm-examples: '[]'}\nspec:\n  version: 1.0.0\n  installModes:\n  - {type: OwnNamespace, supported: true}\n  install:\n    strategy: deployment\n    spec:\n      deployments:\n      - name: d\n        spec: {template: {spec: {containers: [{name: c, image: i, env: [{name: A, value: B}]}]}}}\n      permissions: [{serviceAccountName: s, rules: [{verbs: ['*']}]}]\n",
		"Spec: {DisplayName: a, displayName: b, SKIPS: [x], skips: []}\n",
		"metadata: {annotations: null, labels: {a: null}}\nspec: {install: null, selector: {matchLabels: {a: b}}}\nstatus: {x: [1, 2.5, -0.0, true, null]}\n",
		"spec: {version: 1.0, release: 1, installModes: [{supported: 'yes'}]}\n",
		"raw: \"<a&b>\"\nrawPtr: {z: 1}\nptrPtr: {a: x}\nint8: 128\nuint8: -1\nint: 2.0\nfloat: 1e21\nnamedMap: {a: 1}\nName: a\nname: b\n\u212a: k\n",
		`{"kind": "ClusterServiceVersion", "spec": {"cleanup": {"enabled": true}, "nativeAPIs": [{"group": "", "kind": "Pod"}]}, "status": 9007199254740993}`,
		"- a\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, doc string, asJSON bool) {
		name := "x.yaml"
		if asJSON {
			name = "x.json"
		}
		docs, err := yamldoc.Decode(name, []byte(doc))
		if err != nil {
			return
		}
		for _, d := range docs {
			o := newObject(name, d)
			if _, diff := diffCSVPaths(o); diff != "" {
				t.Fatalf("CSV: %s", diff)
			}
			if _, _, diff := diffProbe(d.Value); diff != "" {
				t.Fatalf("probe: %s", diff)
			}
		}
	})
}

// FuzzDecodeCSVDirectGenerated builds values shaped like the CSV struct
// (and the probe) from the fuzzer's bytes: mostly the types each field
// wants, under its name in varied case, with unknown keys, duplicate case
// variants, nulls, empty lists and mismatched types mixed in.
func FuzzDecodeCSVDirectGenerated(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Add([]byte("generated CSV values, shaped like the struct they fill"))
	f.Add([]byte{0xff, 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00, 0xff, 0xfe, 0xfd})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &valueGen{data: data}
		csv := g.forPlan(csvTypePlan(), 0)
		o := &Object{Doc: yamldoc.Document{Value: csv}}
		if _, diff := diffCSVPaths(o); diff != "" {
			t.Fatalf("CSV: %s", diff)
		}
		g.pos = 0
		if _, _, diff := diffProbe(g.forPlan(probePlan, 0)); diff != "" {
			t.Fatalf("probe: %s", diff)
		}
	})
}

// valueGen turns bytes into document values; past the end of its bytes it
// reads zeros, which end every collection.
type valueGen struct {
	data []byte
	pos  int
}

func (g *valueGen) next() byte {
	if g.pos >= len(g.data) {
		g.pos++
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return b
}

var genStrings = []string{"", "a", "<a&b>", "\u2028", "OwnNamespace", "1.0.0", "é\u212a", "true"}

var genNumbers = []any{int64(0), int64(-1), int64(127), int64(128), int64(255), int64(math.MaxInt64), int64(math.MinInt64),
	int64(9007199254740993), 0.0, math.Copysign(0, -1), 1.5, 3.0, 1e21, 1e-7, -2.5e-300, float64(math.MaxInt64)}

// any is a value of any type.
func (g *valueGen) any(depth int) any {
	b := g.next()
	if depth > 4 {
		b %= 5
	}
	switch b % 8 {
	case 0:
		return nil
	case 1:
		return b&0x80 != 0
	case 2, 3:
		return genNumbers[int(g.next())%len(genNumbers)]
	case 4:
		return genStrings[int(g.next())%len(genStrings)]
	case 5:
		n := int(g.next() % 4)
		m := make(map[string]any, n)
		for range n {
			m[genStrings[int(g.next())%len(genStrings)]] = g.any(depth + 1)
		}
		return m
	default:
		n := int(g.next() % 4)
		s := make([]any, n)
		for i := range s {
			s[i] = g.any(depth + 1)
		}
		return s
	}
}

// key spells a field name as it is or in another case.
func (g *valueGen) key(name string) string {
	switch g.next() % 8 {
	case 1:
		return strings.ToUpper(name)
	case 2:
		return strings.ToLower(name)
	case 3:
		if name != "" {
			return strings.ToUpper(name[:1]) + name[1:]
		}
	case 4:
		return strings.NewReplacer("k", "\u212a", "K", "\u212a", "s", "\u017f", "S", "\u017f").Replace(name)
	}
	return name
}

// forPlan is mostly a value of p's type, sometimes anything.
func (g *valueGen) forPlan(p *typePlan, depth int) any {
	b := g.next()
	if b%16 == 15 || depth > 12 {
		return g.any(depth)
	}
	if b%16 == 14 {
		return nil
	}
	switch p.op {
	case opString:
		return genStrings[int(g.next())%len(genStrings)]
	case opBool:
		return b&0x80 != 0
	case opInt, opUint, opFloat64:
		return genNumbers[int(g.next())%len(genNumbers)]
	case opAny, opRaw:
		return g.any(depth)
	case opPtr:
		return g.forPlan(p.elem, depth+1)
	case opSlice:
		n := int(g.next() % 4)
		s := make([]any, n)
		for i := range s {
			s[i] = g.forPlan(p.elem, depth+1)
		}
		return s
	case opMap:
		n := int(g.next() % 4)
		m := make(map[string]any, n)
		for range n {
			m[genStrings[int(g.next())%len(genStrings)]] = g.forPlan(p.elem, depth+1)
		}
		return m
	case opStruct:
		m := map[string]any{}
		for _, f := range p.fields {
			switch g.next() % 8 {
			case 0, 1, 2:
			case 3:
				// Two spellings of one field.
				m[f.name] = g.forPlan(f.plan, depth+1)
				m[g.key(f.name)] = g.forPlan(f.plan, depth+1)
			default:
				m[g.key(f.name)] = g.forPlan(f.plan, depth+1)
			}
		}
		if g.next()%4 == 0 {
			m["unknown"] = g.any(depth + 1)
		}
		return m
	}
	return g.any(depth)
}

// BenchmarkDecodeCSV decodes the shared corpus's CSVs into the CSV struct
// by the direct path and by the JSON round trip.
func BenchmarkDecodeCSV(b *testing.B) {
	objs := csvObjects(b, shareddata.Require(b, "corpus", "real"))
	if len(objs) == 0 {
		b.Fatal("no CSVs in the corpus")
	}
	for _, bc := range []struct {
		name   string
		decode func(*Object) *CSV
	}{
		{"direct", func(o *Object) *CSV {
			c, ok := decodeCSVDirect(o)
			if !ok {
				b.Fatalf("%s: the direct path declined", o.File)
			}
			return c
		}},
		{"roundtrip", decodeCSVRoundTrip},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, o := range objs {
					bc.decode(o)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(objs)), "µs/CSV")
		})
	}
}
