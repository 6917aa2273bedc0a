package addbundle

import (
	"strings"
	"testing"
)

var v3 = Bundle{Name: "op.v0.3.0", Package: "op", Version: "0.3.0", Image: "quay.io/me/op-bundle:v0.3.0"}

const basicYAML = `# The op catalog.
schema: olm.template.basic
entries:
  - schema: olm.package
    name: op
    defaultChannel: stable   # what clusters get

  - schema: olm.channel
    package: op
    name: stable
    entries:
      - name: op.v0.1.0
      # 0.2.0 fixed the webhook
      - name: op.v0.2.0
        replaces: op.v0.1.0

  - schema: olm.bundle
    image: quay.io/me/op-bundle:v0.1.0
  - schema: olm.bundle
    image: quay.io/me/op-bundle:v0.2.0
# end
`

func TestAddBasicKeepsTheFile(t *testing.T) {
	t.Parallel()
	res, err := Add("basic.yaml", []byte(basicYAML), v3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(basicYAML, `      - name: op.v0.2.0
        replaces: op.v0.1.0
`, `      - name: op.v0.2.0
        replaces: op.v0.1.0
      - name: op.v0.3.0
        replaces: op.v0.2.0
`, 1)
	want = strings.Replace(want, `    image: quay.io/me/op-bundle:v0.2.0
`, `    image: quay.io/me/op-bundle:v0.2.0
  - schema: olm.bundle
    image: quay.io/me/op-bundle:v0.3.0
`, 1)
	if string(res.Data) != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Data, want)
	}
	if !res.Changed || len(res.Changes) != 2 {
		t.Errorf("changes: %v", res.Changes)
	}
	// Twice: nothing more.
	again, err := Add("basic.yaml", res.Data, v3, Options{})
	if err != nil || again.Changed || string(again.Data) != string(res.Data) {
		t.Errorf("second add changed the template: %v %v\n%s", err, again.Changes, again.Data)
	}
}

func TestAddBasicNewChannelAndEdges(t *testing.T) {
	t.Parallel()
	res, err := Add("basic.yaml", []byte(basicYAML), v3, Options{Channels: []string{"stable", "fast"}, Skips: []string{"op.v0.2.0"}, Replaces: "op.v0.1.0", SkipRange: ">=0.1.0 <0.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Data)
	for _, want := range []string{
		"      - name: op.v0.3.0\n        replaces: op.v0.1.0\n        skips:\n          - op.v0.2.0\n        skipRange: '>=0.1.0 <0.3.0'\n",
		"  - schema: olm.channel\n    package: op\n    name: fast\n    entries:\n      - name: op.v0.3.0\n        replaces: op.v0.1.0\n        skips:\n          - op.v0.2.0\n        skipRange: '>=0.1.0 <0.3.0'\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "# 0.2.0 fixed the webhook") || !strings.HasSuffix(out, "# end\n") {
		t.Error("comments lost")
	}
	// The result still parses as the same kind of template, with the
	// new channel after the old one.
	if strings.Index(out, "name: fast") < strings.Index(out, "name: stable") {
		t.Error("new channel not after the last channel")
	}
}

func TestAddBasicRefusesTwoHeads(t *testing.T) {
	t.Parallel()
	_, err := Add("basic.yaml", []byte(basicYAML), v3, Options{Replaces: "op.v0.1.0"})
	if err == nil || !strings.Contains(err.Error(), "would leave 2 heads") || !strings.Contains(err.Error(), "--replaces op.v0.2.0") {
		t.Fatalf("got %v", err)
	}
	other := v3
	other.Package = "other"
	if _, err := Add("basic.yaml", []byte(basicYAML), other, Options{}); err == nil || !strings.Contains(err.Error(), "package op") {
		t.Errorf("another package's bundle: %v", err)
	}
}

func TestAddBasicJSONAndFlow(t *testing.T) {
	t.Parallel()
	in := `{"schema": "olm.template.basic", "entries": [
  {"schema": "olm.package", "name": "op", "defaultChannel": "stable"},
  {"schema": "olm.channel", "package": "op", "name": "stable", "entries": [{"name": "op.v0.2.0"}]},
  {"schema": "olm.bundle", "image": "quay.io/me/op-bundle:v0.2.0"}
]}
`
	res, err := Add("basic.json", []byte(in), v3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema": "olm.template.basic", "entries": [
  {"schema": "olm.package", "name": "op", "defaultChannel": "stable"},
  {"schema": "olm.channel", "package": "op", "name": "stable", "entries": [{"name": "op.v0.2.0"}, {"name": "op.v0.3.0", "replaces": "op.v0.2.0"}]},
  {"schema": "olm.bundle", "image": "quay.io/me/op-bundle:v0.2.0"}, {"schema": "olm.bundle", "image": "quay.io/me/op-bundle:v0.3.0"}
]}
`
	if string(res.Data) != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Data, want)
	}
}

func TestAddSemver(t *testing.T) {
	t.Parallel()
	in := `schema: olm.semver
generateMajorChannels: true
stable:
  bundles:
  - image: quay.io/me/op-bundle:v0.2.0   # GA
`
	res, err := Add("semver.yaml", []byte(in), v3, Options{Channels: []string{"stable", "candidate"}})
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want = strings.Replace(want, "  - image: quay.io/me/op-bundle:v0.2.0   # GA\n", "  - image: quay.io/me/op-bundle:v0.2.0   # GA\n  - image: quay.io/me/op-bundle:v0.3.0\n", 1)
	want += "candidate:\n  bundles:\n  - image: quay.io/me/op-bundle:v0.3.0\n" // indented as stable's list
	if string(res.Data) != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Data, want)
	}
	again, err := Add("semver.yaml", res.Data, v3, Options{Channels: []string{"stable", "candidate"}})
	if err != nil || again.Changed {
		t.Errorf("second add: %v %v", err, again.Changes)
	}
	if _, err := Add("semver.yaml", []byte(in), v3, Options{Replaces: "x"}); err == nil {
		t.Error("--replaces on a semver template: want an error")
	}
}

// TestAddBasicCSVEdges (issue 36, item 1): the CSV's replaces, skips and
// olm.skipRange become the entry's edges, written in the file's style and
// said; flags override them; a new channel is a block in a block file.
func TestAddBasicCSVEdges(t *testing.T) {
	t.Parallel()
	csv := []byte(`{"metadata":{"name":"op.v0.3.0","annotations":{"olm.skipRange":">=0.1.0 <0.3.0"}},"spec":{"replaces":"op.v0.2.0","skips":["op.v0.2.0"," op.v0.1.0 "]}}`)
	edges, err := CSVEdges(csv)
	if err != nil {
		t.Fatal(err)
	}
	if edges.Replaces != "op.v0.2.0" || strings.Join(edges.Skips, ",") != "op.v0.2.0,op.v0.1.0" || edges.SkipRange != ">=0.1.0 <0.3.0" {
		t.Fatalf("CSVEdges: %+v", edges)
	}
	if _, err := CSVEdges([]byte(`{"spec":{"skips":"x"}}`)); err == nil {
		t.Error("skips not a list: want an error")
	}

	res, err := Add("basic.yaml", []byte(basicYAML), v3, Options{CSV: edges})
	if err != nil {
		t.Fatal(err)
	}
	want := "      - name: op.v0.3.0\n        replaces: op.v0.2.0\n        skips:\n          - op.v0.2.0\n          - op.v0.1.0\n        skipRange: '>=0.1.0 <0.3.0'\n"
	if !strings.Contains(string(res.Data), want) {
		t.Errorf("missing %q in:\n%s", want, res.Data)
	}
	if !strings.Contains(strings.Join(res.Changes, "\n"), "channel stable: entry op.v0.3.0, replaces op.v0.2.0, skips op.v0.2.0,op.v0.1.0, skipRange >=0.1.0 <0.3.0 (from the CSV)") {
		t.Errorf("changes: %q", res.Changes)
	}

	// A flag overrides the CSV's edges.
	res, err = Add("basic.yaml", []byte(basicYAML), v3, Options{CSV: edges, Replaces: "op.v0.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.Data), "skipRange") || !strings.Contains(strings.Join(res.Changes, "\n"), "entry op.v0.3.0, replaces op.v0.2.0\n") && !strings.HasSuffix(strings.Join(res.Changes, "\n"), "entry op.v0.3.0, replaces op.v0.2.0") {
		t.Errorf("flags did not override the CSV:\n%s\n%q", res.Data, res.Changes)
	}

	// The CSV replaces a bundle that is not the head: refused, saying the
	// edges came from the CSV.
	_, err = Add("basic.yaml", []byte(basicYAML), v3, Options{CSV: Edges{Replaces: "op.v0.1.0"}})
	if err == nil || !strings.Contains(err.Error(), "with the CSV's edges (replaces op.v0.1.0) would leave 2 heads") {
		t.Errorf("got %v", err)
	}
	// A skipRange alone is not refused: it may cover the head.
	if _, err := Add("basic.yaml", []byte(basicYAML), v3, Options{CSV: Edges{SkipRange: "<0.3.0"}}); err != nil {
		t.Errorf("skipRange only: %v", err)
	}
}

// TestAddBasicNewChannelStyle: a new channel takes the file's list
// indentation and flow lists where the file has them, and, without edges,
// upgrades from the default channel's head.
func TestAddBasicNewChannelStyle(t *testing.T) {
	t.Parallel()
	in := `schema: olm.template.basic
entries:
- schema: olm.package
  name: op
  defaultChannel: alpha
- schema: olm.channel
  package: op
  name: alpha
  entries:
  - name: op.v0.1.0
  - name: op.v0.2.0
    replaces: op.v0.1.0
    skips: [op.v0.1.0]
- schema: olm.bundle
  image: quay.io/me/op-bundle:v0.2.0
`
	res, err := Add("basic.yaml", []byte(in), v3, Options{Channels: []string{"stable"}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(in, "    skips: [op.v0.1.0]\n", "    skips: [op.v0.1.0]\n- schema: olm.channel\n  package: op\n  name: stable\n  entries:\n  - name: op.v0.3.0\n    replaces: op.v0.2.0\n", 1) +
		"- schema: olm.bundle\n  image: quay.io/me/op-bundle:v0.3.0\n"
	if string(res.Data) != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Data, want)
	}
	if !strings.Contains(strings.Join(res.Changes, "\n"), "channel stable created: entry op.v0.3.0, replaces op.v0.2.0 (the head of the default channel alpha)") {
		t.Errorf("changes: %q", res.Changes)
	}
	res, err = Add("basic.yaml", []byte(in), v3, Options{Channels: []string{"alpha"}, CSV: Edges{Replaces: "op.v0.2.0", Skips: []string{"op.v0.2.0", "op.v0.1.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Data), "  - name: op.v0.3.0\n    replaces: op.v0.2.0\n    skips: [op.v0.2.0, op.v0.1.0]\n") {
		t.Errorf("skips not in the file's flow style:\n%s", res.Data)
	}
}

func FuzzCSVEdges(f *testing.F) {
	f.Add([]byte(`{"metadata":{"annotations":{"olm.skipRange":"<1.0.0"}},"spec":{"replaces":"a.v0.9.0","skips":["a.v0.8.0"]}}`))
	f.Add([]byte(`{"spec":{"skips":[" ",""]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := CSVEdges(data)
		if err != nil {
			return
		}
		for _, s := range e.Skips {
			if strings.TrimSpace(s) == "" || s != strings.TrimSpace(s) {
				t.Fatalf("skip %q kept", s)
			}
		}
	})
}
