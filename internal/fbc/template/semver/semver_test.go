package semver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// registry is an in-memory set of bundle images for a fake RenderBundle.
type registry map[string]*fbc.Bundle

func (r registry) render(calls *atomic.Int32) func(context.Context, string) (*fbc.Bundle, error) {
	return func(_ context.Context, image string) (*fbc.Bundle, error) {
		if calls != nil {
			calls.Add(1)
		}
		b, ok := r[image]
		if !ok {
			return nil, fmt.Errorf("%s: manifest unknown", image)
		}
		c := *b
		return &c, nil
	}
}

// add puts bundle pkg.v<version> at image example.com/<pkg>-bundle:v<version>
// (name overrides the bundle name when not "").
func (r registry) add(pkg, version, name, csv string) string {
	if name == "" {
		name = pkg + ".v" + version
	}
	img := "example.com/" + pkg + "-bundle:v" + version
	pv, _ := json.Marshal(fbc.PackageValue{PackageName: pkg, Version: version})
	r[img] = &fbc.Bundle{Schema: fbc.SchemaBundle, Name: name, Package: pkg, Image: img,
		Properties: []fbc.Property{{Type: fbc.PropertyPackage, Value: pv}}, CSV: json.RawMessage(csv)}
	return img
}

// upstreamVersions are the versions of upstream's own channel-generation
// test: prereleases, several minors per major, majors 0 to 3.
var upstreamVersions = []string{"0.1.0", "0.1.1", "1.1.0", "1.2.1", "1.3.1", "2.1.0", "1.3.1-beta", "2.1.1", "2.3.1", "2.3.2", "3.1.0", "3.1.1", "1.3.1-alpha", "1.4.1", "1.4.1-beta1", "1.4.1-beta2"}

func upstreamTemplate(t *testing.T, header string) (string, registry) {
	t.Helper()
	r := registry{}
	var b strings.Builder
	b.WriteString("schema: olm.semver\n" + header + "stable:\n  bundles:\n")
	for _, v := range upstreamVersions {
		img := r.add("a", v, "a-v"+v, "")
		fmt.Fprintf(&b, "  - image: %s\n", img)
	}
	return b.String(), r
}

// graph prints channels one entry a line: "channel entry <replaces [skips]".
func graph(c *fbc.Catalog) string {
	var b strings.Builder
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			fmt.Fprintf(&b, "%s %s", ch.Name, e.Name)
			if e.Replaces != "" {
				fmt.Fprintf(&b, " <%s", e.Replaces)
			}
			if len(e.Skips) > 0 {
				fmt.Fprintf(&b, " %v", e.Skips)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Minor channels of upstream's version set: the top of each minor replaces
// the previous minor's top and skips every earlier bundle of its major;
// nothing links majors.
const minorGraph = `stable-v0.1 a-v0.1.0
stable-v0.1 a-v0.1.1 [a-v0.1.0]
stable-v1.1 a-v1.1.0
stable-v1.2 a-v1.2.1 <a-v1.1.0
stable-v1.3 a-v1.3.1-alpha
stable-v1.3 a-v1.3.1-beta
stable-v1.3 a-v1.3.1 <a-v1.2.1 [a-v1.1.0 a-v1.3.1-alpha a-v1.3.1-beta]
stable-v1.4 a-v1.4.1-beta1
stable-v1.4 a-v1.4.1-beta2
stable-v1.4 a-v1.4.1 <a-v1.3.1 [a-v1.1.0 a-v1.2.1 a-v1.3.1-alpha a-v1.3.1-beta a-v1.4.1-beta1 a-v1.4.1-beta2]
stable-v2.1 a-v2.1.0
stable-v2.1 a-v2.1.1 [a-v2.1.0]
stable-v2.3 a-v2.3.1
stable-v2.3 a-v2.3.2 <a-v2.1.1 [a-v2.1.0 a-v2.3.1]
stable-v3.1 a-v3.1.0
stable-v3.1 a-v3.1.1 [a-v3.1.0]
`

const majorGraph = `stable-v0 a-v0.1.0
stable-v0 a-v0.1.1 [a-v0.1.0]
stable-v1 a-v1.1.0
stable-v1 a-v1.2.1 <a-v1.1.0
stable-v1 a-v1.3.1-alpha
stable-v1 a-v1.3.1-beta
stable-v1 a-v1.3.1 <a-v1.2.1 [a-v1.1.0 a-v1.3.1-alpha a-v1.3.1-beta]
stable-v1 a-v1.4.1-beta1
stable-v1 a-v1.4.1-beta2
stable-v1 a-v1.4.1 <a-v1.3.1 [a-v1.1.0 a-v1.2.1 a-v1.3.1-alpha a-v1.3.1-beta a-v1.4.1-beta1 a-v1.4.1-beta2]
stable-v2 a-v2.1.0
stable-v2 a-v2.1.1 [a-v2.1.0]
stable-v2 a-v2.3.1
stable-v2 a-v2.3.2 <a-v2.1.1 [a-v2.1.0 a-v2.3.1]
stable-v3 a-v3.1.0
stable-v3 a-v3.1.1 [a-v3.1.0]
`

// sortedLines merges two graphs as channels sorted by name would.
func sortedLines(gs ...string) string {
	byChannel := map[string][]string{}
	var names []string
	for _, g := range gs {
		for _, l := range strings.Split(strings.TrimSpace(g), "\n") {
			ch := strings.Fields(l)[0]
			if byChannel[ch] == nil {
				names = append(names, ch)
			}
			byChannel[ch] = append(byChannel[ch], l)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(strings.Join(byChannel[n], "\n") + "\n")
	}
	return b.String()
}

func TestRenderChannels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, header, graph, defaultChannel string
	}{
		{"minor by default", "", minorGraph, "stable-v3.1"},
		{"minor", "generateMinorChannels: true\n", minorGraph, "stable-v3.1"},
		{"major", "generateMajorChannels: true\n", majorGraph, "stable-v3"},
		{"both, minor preferred by default", "generateMajorChannels: true\ngenerateMinorChannels: true\n", sortedLines(majorGraph, minorGraph), "stable-v3.1"},
		{"both, major preferred", "generateMajorChannels: true\ngenerateMinorChannels: true\ndefaultChannelTypePreference: major\n", sortedLines(majorGraph, minorGraph), "stable-v3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmpl, r := upstreamTemplate(t, tc.header)
			var calls atomic.Int32
			c, err := Render(context.Background(), []byte(tmpl), Options{RenderBundle: r.render(&calls), Source: "t.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			if got := graph(c); got != tc.graph {
				t.Errorf("channels:\n%s\nwant:\n%s", got, tc.graph)
			}
			if len(c.Packages) != 1 || c.Packages[0].Name != "a" || c.Packages[0].DefaultChannel != tc.defaultChannel {
				t.Errorf("package: %+v, want a with default channel %s", c.Packages, tc.defaultChannel)
			}
			if int(calls.Load()) != len(upstreamVersions) || len(c.Bundles) != len(upstreamVersions) {
				t.Errorf("%d renders, %d bundles; want %d of each", calls.Load(), len(c.Bundles), len(upstreamVersions))
			}
			for i, ch := range c.Channels {
				if ch.Schema != fbc.SchemaChannel || ch.Package != "a" || (i > 0 && c.Channels[i-1].Name >= ch.Name) {
					t.Errorf("channel %d: %+v (want olm.channel of a, sorted by name)", i, ch)
				}
			}
		})
	}
}

// TestRenderArchetypes: each archetype gets its own channels with no edge
// between them; a bundle listed under two archetypes is rendered once; the
// default channel is the most stable archetype's, whatever the versions.
func TestRenderArchetypes(t *testing.T) {
	t.Parallel()
	r := registry{}
	v100 := r.add("op", "1.0.0", "", "")
	v110 := r.add("op", "1.1.0", "", "")
	v200 := r.add("op", "2.0.0", "", "")
	tmpl := fmt.Sprintf(`schema: olm.semver
generateMajorChannels: true
candidate:
  bundles:
  - image: %[1]s
  - image: %[2]s
  - image: %[3]s
fast:
  bundles:
  - image: %[1]s
  - image: %[2]s
stable:
  bundles:
  - image: %[1]s
`, v100, v110, v200)
	var calls atomic.Int32
	c, err := Render(context.Background(), []byte(tmpl), Options{RenderBundle: r.render(&calls)})
	if err != nil {
		t.Fatal(err)
	}
	want := `candidate-v1 op.v1.0.0
candidate-v1 op.v1.1.0 <op.v1.0.0
candidate-v2 op.v2.0.0
fast-v1 op.v1.0.0
fast-v1 op.v1.1.0 <op.v1.0.0
stable-v1 op.v1.0.0
`
	if got := graph(c); got != want {
		t.Errorf("channels:\n%s\nwant:\n%s", got, want)
	}
	if calls.Load() != 3 || len(c.Bundles) != 3 {
		t.Errorf("%d renders and %d bundles, want 3 of each", calls.Load(), len(c.Bundles))
	}
	// Generating both kinds, minor preferred: stable-v1.0 ties stable-v1 on
	// archetype and version, and the preference decides.
	tmpl2 := strings.Replace(tmpl, "generateMajorChannels: true\n", "generateMajorChannels: true\ngenerateMinorChannels: true\n", 1)
	c, err = Render(context.Background(), []byte(tmpl2), Options{RenderBundle: r.render(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Packages[0].DefaultChannel; got != "stable-v1.0" {
		t.Errorf("default channel %q, want stable-v1.0", got)
	}
	if c.Packages[0].DefaultChannel = ""; c.Packages[0].Name != "op" {
		t.Errorf("package %q", c.Packages[0].Name)
	}
}

const iconCSV = `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"op.v1.1.0"},"spec":{"description":"Runs op.","icon":[{"base64data":"iVBORw0KGgo=","mediatype":"image/png"},{"base64data":"PHN2Zz4=","mediatype":"image/svg+xml"}]}}`

// TestRenderPackageMetadata: description and first icon come from the CSV
// of the default channel's head, not from another bundle's.
func TestRenderPackageMetadata(t *testing.T) {
	t.Parallel()
	r := registry{}
	old := r.add("op", "1.0.0", "", `{"kind":"ClusterServiceVersion","spec":{"description":"old"}}`)
	head := r.add("op", "1.1.0", "", iconCSV)
	tmpl := fmt.Sprintf("schema: olm.semver\nstable:\n  bundles:\n  - image: %s\n  - image: %s\n", head, old)
	c, err := Render(context.Background(), []byte(tmpl), Options{RenderBundle: r.render(nil)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fbc.Write(&buf, c, fbc.FormatJSON); err != nil {
		t.Fatal(err)
	}
	wantPkg := `{
    "schema": "olm.package",
    "name": "op",
    "defaultChannel": "stable-v1.1",
    "icon": {
        "base64data": "iVBORw0KGgo=",
        "mediatype": "image/png"
    },
    "description": "Runs op."
}
`
	if !strings.HasPrefix(buf.String(), wantPkg) {
		t.Errorf("package blob:\n%s\nwant:\n%s", buf.String()[:min(len(buf.String()), 400)], wantPkg)
	}

	// The CSV is found in an olm.bundle.object when the blob carries no CSV field.
	b := r[head]
	b.CSV = nil
	data, _ := json.Marshal(fbc.BundleObjectValue{Data: []byte(iconCSV)})
	b.Properties = append(b.Properties, fbc.Property{Type: fbc.PropertyBundleObject, Value: data})
	c, err = Render(context.Background(), []byte(tmpl), Options{RenderBundle: r.render(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Packages[0]; p.Description != "Runs op." || p.Icon == nil || p.Icon.MediaType != "image/png" {
		t.Errorf("from olm.bundle.object: %+v", p)
	}
}

// TestRenderErrors: each problem is one error naming file, line and field.
func TestRenderErrors(t *testing.T) {
	t.Parallel()
	r := registry{}
	a1 := r.add("a", "1.0.0", "", "")
	a1b := r.add("a", "1.0.0+build", "a.v1.0.0-build", "")
	b1 := r.add("b", "1.0.0", "", "")
	r["example.com/bad:1"] = &fbc.Bundle{Name: "bad", Package: "a", Properties: []fbc.Property{{Type: fbc.PropertyPackage, Value: json.RawMessage(`{"packageName":"a","version":"one"}`)}}}
	r["example.com/nopkg:1"] = &fbc.Bundle{Name: "nopkg", Package: "a"}
	for _, tc := range []struct {
		name, tmpl string
		want       []string
	}{
		{"empty", "", []string{"t.yaml: the template is empty"}},
		{"syntax", "schema: olm.semver\nstable: [\n", []string{"t.yaml:", "not valid YAML"}},
		{"unknown field", "schema: olm.semver\nstabel:\n  bundles: []\n", []string{"t.yaml:2: stabel: unknown field", `did you mean "stable"`}},
		{"unknown nested field", "schema: olm.semver\nstable:\n  bundles:\n  - image: x\n    imgae: y\n", []string{"t.yaml:5: stable.bundles[0].imgae: unknown field"}},
		{"duplicate field", "schema: olm.semver\nstable: {}\nstable: {}\n", []string{"t.yaml:3: stable: given twice (first at line 2)"}},
		{"wrong type", "schema: olm.semver\ngenerateMajorChannels: \"maybe\"\n", []string{"t.yaml:2: generateMajorChannels: want true or false"}},
		{"image not a string", "schema: olm.semver\nstable:\n  bundles:\n  - image: 12\n", []string{"t.yaml:4: stable.bundles[0].image: want a string, got the number 12"}},
		{"bundles not a list", "schema: olm.semver\nstable:\n  bundles: x\n", []string{"t.yaml:3: stable.bundles: want a list"}},
		{"empty image", "schema: olm.semver\nstable:\n  bundles:\n  - image: \"\"\n", []string{"t.yaml:4: stable.bundles[0].image: no bundle image"}},
		{"wrong schema", "schema: olm.template.basic\n", []string{`t.yaml:1: schema: schema is "olm.template.basic"; a semver template has schema "olm.semver"`}},
		{"empty second document is fine", "schema: olm.semver\n---\n", []string{"t.yaml:1: the template lists no bundles"}},
		{"no schema", "stable: {}\n", []string{"t.yaml:1: schema: no schema"}},
		{"second document", "schema: olm.semver\n---\nschema: olm.semver\n", []string{"t.yaml:2: a second YAML document"}},
		{"preference minor without minor", "schema: olm.semver\ngenerateMajorChannels: true\ndefaultChannelTypePreference: minor\n", []string{"t.yaml:3: defaultChannelTypePreference: is minor, but the template generates no minor-version channels"}},
		{"preference major without major", "schema: olm.semver\ndefaultChannelTypePreference: major\n", []string{"t.yaml:2: defaultChannelTypePreference: is major"}},
		{"unknown preference", "schema: olm.semver\ndefaultChannelTypePreference: patch\n", []string{`t.yaml:2: defaultChannelTypePreference: unknown value "patch"`}},
		{"no bundles", "schema: olm.semver\n", []string{"t.yaml:1: the template lists no bundles"}},
		{"image not found", "schema: olm.semver\nstable:\n  bundles:\n  - image: " + a1 + "\n  - image: example.com/missing:1\n", []string{"t.yaml:5: stable.bundles[1].image: render example.com/missing:1:", "manifest unknown"}},
		{"two packages", "schema: olm.semver\ncandidate:\n  bundles:\n  - image: " + a1 + "\nstable:\n  bundles:\n  - image: " + b1 + "\n", []string{`t.yaml:7: stable.bundles[0].image: bundle b.v1.0.0 (` + b1 + `) is in package "b", but the template's package is "a" (from candidate.bundles[0].image)`}},
		{"listed twice", "schema: olm.semver\nfast:\n  bundles:\n  - image: " + a1 + "\n  - image: " + a1 + "\n", []string{"t.yaml:5: fast.bundles[1].image: bundle a.v1.0.0 is listed twice under fast (also fast.bundles[0].image at line 4)"}},
		{"build metadata only", "schema: olm.semver\nfast:\n  bundles:\n  - image: " + a1 + "\n  - image: " + a1b + "\n", []string{"t.yaml:5: fast.bundles[1].image: bundle a.v1.0.0-build has version 1.0.0+build, which cannot be ordered against a.v1.0.0 (1.0.0) under fast"}},
		{"bad version", "schema: olm.semver\nfast:\n  bundles:\n  - image: example.com/bad:1\n", []string{`t.yaml:4: fast.bundles[0].image: bundle bad (example.com/bad:1) has version "one", which is not semver`}},
		{"no package property", "schema: olm.semver\nfast:\n  bundles:\n  - image: example.com/nopkg:1\n", []string{"t.yaml:4: fast.bundles[0].image: bundle nopkg (example.com/nopkg:1): has 0 olm.package properties"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := Render(context.Background(), []byte(tc.tmpl), Options{RenderBundle: r.render(nil), Source: "t.yaml"})
			if err == nil {
				t.Fatalf("no error; rendered %s", graph(c))
			}
			if c != nil {
				t.Error("a catalog came back with the error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Errorf("error %T is not a *semver.Error", err)
			}
		})
	}
}

// TestRenderFromJSONAndCase: a JSON template works, and field names match
// regardless of case (upstream decodes them as JSON does).
func TestRenderFromJSONAndCase(t *testing.T) {
	t.Parallel()
	r := registry{}
	img := r.add("op", "0.1.0", "", "")
	tmpl := `{"Schema":"olm.semver","GenerateMajorChannels":true,"Stable":{"Bundles":[{"Image":"` + img + `"}]}}`
	c, err := Render(context.Background(), []byte(tmpl), Options{RenderBundle: r.render(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got := graph(c); got != "stable-v0 op.v0.1.0\n" || c.Packages[0].DefaultChannel != "stable-v0" {
		t.Errorf("got %q, default %q", got, c.Packages[0].DefaultChannel)
	}
	// YAML 1.1 booleans, which upstream's YAML reader accepts.
	c, err = Render(context.Background(), []byte("schema: olm.semver\ngenerateMajorChannels: yes\ngenerateMinorChannels: no\nstable:\n  bundles:\n  - image: "+img+"\n"), Options{RenderBundle: r.render(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got := graph(c); got != "stable-v0 op.v0.1.0\n" {
		t.Errorf("yes/no: got %q", got)
	}
}

// TestRenderCancelled: a cancelled context stops rendering with its error.
func TestRenderCancelled(t *testing.T) {
	t.Parallel()
	tmpl, r := upstreamTemplate(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Render(ctx, []byte(tmpl), Options{RenderBundle: r.render(nil)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestParseImages: Images lists each image once, in template order by
// archetype, before anything is rendered.
func TestParseImages(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse([]byte("schema: olm.semver\nstable:\n  bundles:\n  - image: c\n  - image: a\ncandidate:\n  bundles:\n  - image: a\n  - image: b\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tmpl.Images(), " "); got != "a b c" {
		t.Errorf("Images() = %q, want a b c", got)
	}
	if !tmpl.GenerateMinorChannels || tmpl.GenerateMajorChannels || tmpl.DefaultChannelTypePreference != Minor {
		t.Errorf("defaults: %+v", tmpl)
	}
}

// TestDocExample renders the example of docs/semver-template.md and checks
// what the page says of it.
func TestDocExample(t *testing.T) {
	t.Parallel()
	r := registry{}
	for _, v := range []string{"1.0.0", "1.0.1", "1.1.0"} {
		img := r.add("op", v, "", "")
		r["quay.io/me/op-bundle:v"+v] = r[img]
	}
	doc, err := os.ReadFile("../../../../docs/semver-template.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```yaml\n")
	tmpl, _, _ := strings.Cut(rest, "```")
	c, err := Render(context.Background(), []byte(tmpl), Options{RenderBundle: r.render(nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := `candidate-v1.0 op.v1.0.0
candidate-v1.0 op.v1.0.1 [op.v1.0.0]
candidate-v1.1 op.v1.1.0 <op.v1.0.1 [op.v1.0.0]
fast-v1.0 op.v1.0.1
stable-v1.0 op.v1.0.1
`
	if got := graph(c); got != want || c.Packages[0].DefaultChannel != "stable-v1.0" {
		t.Errorf("got\n%s(default %s), want\n%s(default stable-v1.0)", got, c.Packages[0].DefaultChannel, want)
	}
}
