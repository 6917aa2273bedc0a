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
func csvObjects(t *testing.T, root string) []*Object {
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
		docs, err := decodeDocuments(filepath.Base(path), data)
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
	docs, err := decodeDocuments("x.yaml", []byte(doc))
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
			o := &Object{Doc: Document{Value: value}}
			took, diff := diffCSVPaths(o)
			if took || diff != "" {
				t.Errorf("%#v: direct path taken %v, difference %q", value, took, diff)
			}
		}
	}
	o := &Object{Doc: Document{Value: map[string]any{"kind": "K", "\xff": "a"}}}
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
	Dash       string                     `json:"-,"`
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
