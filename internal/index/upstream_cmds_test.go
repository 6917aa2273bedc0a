package index

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
)

func TestPruneKeepsOnlyNamedPackages(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{},
		spec{pkg: "a", version: "1.0.0", owned: []string{"Widget"}},
		spec{pkg: "b", version: "1.0.0", owned: []string{"Widget", "OnlyB"}},
		spec{pkg: "c", version: "1.0.0"},
	)
	res, err := db.Prune(ctx, []string{"a", "ghost", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Kept, ",") != "a" {
		t.Errorf("kept %v, want [a]", res.Kept)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "ghost") {
		t.Errorf("warnings %v, want one naming ghost", res.Warnings)
	}
	if res.Removed == nil || strings.Join(res.Removed.Packages, ",") != "b,c" {
		t.Fatalf("removed %+v, want packages b,c", res.Removed)
	}
	names, _ := db.PackageNames(ctx)
	if strings.Join(names, ",") != "a" {
		t.Errorf("packages left %v", names)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM operatorbundle`); n != 1 {
		t.Errorf("%d bundles left, want a's one", n)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM api WHERE kind = 'Widget'`); n != 1 {
		t.Errorf("Widget (provided by the kept a) gone")
	}
	if n := count(t, db, `SELECT COUNT(*) FROM api WHERE kind = 'OnlyB'`); n != 0 {
		t.Errorf("OnlyB kept after b was pruned")
	}

	// Keeping everything there is changes nothing.
	res, err = db.Prune(ctx, []string{"a"})
	if err != nil || res.Removed != nil {
		t.Errorf("second prune: %+v, %v", res, err)
	}
	if _, err := db.Prune(ctx, nil); err == nil || !strings.Contains(err.Error(), "--packages") {
		t.Errorf("empty keep list: %v, want a refusal naming --packages", err)
	}
}

func TestPruneStranded(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{}, spec{pkg: "a", version: "1.0.0", owned: []string{"Widget"}})
	// Stranded rows as upstream's non-atomic adds left them: a bundle with
	// properties, an image and an API but no channel entry; a deprecated
	// bundle of a package still present (kept, as upstream); a deprecated
	// bundle of a package that is gone (removed).
	for _, q := range []string{
		`INSERT INTO operatorbundle(name, version, bundlepath) VALUES ('lost.v1', '1.0.0', 'r/lost:1')`,
		`INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES ('olm.package', '{"packageName":"lost","version":"1.0.0"}', 'lost.v1', '1.0.0', 'r/lost:1')`,
		`INSERT INTO related_image(image, operatorbundle_name) VALUES ('r/lost:1', 'lost.v1')`,
		`INSERT INTO api(group_name, version, kind, plural) VALUES ('x.io', 'v1', 'Lost', 'losts')`,
		`INSERT INTO api_provider(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES ('x.io', 'v1', 'Lost', 'lost.v1', '1.0.0', 'r/lost:1')`,
		`INSERT INTO operatorbundle(name, version, bundlepath) VALUES ('a.v0.9.0', '0.9.0', 'r/a:0.9.0')`,
		`INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES ('olm.package', '{"packageName":"a","version":"0.9.0"}', 'a.v0.9.0', '0.9.0', 'r/a:0.9.0')`,
		`INSERT INTO deprecated(operatorbundle_name) VALUES ('a.v0.9.0')`,
		`INSERT INTO operatorbundle(name, version, bundlepath) VALUES ('gone.v1', '1.0.0', 'r/gone:1')`,
		`INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES ('olm.package', '{"packageName":"gone","version":"1.0.0"}', 'gone.v1', '1.0.0', 'r/gone:1')`,
		`INSERT INTO deprecated(operatorbundle_name) VALUES ('gone.v1')`,
		`INSERT INTO deprecated(operatorbundle_name) VALUES ('never.existed')`,
	} {
		if _, err := db.sql.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	res, err := db.PruneStranded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var removed []string
	for _, b := range res.Removed {
		removed = append(removed, b.Name)
	}
	if strings.Join(removed, ",") != "gone.v1,lost.v1" {
		t.Errorf("removed %v, want gone.v1,lost.v1", removed)
	}
	for q, want := range map[string]int{
		`SELECT COUNT(*) FROM operatorbundle WHERE name = 'a.v1.0.0'`:              1,
		`SELECT COUNT(*) FROM operatorbundle WHERE name = 'a.v0.9.0'`:              1,
		`SELECT COUNT(*) FROM operatorbundle WHERE name IN ('lost.v1', 'gone.v1')`: 0,
		`SELECT COUNT(*) FROM properties WHERE operatorbundle_name = 'lost.v1'`:    0,
		`SELECT COUNT(*) FROM related_image WHERE operatorbundle_name = 'lost.v1'`: 0,
		`SELECT COUNT(*) FROM api WHERE kind = 'Lost'`:                             0,
		`SELECT COUNT(*) FROM api WHERE kind = 'Widget'`:                           1,
		`SELECT COUNT(*) FROM deprecated`:                                          1,
	} {
		if n := count(t, db, q); n != want {
			t.Errorf("%s = %d, want %d", q, n, want)
		}
	}
	// Nothing stranded: nothing removed.
	res, err = db.PruneStranded(ctx)
	if err != nil || len(res.Removed) != 0 {
		t.Errorf("second run: %+v, %v", res, err)
	}
}

func TestListAndColumns(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{},
		spec{pkg: "etc", version: "1.0.0", channels: "stable,fast", def: "stable"},
		spec{pkg: "etc", version: "1.1.0", replaces: "etc.v1.0.0", skips: []string{"etc.v1.0.5"}, skipRange: ">=0.9.0 <1.1.0", channels: "fast", def: "stable"},
		spec{pkg: "b", version: "2.0.0"},
	)
	pkgs, err := db.ListPackages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePackages(&buf, pkgs); err != nil {
		t.Fatal(err)
	}
	want := "NAME  DISPLAY NAME  DEFAULT CHANNEL\n" +
		"b                   stable\n" +
		"etc                 stable\n"
	if buf.String() != want {
		t.Errorf("packages:\n%q\nwant\n%q", buf.String(), want)
	}

	chans, err := db.ListChannels(ctx, "etc")
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	_ = WriteChannels(&buf, chans)
	want = "PACKAGE  CHANNEL  HEAD\n" +
		"etc      fast     etc.v1.1.0\n" +
		"etc      stable   etc.v1.0.0\n"
	if buf.String() != want {
		t.Errorf("channels:\n%s\nwant\n%s", buf.String(), want)
	}

	bundles, err := db.ListBundles(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	_ = WriteBundles(&buf, bundles)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("bundles:\n%s", buf.String())
	}
	if !strings.HasPrefix(lines[0], "PACKAGE  CHANNEL  BUNDLE      REPLACES    SKIPS       SKIP RANGE      IMAGE") {
		t.Errorf("header %q", lines[0])
	}
	if f := strings.Fields(lines[3]); len(f) < 8 || f[0] != "etc" || f[1] != "fast" || f[2] != "etc.v1.1.0" || f[3] != "etc.v1.0.0" || f[4] != "etc.v1.0.5" || f[5] != ">=0.9.0" {
		t.Errorf("etc fast 1.1.0 row %q", lines[3])
	}
	if _, err := db.ListBundles(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `"nope" not found`) {
		t.Errorf("unknown package: %v", err)
	}
}

func TestRenderGraphForm(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	mustAdd(t, db, AddOptions{},
		spec{pkg: "p", version: "1.0.0", channels: "stable"},
		spec{pkg: "p", version: "1.0.1", replaces: "p.v1.0.0", channels: "stable"},
		spec{pkg: "p", version: "1.1.0", replaces: "p.v1.0.0", skips: []string{"p.v1.0.1"}, skipRange: ">=1.0.0 <1.1.0", channels: "stable"},
	)
	var buf bytes.Buffer
	if _, err := db.RenderGraph(ctx, &buf, GraphOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "p"
  subgraph "p"
    %% channel "stable"
    subgraph p-stable["stable"]
      p-stable-p.v1.1.0["p.v1.1.0"]
      p-stable-p.v1.0.1["p.v1.0.1"]-- skip --> p-stable-p.v1.1.0["p.v1.1.0"]
      p-stable-p.v1.0.0["p.v1.0.0"]-- "skipRange(>=1.0.0 <1.1.0)" --> p-stable-p.v1.1.0["p.v1.1.0"]
      p-stable-p.v1.0.1["p.v1.0.1"]-- "skipRange(>=1.0.0 <1.1.0)" --> p-stable-p.v1.1.0["p.v1.1.0"]
      p-stable-p.v1.0.0["p.v1.0.0"]-- replace --> p-stable-p.v1.1.0["p.v1.1.0"]
      p-stable-p.v1.0.1["p.v1.0.1"]
      p-stable-p.v1.0.0["p.v1.0.0"]-- replace --> p-stable-p.v1.0.1["p.v1.0.1"]
      p-stable-p.v1.0.0["p.v1.0.0"]
    end
  end
class p-stable-p.v1.0.1 skipped
linkStyle 4 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}

	buf.Reset()
	if _, err := db.RenderGraph(ctx, &buf, GraphOptions{MinimumEdge: "p.v1.0.1"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `p-stable-p.v1.0.0["p.v1.0.0"]--`) {
		t.Errorf("edges from below the minimum edge drawn:\n%s", buf.String())
	}
	if _, err := db.RenderGraph(ctx, &buf, GraphOptions{MinimumEdge: "nope"}); err == nil {
		t.Error("unknown minimum edge accepted")
	}
	buf.Reset()
	if _, err := db.RenderGraph(ctx, &buf, GraphOptions{Package: "other"}); err != nil || strings.Contains(buf.String(), "subgraph") {
		t.Errorf("package filter: %v\n%s", err, buf.String())
	}
}

// fbcModel reads an upstream `opm render` of a reference database: the
// catalog model upstream's list and render-graph commands worked from.
type fbcModel struct {
	defaults map[string]string
	channels []*graphChannel
	versions map[string]semver.Version
	images   map[string]string
	display  map[string]string
}

func readFBC(t *testing.T, path string) *fbcModel {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &fbcModel{defaults: map[string]string{}, versions: map[string]semver.Version{}, images: map[string]string{}, display: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var o struct {
			Schema, Name, Package, DefaultChannel, Image string
			Entries                                      []struct {
				Name, Replaces, SkipRange string
				Skips                     []string
			}
			Properties []struct {
				Type  string
				Value json.RawMessage
			}
		}
		if err := dec.Decode(&o); err != nil {
			t.Fatal(err)
		}
		switch o.Schema {
		case "olm.package":
			m.defaults[o.Name] = o.DefaultChannel
		case "olm.channel":
			c := &graphChannel{pkg: o.Package, name: o.Name}
			for _, e := range o.Entries {
				c.entries = append(c.entries, graphEntry{name: e.Name, replaces: e.Replaces, skips: e.Skips, skipRange: e.SkipRange})
			}
			sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].name < c.entries[j].name })
			m.channels = append(m.channels, c)
		case "olm.bundle":
			m.images[o.Name] = o.Image
			for _, p := range o.Properties {
				switch p.Type {
				case "olm.package":
					var v struct{ Version string }
					_ = json.Unmarshal(p.Value, &v)
					m.versions[o.Name] = semver.MustParse(v.Version)
				case "olm.bundle.object":
					var v struct{ Data string }
					_ = json.Unmarshal(p.Value, &v)
					raw, _ := base64.StdEncoding.DecodeString(v.Data)
					var obj struct {
						Kind string
						Spec struct{ DisplayName string }
					}
					if json.Unmarshal(raw, &obj) == nil && obj.Kind == "ClusterServiceVersion" {
						m.display[o.Name] = obj.Spec.DisplayName
					}
				}
			}
		}
	}
	return m
}

// head is the one entry no other entry replaces or skips.
func (c *graphChannel) head() string {
	under := map[string]bool{}
	for _, e := range c.entries {
		under[e.replaces] = true
		for _, s := range e.skips {
			under[s] = true
		}
	}
	var heads []string
	for _, e := range c.entries {
		if !under[e.name] {
			heads = append(heads, e.name)
		}
	}
	if len(heads) != 1 {
		return "?"
	}
	return heads[0]
}

// TestListAndGraphMatchUpstreamRender reads every reference database upstream
// v1.73.0 built and checks the rows and the graph against upstream's own
// render of it (the model its `alpha list` and `alpha render-graph` used).
func TestListAndGraphMatchUpstreamRender(t *testing.T) {
	needShared(t)
	dbs, _ := filepath.Glob(filepath.Join(referenceDir, "*.db"))
	if len(dbs) == 0 {
		t.Fatal("no reference databases")
	}
	ctx := context.Background()
	for _, path := range dbs {
		name := strings.TrimSuffix(filepath.Base(path), ".db")
		t.Run(name, func(t *testing.T) {
			m := readFBC(t, strings.TrimSuffix(path, ".db")+".fbc.json")
			db, err := OpenReadOnly(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()

			pkgs, err := db.ListPackages(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pkgs {
				if p.DefaultChannel != m.defaults[p.Name] {
					t.Errorf("package %s default %q, upstream %q", p.Name, p.DefaultChannel, m.defaults[p.Name])
				}
				for _, c := range m.channels {
					if c.pkg == p.Name && c.name == p.DefaultChannel && m.display[c.head()] != p.DisplayName {
						t.Errorf("package %s display name %q, upstream %q", p.Name, p.DisplayName, m.display[c.head()])
					}
				}
			}

			chans, err := db.ListChannels(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(chans) != len(m.channels) {
				t.Fatalf("%d channels, upstream %d", len(chans), len(m.channels))
			}
			want := map[string]string{}
			for _, c := range m.channels {
				want[c.pkg+"/"+c.name] = c.head()
			}
			for _, c := range chans {
				if want[c.Package+"/"+c.Channel] != c.Head {
					t.Errorf("channel %s/%s head %s, upstream %s", c.Package, c.Channel, c.Head, want[c.Package+"/"+c.Channel])
				}
			}

			rows, err := db.ListBundles(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			var got, exp []string
			for _, r := range rows {
				got = append(got, strings.Join([]string{r.Package, r.Channel, r.Bundle, r.Replaces, strings.Join(r.Skips, ","), r.SkipRange, r.Image}, "|"))
			}
			for _, c := range m.channels {
				for _, e := range c.entries {
					exp = append(exp, strings.Join([]string{c.pkg, c.name, e.name, e.replaces, strings.Join(e.skips, ","), e.skipRange, m.images[e.name]}, "|"))
				}
			}
			sort.Strings(exp)
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(exp, "\n") {
				onlyGot, onlyExp := diffRows(got, exp)
				t.Errorf("bundle rows differ from upstream's render\nonly opm: %v\nonly upstream: %v", onlyGot, onlyExp)
			}

			var fromDB, fromFBC bytes.Buffer
			if _, err := db.RenderGraph(ctx, &fromDB, GraphOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := writeMermaid(&fromFBC, m.channels, m.versions, GraphOptions{}, &GraphResult{}); err != nil {
				t.Fatal(err)
			}
			if fromDB.String() != fromFBC.String() {
				t.Errorf("graph differs from the one drawn from upstream's render:\n%s\n---\n%s", fromDB.String(), fromFBC.String())
			}
		})
	}
}
