package catalogui_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/catalogui"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/httpcatalog"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/shareddata"
)

// serveDir serves a catalog directory as opm serve --http-ui does.
func serveDir(t *testing.T, dir string, opts catalogui.Options) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := httpcatalog.Listen(dir, httpcatalog.ServerOptions{Listener: lis, Handler: httpcatalog.Options{
		UI: func(s *httpcatalog.Store) http.Handler { return catalogui.Handler(s, opts) }}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done; _ = srv.Close() })
	return "http://" + srv.Addr().String()
}

// csvSpec is what a fixture CSV says.
type csvSpec struct {
	annotations  map[string]string
	description  string
	provider     string
	kinds        []string
	installModes []string
}

func (c csvSpec) fields() map[string]any {
	var owned []map[string]any
	for _, k := range c.kinds {
		owned = append(owned, map[string]any{"name": strings.ToLower(k) + "s.example.com", "version": "v1", "kind": k})
	}
	var modes []map[string]any
	for _, m := range []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"} {
		sup := false
		for _, x := range c.installModes {
			sup = sup || x == m
		}
		modes = append(modes, map[string]any{"type": m, "supported": sup})
	}
	return map[string]any{"description": c.description, "provider": map[string]any{"name": c.provider}, "installModes": modes,
		"customresourcedefinitions": map[string]any{"owned": owned}}
}

// bundleBlob is a bundle of pkg at version, with the CSV as
// olm.bundle.object (or as olm.csv.metadata when meta is set); no CSV
// when spec is nil.
func bundleBlob(pkg, name, version string, spec *csvSpec, meta bool) string {
	props := []map[string]any{{"type": "olm.package", "value": map[string]any{"packageName": pkg, "version": version}}}
	if spec != nil {
		f := spec.fields()
		if meta {
			f["annotations"] = spec.annotations
			f["crdDescriptions"] = f["customresourcedefinitions"]
			delete(f, "customresourcedefinitions")
			props = append(props, map[string]any{"type": "olm.csv.metadata", "value": f})
		} else {
			f["version"] = version
			csv := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
				"metadata": map[string]any{"name": name, "annotations": spec.annotations}, "spec": f}
			data, _ := json.Marshal(csv)
			props = append(props, map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": base64.StdEncoding.EncodeToString(data)}})
		}
	}
	b, _ := json.Marshal(map[string]any{"schema": "olm.bundle", "name": name, "package": pkg, "image": "example.com/" + pkg + ":" + version, "properties": props})
	return string(b)
}

func blob(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// hardFixture writes three packages that are hard to show: fan (a head
// that skips 10 bundles), chain (60 bundles, each replacing the one
// before) and multi (channels stable-3.6 … stable-3.17).
func hardFixture(t *testing.T) string {
	t.Helper()
	var lines []string
	// fan: the head's CSV has an annotation description.
	lines = append(lines, blob(map[string]any{"schema": "olm.package", "name": "fan", "defaultChannel": "stable"}))
	var fanEntries []map[string]any
	var skipped []string
	for i := range 10 {
		n := fmt.Sprintf("fan.v1.0.%d", i)
		skipped = append(skipped, n)
		fanEntries = append(fanEntries, map[string]any{"name": n})
		lines = append(lines, bundleBlob("fan", n, fmt.Sprintf("1.0.%d", i), nil, false))
	}
	fanEntries = append(fanEntries, map[string]any{"name": "fan.v2.0.0", "skips": skipped, "skipRange": "<2.0.0"})
	lines = append(lines, blob(map[string]any{"schema": "olm.channel", "name": "stable", "package": "fan", "entries": fanEntries}))
	lines = append(lines, bundleBlob("fan", "fan.v2.0.0", "2.0.0", &csvSpec{
		annotations: map[string]string{"description": "Keeps a whirlwind of replicas spinning.", "capabilities": "Seamless Upgrades", "categories": "Networking, Storage"},
		description: "# Fan\n\nThe long text.", provider: "Fanatic Labs", kinds: []string{"Propeller"}, installModes: []string{"AllNamespaces", "OwnNamespace"}}, false))

	// chain: no annotation description; the first sentence of spec.description.
	lines = append(lines, blob(map[string]any{"schema": "olm.package", "name": "chain", "defaultChannel": "stable"}))
	var chainEntries []map[string]any
	for i := range 60 {
		n := fmt.Sprintf("chain.v1.0.%d", i)
		e := map[string]any{"name": n}
		if i > 0 {
			e["replaces"] = fmt.Sprintf("chain.v1.0.%d", i-1)
		}
		chainEntries = append(chainEntries, e)
		var spec *csvSpec
		if i == 59 {
			spec = &csvSpec{annotations: map[string]string{"capabilities": "Basic Install", "categories": "Storage"},
				description: "## Chain\n\nLinks **sixty** bundles, [one](https://example.com) after the other. Nothing else.",
				provider:    "Blacksmith Ltd", kinds: []string{"Shackle"}, installModes: []string{"AllNamespaces"}}
		}
		lines = append(lines, bundleBlob("chain", n, fmt.Sprintf("1.0.%d", i), spec, false))
	}
	lines = append(lines, blob(map[string]any{"schema": "olm.channel", "name": "stable", "package": "chain", "entries": chainEntries}))
	lines = append(lines, blob(map[string]any{"schema": "olm.deprecations", "package": "chain", "entries": []map[string]any{
		{"reference": map[string]any{"schema": "olm.package"}, "message": "use fan"},
		{"reference": map[string]any{"schema": "olm.bundle", "name": "chain.v1.0.3"}, "message": "broken"}}}))

	// multi: olm.csv.metadata only, OwnNamespace only (OLM v1 refuses it).
	lines = append(lines, blob(map[string]any{"schema": "olm.package", "name": "multi", "defaultChannel": "stable-3.12"}))
	for minor := 6; minor <= 17; minor++ {
		n := fmt.Sprintf("multi.v3.%d.0", minor)
		entries := []map[string]any{{"name": n}}
		if minor > 6 {
			prev := fmt.Sprintf("multi.v3.%d.0", minor-1)
			entries = []map[string]any{{"name": prev}, {"name": n, "replaces": prev}}
		}
		lines = append(lines, blob(map[string]any{"schema": "olm.channel", "name": fmt.Sprintf("stable-3.%d", minor), "package": "multi", "entries": entries}))
		lines = append(lines, bundleBlob("multi", n, fmt.Sprintf("3.%d.0", minor), &csvSpec{
			annotations: map[string]string{"description": "Surfs a dozen channels.", "capabilities": "Full Lifecycle", "categories": "Database"},
			description: "Multi.", provider: "Channel Surfers", kinds: []string{"Wave"}, installModes: []string{"OwnNamespace"}}, true))
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return dir
}

// corpusCatalog builds a catalog from every package of ../shared/corpus
// as an index image holds it: each package added to one database in the
// mode its ci.yaml names (bundles that cannot be added left out, as
// --permissive does), rendered as a file-based catalog.
func corpusCatalog(t *testing.T) string {
	t.Helper()
	real := shareddata.Require(t, "corpus", "real")
	db, err := index.Create(filepath.Join(t.TempDir(), "index.db"))
	require.NoError(t, err)
	defer db.Close()
	pkgs, err := os.ReadDir(real)
	require.NoError(t, err)
	for _, p := range pkgs {
		if !p.IsDir() {
			continue
		}
		ci, _ := os.ReadFile(filepath.Join(real, p.Name(), "ci.yaml"))
		mode := index.ModeReplaces
		if regexp.MustCompile(`(?m)^\s*updateGraph:\s*semver-mode`).Match(ci) {
			mode = index.ModeSemver
		}
		vers, err := os.ReadDir(filepath.Join(real, p.Name()))
		require.NoError(t, err)
		var lbs []index.LoadedBundle
		for _, v := range vers {
			if !v.IsDir() {
				continue
			}
			dir := filepath.Join(real, p.Name(), v.Name())
			b, err := bundle.LoadDir(dir)
			require.NoError(t, err, dir)
			lbs = append(lbs, index.LoadedBundle{Bundle: b, BundlePath: "example.com/" + p.Name() + "-bundle:" + v.Name()})
		}
		_, err = db.Add(context.Background(), lbs, index.AddOptions{Mode: mode, Permissive: true})
		require.NoError(t, err, p.Name())
	}
	c, _, err := fbc.FromIndex(context.Background(), db, fbc.RenderOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, fbc.WriteDir(dir, c, fbc.WriteDirOptions{}))
	return dir
}

// catalogPackages reads a catalog directory back: packages, their
// channels, and each default channel head's CSV (metadata and spec).
type corpusPkg struct {
	name, defaultChannel string
	channels             []string
	csv                  map[string]any
}

func readCatalog(t *testing.T, dir string) map[string]*corpusPkg {
	t.Helper()
	c, err := fbc.LoadDir(dir)
	require.NoError(t, err)
	out := map[string]*corpusPkg{}
	for _, p := range c.Packages {
		out[p.Name] = &corpusPkg{name: p.Name, defaultChannel: p.DefaultChannel}
	}
	heads := map[string]string{}
	for _, ch := range c.Channels {
		out[ch.Package].channels = append(out[ch.Package].channels, ch.Name)
		if ch.Name != out[ch.Package].defaultChannel {
			continue
		}
		in := map[string]bool{}
		for _, e := range ch.Entries {
			if e.Replaces != "" {
				in[e.Replaces] = true
			}
			for _, s := range e.Skips {
				in[s] = true
			}
		}
		for _, e := range ch.Entries {
			if !in[e.Name] {
				heads[ch.Package] = e.Name
			}
		}
	}
	for _, b := range c.Bundles {
		if heads[b.Package] != b.Name {
			continue
		}
		for _, p := range b.Properties {
			if p.Type != fbc.PropertyBundleObject {
				continue
			}
			o, err := fbc.DecodeBundleObject(p.Value)
			require.NoError(t, err)
			var m map[string]any
			j, err := yaml.YAMLToJSON(o.Data)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(j, &m))
			if m["kind"] == "ClusterServiceVersion" {
				out[b.Package].csv = m
			}
		}
	}
	return out
}

func str(m map[string]any, path ...string) string {
	var v any = m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	s, _ := v.(string)
	return s
}

var cardRE = regexp.MustCompile(`(?s)<li class="card package">.*?</li>`)

// cards are the package cards of an index page: package name -> card HTML.
func cards(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range cardRE.FindAllString(body, -1) {
		m := regexp.MustCompile(`<a href="/ui/packages/([^"]+)">`).FindStringSubmatch(c)
		require.NotNil(t, m, c)
		name, err := url.PathUnescape(m[1])
		require.NoError(t, err)
		out[name] = c
	}
	return out
}

// longestWord is the longest word of s that the package name does not
// hold: a search for it finds the package only through s.
func longestWord(s, name string) string {
	best := ""
	for _, w := range regexp.MustCompile(`[A-Za-z][A-Za-z-]+`).FindAllString(s, -1) {
		if len(w) > len(best) && !strings.Contains(strings.ToLower(name), strings.ToLower(w)) {
			best = w
		}
	}
	return best
}

// TestCorpusCatalog: on a catalog built from the corpus, every card has
// a description, each package is found by a word of its CSV
// description, by its provider and by a kind it owns, every channel has
// a page, and every package's Install panel parses and names it.
func TestCorpusCatalog(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := corpusCatalog(t)
	pkgs := readCatalog(t, dir)
	require.Len(t, pkgs, 13)
	base := serveDir(t, dir, catalogui.Options{CatalogName: "corpus"})

	all := cards(t, browse(t, bin, base+"/", "catalogui-corpus-index"))
	require.Len(t, all, len(pkgs))
	for name, c := range all {
		d := regexp.MustCompile(`<p class="description">([^<]+)</p>`).FindStringSubmatch(c)
		if assert.NotNil(t, d, "card of %s has no description: %s", name, c) {
			assert.Greater(t, len(strings.TrimSpace(d[1])), 10, name)
		}
	}

	searched := 0
	for name, p := range pkgs {
		if p.csv == nil {
			t.Errorf("%s: the default channel's head has no CSV in the catalog", name)
			continue
		}
		desc := str(p.csv, "metadata", "annotations", "description")
		if desc == "" {
			desc = str(p.csv, "spec", "description")
		}
		queries := map[string]string{"provider": str(p.csv, "spec", "provider", "name"), "description word": longestWord(desc, name)}
		spec, _ := p.csv["spec"].(map[string]any)
		crds, _ := spec["customresourcedefinitions"].(map[string]any)
		if owned, _ := crds["owned"].([]any); len(owned) > 0 {
			queries["owned kind"] = str(owned[0].(map[string]any), "kind")
		}
		for what, q := range queries {
			if q == "" {
				continue
			}
			_, body, _ := get(t, base+"/?q="+url.QueryEscape(q))
			assert.Contains(t, cards(t, body), name, "search for %s %q", what, q)
			searched++
		}
		for _, ch := range p.channels {
			code, body, _ := get(t, base+"/ui/packages/"+url.PathEscape(name)+"/channels/"+url.PathEscape(ch))
			assert.Equal(t, 200, code, "%s channel %s", name, ch)
			assert.Contains(t, body, `<div class="graph"><svg`, "%s channel %s has its picture", name, ch)
		}
		_, body, _ := get(t, base+"/ui/packages/"+url.PathEscape(name))
		checkInstall(t, body, name, p.defaultChannel, "corpus")
	}
	assert.Greater(t, searched, 30)

	dom := browse(t, bin, base+"/?q=database", "catalogui-corpus-search")
	assert.Contains(t, cards(t, dom), "etcd", "etcd's CSV says database")
	dom = browse(t, bin, base+"/ui/packages/skupper-operator", "catalogui-corpus-package")
	assert.Contains(t, dom, `<nav class="channels" id="channels"`)
	browse(t, bin, base+"/ui/packages/skupper-operator/channels/stable-1.8", "catalogui-corpus-channel")
	browse(t, bin, base+"/ui/packages/etcd/bundles/etcdoperator.v0.9.4", "catalogui-corpus-bundle")
}

var preRE = regexp.MustCompile(`(?s)<div id="install-(olmv0|olmv1)">.*?<pre class="yaml">(.*?)</pre>`)

// checkInstall parses the Install panel's YAML: OLM v0's Subscription
// and OLM v1's ClusterExtension name the package, channel and catalog.
func checkInstall(t *testing.T, body, pkg, channel, catalog string) {
	t.Helper()
	found := map[string]bool{}
	for _, m := range preRE.FindAllStringSubmatch(body, -1) {
		for _, doc := range strings.Split(html.UnescapeString(m[2]), "\n---\n") {
			var o struct {
				APIVersion string         `json:"apiVersion"`
				Kind       string         `json:"kind"`
				Metadata   map[string]any `json:"metadata"`
				Spec       map[string]any `json:"spec"`
			}
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &o), "%s: %s", pkg, doc)
			assert.NotEmpty(t, o.APIVersion, doc)
			assert.NotEmpty(t, o.Metadata["name"], doc)
			switch o.Kind {
			case "Subscription":
				found[o.Kind] = true
				assert.Equal(t, pkg, o.Spec["name"], doc)
				assert.Equal(t, channel, o.Spec["channel"], doc)
				assert.Equal(t, catalog, o.Spec["source"], doc)
			case "ClusterExtension":
				found[o.Kind] = true
				src := o.Spec["source"].(map[string]any)["catalog"].(map[string]any)
				assert.Equal(t, pkg, src["packageName"], doc)
				assert.Equal(t, []any{channel}, src["channels"], doc)
				assert.Equal(t, catalog, src["selector"].(map[string]any)["matchLabels"].(map[string]any)["olm.operatorframework.io/metadata.name"], doc)
			}
		}
	}
	assert.True(t, found["Subscription"] && found["ClusterExtension"], "%s: install panel %v", pkg, found)
}

// TestHardCatalogInChromium: the fixture's pages in headless Chromium:
// cards with description, provider, capability level, categories and
// deprecation; search and filters; channels in version order with the
// default first and a page each; Install panels; the upgrade question
// answered as opm alpha upgrade-path answers it.
func TestHardCatalogInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := hardFixture(t)
	base := serveDir(t, dir, catalogui.Options{CatalogName: "hard-catalog"})

	dom := browse(t, bin, base+"/", "catalogui-hub-index")
	all := cards(t, dom)
	require.Len(t, all, 3)
	assert.Contains(t, all["fan"], `<p class="description">Keeps a whirlwind of replicas spinning.</p>`)
	assert.Contains(t, all["fan"], "by Fanatic Labs")
	assert.Contains(t, all["fan"], `<span class="tag capability">Seamless Upgrades</span>`)
	assert.Contains(t, all["fan"], `<span class="tag">Networking</span><span class="tag">Storage</span>`)
	assert.Contains(t, all["chain"], `<p class="description">Links sixty bundles, one after the other.</p>`, "the first sentence of spec.description, as text")
	assert.Contains(t, all["chain"], `<span class="tag deprecated">deprecated</span>`)
	assert.NotContains(t, all["fan"], "deprecated")
	assert.Contains(t, all["multi"], "Surfs a dozen channels.", "olm.csv.metadata's annotations")
	assert.Contains(t, dom, `<a href="/?category=Storage">Storage</a> <span class="count">2</span>`)

	for q, want := range map[string][]string{"whirlwind": {"fan"}, "fanatic": {"fan"}, "propeller": {"fan"}, "SHACKLE": {"chain"},
		"surfers wave": {"multi"}, "storage": {"chain", "fan"}, "surfers shackle": nil} {
		var got []string
		for name := range cards(t, getBody(t, base+"/?q="+url.QueryEscape(q))) {
			got = append(got, name)
		}
		sort.Strings(got)
		assert.Equal(t, want, got, "search %q", q)
	}
	dom = browse(t, bin, base+"/?category=Storage&capability=Basic+Install", "catalogui-hub-filter")
	assert.Equal(t, []string{"chain"}, keys(cards(t, dom)))
	assert.Contains(t, dom, `class="on" href="/?capability=Basic+Install"`, "the category's link drops it")

	dom = browse(t, bin, base+"/ui/packages/multi", "catalogui-hub-package")
	var order []string
	for _, m := range regexp.MustCompile(`<a href="/ui/packages/multi/channels/([^"]+)">`).FindAllStringSubmatch(dom, -1) {
		order = append(order, m[1])
	}
	want := []string{"stable-3.12"}
	for minor := 6; minor <= 17; minor++ {
		if minor != 12 {
			want = append(want, fmt.Sprintf("stable-3.%d", minor))
		}
	}
	require.GreaterOrEqual(t, len(order), len(want))
	assert.Equal(t, want, order[:len(want)], "channels at the top: the default, then in version order")
	assert.Less(t, strings.Index(dom, `id="channels"`), strings.Index(dom, `id="install"`))
	checkInstall(t, dom, "multi", "stable-3.12", "hard-catalog")
	assert.Contains(t, dom, `id="olmv1-refused"`, "OwnNamespace only: OLM v1 refuses it")
	assert.Contains(t, dom, "kind: OperatorGroup", "OwnNamespace only: an OperatorGroup of its own")
	for minor := 6; minor <= 17; minor++ {
		ch := fmt.Sprintf("stable-3.%d", minor)
		code, body, _ := get(t, base+"/ui/packages/multi/channels/"+ch)
		require.Equal(t, 200, code, ch)
		assert.Contains(t, body, `<li class="channel-link current"><a href="/ui/packages/multi/channels/`+ch+`">`)
		checkInstall(t, body, "multi", ch, "hard-catalog")
	}
	code, _, _ := get(t, base+"/ui/packages/multi/channels/stable-4.0")
	assert.Equal(t, 404, code)

	dom = browse(t, bin, base+"/ui/packages/fan/channels/stable", "catalogui-hub-channel-fan")
	assert.Equal(t, 11, strings.Count(dom, `<tr class="entry">`))
	assert.Contains(t, dom, `<div class="graph"><svg`)
	checkInstall(t, dom, "fan", "stable", "hard-catalog")
	assert.Contains(t, dom, `id="olmv1-installable"`)
	dom = browse(t, bin, base+"/ui/packages/chain/channels/stable", "catalogui-hub-channel-chain")
	assert.Equal(t, 60, strings.Count(dom, `<tr class="entry">`))

	dom = browse(t, bin, base+"/ui/packages/chain/bundles/chain.v1.0.59", "catalogui-hub-bundle")
	assert.NotContains(t, dom, `id="required-apis"`, "no required API: no section")
	assert.NotContains(t, dom, `id="related-images"`)
	assert.Contains(t, dom, `<td>Shackle</td>`)
	checkInstall(t, dom, "chain", "stable", "hard-catalog")
	assert.Contains(t, dom, "startingCSV: chain.v1.0.59")
	assert.Contains(t, dom, "version: 1.0.59")

	// The upgrade question, against the real command.
	o := cmdtest.New(t)
	for i, q := range []struct{ pkg, from, channel, rules string }{
		{"chain", "1.0.10", "stable", ""},
		{"fan", "1.0.3", "", ""},
		{"multi", "3.11.0", "", "olmv1"},
		{"chain", "chain.v1.0.58", "", "olmv1"},
	} {
		u := base + "/ui/packages/" + q.pkg + "?" + url.Values{"from": {q.from}, "channel": {q.channel}, "rules": {q.rules}}.Encode()
		dom := browse(t, bin, u, fmt.Sprintf("catalogui-hub-upgrade-%d", i))
		args := []string{"alpha", "upgrade-path", dir, "--package", q.pkg, "--from", q.from}
		if q.channel != "" {
			args = append(args, "--channel", q.channel)
		}
		if q.rules == "olmv1" {
			args = append(args, "--olmv1")
		}
		r := o.Run(args...)
		require.Equal(t, exit.OK, r.Code, r.ErrOut)
		assert.Equal(t, r.Out, upgradeAnswer(t, dom), "%s", u)
	}
	code, body, _ := get(t, base+"/ui/packages/chain?from=no-such-bundle")
	assert.Equal(t, 400, code)
	assert.Contains(t, body, `id="upgrade-error"`)
}

// upgradeAnswer is the page's upgrade answer in the command's layout.
func upgradeAnswer(t *testing.T, dom string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<div id="upgrade-answer"><p class="heading">(.*?)</p><p class="start">(.*?)</p>(?:<ol class="steps">(.*?)</ol>)?<p class="end">(.*?)</p></div>`).FindStringSubmatch(dom)
	require.NotNil(t, m, "no upgrade answer")
	var b strings.Builder
	b.WriteString(html.UnescapeString(m[1]) + "\n   " + html.UnescapeString(m[2]) + "\n")
	for i, s := range regexp.MustCompile(`<li>(.*?)</li>`).FindAllStringSubmatch(m[3], -1) {
		fmt.Fprintf(&b, "%2d. %s\n", i+1, html.UnescapeString(s[1]))
	}
	b.WriteString(html.UnescapeString(m[4]) + "\n")
	return b.String()
}

func getBody(t *testing.T, u string) string {
	t.Helper()
	code, body, _ := get(t, u)
	require.Equal(t, 200, code, u)
	return body
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
