package catalogui_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/browsertest"
	"github.com/opmkit/opm/internal/catalogui"
	"github.com/opmkit/opm/internal/httpcatalog"
)

const iconSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="teal"/></svg>`

// fixture writes a catalog: package p (icon, a description trying to
// inject markup), channels stable (v1 -> v2, v1 deprecated) and fast,
// bundle v2 with its CSV as olm.bundle.object, v1 with olm.csv.metadata.
func fixture(t *testing.T) string {
	t.Helper()
	csv := map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": "p.v2.0.0"},
		"spec": map[string]any{
			"displayName": "P Operator", "version": "2.0.0", "provider": map[string]any{"name": "Example Inc."},
			"description":  "# P\n\nManages **widgets**. See [the docs](https://example.com/docs) and [evil](javascript:alert(1)).\n\n- one\n- two\n\n<script>alert('x')</script>",
			"installModes": []map[string]any{{"type": "AllNamespaces", "supported": true}, {"type": "OwnNamespace", "supported": false}},
			"customresourcedefinitions": map[string]any{
				"owned":    []map[string]any{{"name": "widgets.example.com", "version": "v1", "kind": "Widget", "description": "A widget"}},
				"required": []map[string]any{{"name": "gadgets.example.com", "version": "v1", "kind": "Gadget"}},
			},
		},
	}
	obj, _ := json.Marshal(csv)
	meta := `{"displayName":"P Operator","description":"old","installModes":[{"type":"OwnNamespace","supported":true}]}`
	lines := []string{
		`{"schema":"olm.package","name":"p","defaultChannel":"stable","description":"Widgets <b>for</b> all.\n\nMore.","icon":{"base64data":"` + base64.StdEncoding.EncodeToString([]byte(iconSVG)) + `","mediatype":"image/svg+xml"}}`,
		`{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1.0.0"},{"name":"p.v2.0.0","replaces":"p.v1.0.0","skipRange":"<2.0.0"}]}`,
		`{"schema":"olm.channel","name":"fast","package":"p","entries":[{"name":"p.v2.0.0"}]}`,
		`{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"example.com/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"olm.csv.metadata","value":` + meta + `}]}`,
		`{"schema":"olm.bundle","name":"p.v2.0.0","package":"p","image":"example.com/p:2","relatedImages":[{"name":"operator","image":"example.com/op@sha256:` + strings.Repeat("a", 64) + `"}],"properties":[{"type":"olm.package","value":{"packageName":"p","version":"2.0.0"}},{"type":"olm.bundle.object","value":{"data":"` + base64.StdEncoding.EncodeToString(obj) + `"}}]}`,
		`{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"p.v1.0.0"},"message":"use 2.0.0"}]}`,
		`{"schema":"olm.package","name":"q","defaultChannel":"alpha","description":"Quux <i>gadgets</i>."}`,
		`{"schema":"olm.channel","name":"alpha","package":"q","entries":[{"name":"q.v1"}]}`,
		`{"schema":"olm.bundle","name":"q.v1","package":"q","image":"example.com/q:1","properties":[{"type":"olm.package","value":{"packageName":"q","version":"1.0.0"}}]}`,
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return dir
}

// start serves the fixture as opm serve --http-ui does.
func start(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := httpcatalog.Listen(fixture(t), httpcatalog.ServerOptions{Listener: lis, Handler: httpcatalog.Options{
		UI: func(s *httpcatalog.Store) http.Handler {
			return catalogui.Handler(s, catalogui.Options{CatalogName: "my-catalog"})
		}}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done; _ = srv.Close() })
	return "http://" + srv.Addr().String()
}

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header
}

// TestPages: every page type over HTTP, markup from the catalog escaped,
// no external asset, the API still answered beside the UI.
func TestPages(t *testing.T) {
	t.Parallel()
	base := start(t)
	code, body, h := get(t, base+"/")
	require.Equal(t, 200, code)
	assert.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
	assert.Contains(t, h.Get("Content-Security-Policy"), "default-src 'none'")
	assert.Contains(t, body, `<a href="/ui/packages/p">P Operator</a><span class="provider">by Example Inc.</span><p class="description">Manages widgets.</p>`)
	assert.Contains(t, body, `src="data:image/svg&#43;xml;base64,`)
	assert.Contains(t, body, `<a href="/ui/packages/q">q</a><p class="description">Quux &lt;i&gt;gadgets&lt;/i&gt;.</p>`, "no CSV: the package's description, as text")
	assert.NotRegexp(t, regexp.MustCompile(`(src|href)="https?://`), body, "no external asset")

	_, body, _ = get(t, base+"/?q=GADGET")
	assert.Contains(t, body, `/ui/packages/q"`)
	assert.NotContains(t, body, `/ui/packages/p"`)

	code, body, _ = get(t, base+"/ui/packages/p")
	require.Equal(t, 200, code)
	assert.Contains(t, body, `id="default-channel"`)
	assert.Contains(t, body, `<a class="channel-head" href="/ui/packages/p/bundles/p.v2.0.0">p.v2.0.0</a>`)
	assert.Contains(t, body, `title="use 2.0.0">deprecated</span>`)
	assert.Contains(t, body, "Widgets &lt;b&gt;for&lt;/b&gt; all.")
	assert.Less(t, strings.Index(body, `href="/ui/packages/p/channels/stable"`), strings.Index(body, `href="/ui/packages/p/channels/fast"`), "the default channel first")
	assert.Equal(t, 1, strings.Count(body, `<div class="graph"><svg`), "the default channel's picture")
	assert.Contains(t, body, `aria-label="p / stable"`)

	code, body, _ = get(t, base+"/ui/packages/p/channels/fast")
	require.Equal(t, 200, code)
	assert.Contains(t, body, `aria-label="p / fast"`)
	assert.Contains(t, body, "channel: fast")
	assert.Contains(t, body, "source: my-catalog")

	code, body, _ = get(t, base+"/ui/packages/p/bundles/p.v2.0.0")
	require.Equal(t, 200, code)
	for _, want := range []string{"<h3>P</h3>", "<strong>widgets</strong>", `<a href="https://example.com/docs" rel="noopener noreferrer">the docs</a>`,
		"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;", "<li>AllNamespaces: supported</li>", "<td>Widget</td>", "<td>Gadget</td>", "example.com/op@sha256:", "Example Inc."} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, "javascript:")
	assert.NotContains(t, body, "<script>")

	_, body, _ = get(t, base+"/ui/packages/p/bundles/p.v1.0.0")
	assert.Contains(t, body, "<li>OwnNamespace: supported</li>")
	assert.Contains(t, body, "olm.csv.metadata")

	code, _, _ = get(t, base+"/ui/packages/nope")
	assert.Equal(t, 404, code)
	code, _, _ = get(t, base+"/ui/packages/p/bundles/nope")
	assert.Equal(t, 404, code)
	code, body, _ = get(t, base+"/api/v1/all")
	assert.Equal(t, 200, code)
	assert.Contains(t, body, `"schema":"olm.package"`)
}

// chromium finds Debian's chromium: the browser tests need it (CI installs
// it); elsewhere they skip, saying why.
func chromium(t *testing.T) string {
	t.Helper()
	return browsertest.Chromium(t, "the browser tests load each page in headless Chromium")
}

// browse loads url in headless Chromium and returns the DOM it rendered;
// it also keeps a screenshot of the page under the artifact directory.
func browse(t *testing.T, bin, url, shotName string) string {
	t.Helper()
	artifacts := os.Getenv("TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "opm-test-artifacts")
	}
	require.NoError(t, os.MkdirAll(artifacts, 0o755))
	return shot(t, bin, url, filepath.Join(artifacts, shotName+".png"))
}

// shot loads url in headless Chromium at 1280 × 900, keeps a screenshot
// in png, and returns the DOM it rendered.
func shot(t *testing.T, bin, url, png string) string {
	t.Helper()
	profile := t.TempDir()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + profile, "--window-size=1280,900"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_ = os.Remove(png)
	// One load gives both the DOM and the picture.
	out, err := exec.CommandContext(ctx, bin, append(args, "--screenshot="+png, "--dump-dom", url)...).Output()
	require.NoError(t, err, "chromium --dump-dom %s", url)
	st, err := os.Stat(png)
	require.NoError(t, err, "screenshot %s", png)
	assert.Greater(t, st.Size(), int64(1000), "screenshot %s is empty", png)
	t.Logf("screenshot of %s: %s", url, png)
	return string(out)
}

// TestPagesInChromium (issue 30, item 3): each page type loads in a real
// browser, and the DOM it builds holds what the page is for.
func TestPagesInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	base := start(t)
	dom := browse(t, bin, base+"/", "catalogui-index")
	assert.Equal(t, 2, strings.Count(dom, `<li class="card package">`), dom)
	assert.Contains(t, dom, `<img class="icon" src="data:image/svg+xml;base64,`)

	dom = browse(t, bin, base+"/?q=widgets", "catalogui-search")
	assert.Equal(t, 1, strings.Count(dom, `<li class="card package">`), dom)

	dom = browse(t, bin, base+"/ui/packages/p", "catalogui-package")
	assert.Contains(t, dom, `<span id="package">p</span>`)
	assert.Equal(t, 1, strings.Count(dom, `<section class="channel"`))
	assert.Equal(t, 2, strings.Count(dom, `<tr class="entry">`))
	assert.Equal(t, 1, strings.Count(dom, `<svg xmlns="http://www.w3.org/2000/svg"`), "the graph renders as SVG in the browser")

	dom = browse(t, bin, base+"/ui/packages/p/channels/fast", "catalogui-channel")
	assert.Contains(t, dom, `<li class="channel-link current"><a href="/ui/packages/p/channels/fast">`)
	assert.Equal(t, 1, strings.Count(dom, `<svg xmlns="http://www.w3.org/2000/svg"`))

	dom = browse(t, bin, base+"/ui/packages/p/bundles/p.v2.0.0", "catalogui-bundle")
	assert.Contains(t, dom, `<h1 id="bundle">p.v2.0.0</h1>`)
	assert.Contains(t, dom, "<strong>widgets</strong>")
	assert.NotContains(t, dom, "<script>", "a description's script is text, not a script")
}

func TestMarkdownEscapes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"<img src=x onerror=alert(1)>":        "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n",
		"[x](javascript:alert(1))":            "<p>x</p>\n",
		"[x](https://a.example/?a=1&b=\"2\")": "<p><a href=\"https://a.example/?a=1&amp;b=&#34;2&#34;\" rel=\"noopener noreferrer\">x</a></p>\n",
		"`<b>` and **bold** and *it*":         "<p><code>&lt;b&gt;</code> and <strong>bold</strong> and <em>it</em></p>\n",
		"```\n<script>\n```":                  "<pre><code>&lt;script&gt;</code></pre>\n",
		"## Title\n1. a\n2. b":                "<h4>Title</h4>\n<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n",
	} {
		assert.Equal(t, want, catalogui.Markdown(in), in)
	}
}

// The upgrade question by OLM v1's rules is operator-controller's
// answer at each step (resolve.ExtensionSteps): channel fast leaves out
// the installed p.v1.0.0 and holds nothing that upgrades from it, so it
// resolves nothing, and the page says so with its error.
func TestUpgradeOLMv1(t *testing.T) {
	base := start(t)
	code, body, _ := get(t, base+"/ui/packages/p?from=1.0.0&rules=olmv1")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "p.v2.0.0 (2.0.0)  replaces p.v1.0.0")
	code, body, _ = get(t, base+"/ui/packages/p?from=1.0.0&channel=fast&rules=olmv1")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, html.UnescapeString(body), `operator-controller resolves nothing from p.v1.0.0: error upgrading from currently installed version "1.0.0": no bundles found for package "p" in channels [fast]; catalog my-catalog: `)
}
