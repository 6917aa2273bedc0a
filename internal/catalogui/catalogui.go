// Package catalogui is a small web UI over a served catalog (opm serve
// --http-ui), laid out as OperatorHub.io shows a catalog: package cards
// with the head bundle's short description, provider, capability level
// and categories, a search and filters; a package's channels (a page
// each, with its upgrade graph), an Install panel with the manifests that
// install it with OLM v0 and OLM v1, and an upgrade question answered as
// opm alpha upgrade-path answers it; a bundle's CSV. Pages are rendered on
// the server, with their CSS inline and no external asset, and read
// without JavaScript.
package catalogui

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/graph/draw"
)

// Querier reads a catalog's blobs, as JSON lines, by schema, package and
// name ("" matches any): the HTTP store of opm serve.
type Querier interface {
	Query(schema, pkg, name string) io.Reader
}

// Options tune the UI.
type Options struct {
	// CatalogName is the name the Install panels give the catalog: the
	// OLM v0 CatalogSource and the OLM v1 ClusterCatalog that serve it
	// on a cluster. Default DefaultCatalogName.
	CatalogName string
	// CatalogNamespace is the CatalogSource's namespace. Default
	// DefaultCatalogNamespace.
	CatalogNamespace string
}

// Defaults of Options.
const (
	DefaultCatalogName      = "opm-catalog"
	DefaultCatalogNamespace = "olm"
)

//go:embed page.html
var pageFS embed.FS

func pkgURL(p string) string { return "/ui/packages/" + url.PathEscape(p) }

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"markdown":  func(s string) template.HTML { return template.HTML(Markdown(s)) }, //nolint:gosec // Markdown escapes everything it is given
	"graphCSS":  func() template.CSS { return template.CSS(draw.CSS) },              //nolint:gosec // opm's own stylesheet
	"pkgURL":    pkgURL,
	"bundleURL": func(p, b string) string { return pkgURL(p) + "/bundles/" + url.PathEscape(b) },
	"channelURL": func(p, c string) string {
		return pkgURL(p) + "/channels/" + url.PathEscape(c)
	},
	"filterURL":   func(f filter, field, value string) string { return f.with(field, value) },
	"channelArgs": func(pkg string, c *channelView) channelArgs { return channelArgs{pkg, c} },
	"upgradeArgs": func(pkg string, u *upgradeView) upgradeArgs { return upgradeArgs{pkg, u} },
}).ParseFS(pageFS, "page.html"))

type channelArgs struct {
	Package string
	Channel *channelView
}

type upgradeArgs struct {
	Package string
	Upgrade *upgradeView
}

// Handler serves the UI: / (packages; ?q= searches, ?category= and
// ?capability= filter), /ui/packages/{pkg} (?from=&channel= asks for an
// upgrade path), /ui/packages/{pkg}/channels/{channel} and
// /ui/packages/{pkg}/bundles/{bundle}.
func Handler(q Querier, opts Options) http.Handler {
	if opts.CatalogName == "" {
		opts.CatalogName = DefaultCatalogName
	}
	if opts.CatalogNamespace == "" {
		opts.CatalogNamespace = DefaultCatalogNamespace
	}
	u := &ui{q: q, opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", u.index)
	mux.HandleFunc("GET /ui/packages/{pkg}", u.pkg)
	mux.HandleFunc("GET /ui/packages/{pkg}/channels/{channel}", u.channel)
	mux.HandleFunc("GET /ui/packages/{pkg}/bundles/{bundle}", u.bundle)
	return mux
}

type ui struct {
	q    Querier
	opts Options

	mu sync.Mutex
	ix *catalogIndex // read on first use: the catalog served does not change
}

// blobs decodes the JSON lines of a query.
func (u *ui) blobs(schema, pkg, name string, each func(raw []byte) error) error {
	sc := bufio.NewScanner(u.q.Query(schema, pkg, name))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := each(sc.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// view is what page.html renders: one of its parts is set.
type view struct {
	Title   string
	Query   string
	Index   *indexView
	Package *pkgView
	Channel *channelPage
	Bundle  *bundleView
	Error   string
}

type indexView struct {
	Filter       filter
	Cards        []card
	Total        int
	Categories   []facet
	Capabilities []facet
}

func (u *ui) render(w http.ResponseWriter, status int, v view) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src data:; style-src 'unsafe-inline'")
	// Rendered whole before it is sent: a page that fails to render is
	// an error, not half a page.
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		status, buf = http.StatusInternalServerError, bytes.Buffer{}
		fmt.Fprintf(&buf, "<!DOCTYPE html><title>error</title><p id=\"error\">%s</p>", template.HTMLEscapeString(err.Error()))
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // a client gone is nothing to report
}

func (u *ui) fail(w http.ResponseWriter, status int, msg string) {
	u.render(w, status, view{Title: http.StatusText(status), Error: msg})
}

func (u *ui) catalogIndex() (*catalogIndex, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ix == nil {
		ix, err := u.buildIndex()
		if err != nil {
			return nil, err
		}
		u.ix = ix
	}
	return u.ix, nil
}

func (u *ui) index(w http.ResponseWriter, r *http.Request) {
	qs := r.URL.Query()
	f := filter{Query: strings.TrimSpace(qs.Get("q")), Category: qs.Get("category"), Capability: qs.Get("capability")}
	ix, err := u.catalogIndex()
	if err != nil {
		u.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	v := &indexView{Filter: f, Cards: []card{}, Total: len(ix.cards), Categories: ix.categories, Capabilities: ix.capabilities}
	for i := range ix.cards {
		if f.match(&ix.cards[i]) {
			v.Cards = append(v.Cards, ix.cards[i])
		}
	}
	u.render(w, http.StatusOK, view{Title: "Packages", Query: f.Query, Index: v})
}

var mediaTypeRE = regexp.MustCompile(`^image/(png|jpeg|gif|svg\+xml)$`)

// icon is a package icon as a data: URL, when it is an image.
func icon(i *fbc.Icon) template.URL {
	if i == nil || len(i.Data) == 0 || !mediaTypeRE.MatchString(i.MediaType) {
		return ""
	}
	return template.URL("data:" + i.MediaType + ";base64," + base64.StdEncoding.EncodeToString(i.Data)) //nolint:gosec // an image type checked above, base64 data
}

// Heading is what the top of a package's pages shows.
type Heading struct {
	Name, DisplayName, Provider, Capability string
	// Short is the head's short description, as on the package's card.
	Short       string
	Categories  []string
	Icon        template.URL
	Deprecation string
	// Channels in the order the pages list them: the default first, the
	// others by name, numbers compared as numbers.
	Channels []channelSummary
}

type channelSummary struct {
	Name, Head, HeadVersion, Deprecation string
	Default, Current                     bool
	Entries                              int
}

type pkgView struct {
	Heading
	Description    string
	DefaultChannel string
	Default        *channelView
	Bundles        []bundleRef
	Install        *install
	Upgrade        *upgradeView
}

type channelPage struct {
	Heading
	Channel *channelView
	Install *install
}

type channelView struct {
	Name, Deprecation string
	Default           bool
	Heads             []string
	Entries           []entryView
	Graph             template.HTML
}

type entryView struct {
	Name, Version, Replaces, SkipRange, Deprecation string
	Skips                                           []string
	Head                                            bool
}

type bundleRef struct{ Name, Version string }

// pkgData is one package of the catalog, read for its pages.
type pkgData struct {
	c        *fbc.Catalog
	p        *fbc.Package
	deps     map[[2]string]string
	versions map[string]semver.Version
	// versionErrs say why a bundle has no version (missing or not semver).
	versionErrs map[string]string
	// channels in page order.
	channels []*fbc.Channel
}

// bundleVersions reads each bundle's version on its own: a bundle whose
// version is missing or not semver has none (why is in errs, for its
// page), and every other bundle keeps its own. The first bundle of a name
// wins, as graph.Versions reads them.
func bundleVersions(c *fbc.Catalog) (versions map[string]semver.Version, errs map[string]string) {
	versions, errs = make(map[string]semver.Version, len(c.Bundles)), map[string]string{}
	seen := make(map[string]bool, len(c.Bundles))
	for i := range c.Bundles {
		b := &c.Bundles[i]
		if seen[b.Name] {
			continue
		}
		seen[b.Name] = true
		v, err := graph.Version(b)
		if err != nil {
			errs[b.Name] = err.Error()
			continue
		}
		versions[b.Name] = v
	}
	return versions, errs
}

func (u *ui) load(pkg string) (*pkgData, error) {
	c := &fbc.Catalog{}
	var lines [][]byte
	for _, schema := range []string{fbc.SchemaPackage, fbc.SchemaChannel, fbc.SchemaBundle, fbc.SchemaDeprecations} {
		// A package blob names itself; the others name their package.
		byPkg, byName := pkg, ""
		if schema == fbc.SchemaPackage {
			byPkg, byName = "", pkg
		}
		err := u.blobs(schema, byPkg, byName, func(raw []byte) error {
			lines = append(lines, append([]byte(nil), raw...))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := c.LoadFile("catalog.json", append(bytes.Join(lines, []byte("\n")), '\n')); err != nil {
		return nil, err
	}
	if len(c.Packages) == 0 {
		return nil, nil
	}
	d := &pkgData{c: c, p: &c.Packages[0], deps: deprecations(c)}
	d.versions, d.versionErrs = bundleVersions(c)
	for i := range c.Channels {
		d.channels = append(d.channels, &c.Channels[i])
	}
	sort.SliceStable(d.channels, func(i, j int) bool {
		a, b := d.channels[i], d.channels[j]
		if (a.Name == d.p.DefaultChannel) != (b.Name == d.p.DefaultChannel) {
			return a.Name == d.p.DefaultChannel
		}
		return naturalLess(a.Name, b.Name)
	})
	return d, nil
}

// loadOr404 loads a package, answering the request itself when it
// cannot.
func (u *ui) loadOr404(w http.ResponseWriter, name string) *pkgData {
	d, err := u.load(name)
	if err != nil {
		u.fail(w, http.StatusInternalServerError, err.Error())
		return nil
	}
	if d == nil {
		u.fail(w, http.StatusNotFound, "no package "+name+" in this catalog")
		return nil
	}
	return d
}

func (d *pkgData) bundle(name string) *fbc.Bundle {
	for i := range d.c.Bundles {
		if d.c.Bundles[i].Name == name {
			return &d.c.Bundles[i]
		}
	}
	return nil
}

func (d *pkgData) channel(name string) *fbc.Channel {
	for _, ch := range d.channels {
		if ch.Name == name {
			return ch
		}
	}
	return nil
}

func (d *pkgData) version(name string) string {
	if v, ok := d.versions[name]; ok {
		return v.String()
	}
	return ""
}

// head is a channel's newest head.
func (d *pkgData) head(ch *fbc.Channel) string {
	best := ""
	for _, h := range graph.Heads(ch) {
		if best == "" || d.versions[h].GT(d.versions[best]) {
			best = h
		}
	}
	return best
}

// headCSV is the CSV of the default channel's head (else of the first
// channel's), nil when the catalog holds none.
func (d *pkgData) headCSV() *csvInfo {
	ch := d.channel(d.p.DefaultChannel)
	if ch == nil && len(d.channels) > 0 {
		ch = d.channels[0]
	}
	if ch == nil {
		return nil
	}
	if b := d.bundle(d.head(ch)); b != nil {
		return readCSV(b)
	}
	return nil
}

func (d *pkgData) heading(current string) Heading {
	h := Heading{Name: d.p.Name, Icon: icon(d.p.Icon), Deprecation: d.deps[[2]string{fbc.SchemaPackage, ""}]}
	if csv := d.headCSV(); csv != nil {
		h.DisplayName, h.Provider, h.Capability, h.Categories, h.Short = csv.DisplayName, csv.Provider, csv.Capability, csv.Categories, csv.Short
	}
	if h.Short == "" {
		h.Short = summary(d.p.Description)
	}
	for _, ch := range d.channels {
		head := d.head(ch)
		h.Channels = append(h.Channels, channelSummary{Name: ch.Name, Head: head, HeadVersion: d.version(head), Entries: len(ch.Entries),
			Default: ch.Name == d.p.DefaultChannel, Current: ch.Name == current, Deprecation: d.deps[[2]string{fbc.SchemaChannel, ch.Name}]})
	}
	return h
}

func (d *pkgData) channelView(ch *fbc.Channel, n int) *channelView {
	cv := &channelView{Name: ch.Name, Default: ch.Name == d.p.DefaultChannel, Heads: graph.Heads(ch), Deprecation: d.deps[[2]string{fbc.SchemaChannel, ch.Name}]}
	heads := map[string]bool{}
	for _, h := range cv.Heads {
		heads[h] = true
	}
	for _, e := range ch.Entries {
		cv.Entries = append(cv.Entries, entryView{Name: e.Name, Version: d.version(e.Name), Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange,
			Head: heads[e.Name], Deprecation: d.deps[[2]string{fbc.SchemaBundle, e.Name}]})
	}
	sort.SliceStable(cv.Entries, func(i, j int) bool {
		return d.versions[cv.Entries[i].Name].GT(d.versions[cv.Entries[j].Name])
	})
	cv.Graph = channelGraph(d.p.Name, ch, d.versions, deprecatedBundles(d.deps), n)
	return cv
}

// channelInstall is the Install panel of a channel: its newest head.
func (u *ui) channelInstall(r *http.Request, d *pkgData, ch *fbc.Channel) *install {
	b := d.bundle(d.head(ch))
	if b == nil {
		return nil
	}
	return u.newInstall(r.Context(), d.c, b, readCSV(b), ch.Name, d.version(b.Name), false)
}

func (u *ui) pkg(w http.ResponseWriter, r *http.Request) {
	d := u.loadOr404(w, r.PathValue("pkg"))
	if d == nil {
		return
	}
	v := &pkgView{Heading: d.heading(""), Description: d.p.Description, DefaultChannel: d.p.DefaultChannel}
	if strings.TrimSpace(v.Description) == "" {
		if csv := d.headCSV(); csv != nil {
			v.Description = csv.Description
		}
	}
	def := d.channel(d.p.DefaultChannel)
	if def != nil {
		v.Default = d.channelView(def, 0)
	}
	if def == nil && len(d.channels) > 0 {
		def = d.channels[0]
	}
	if def != nil {
		v.Install = u.channelInstall(r, d, def)
	}
	for _, b := range d.c.Bundles {
		v.Bundles = append(v.Bundles, bundleRef{Name: b.Name, Version: d.version(b.Name)})
	}
	sort.SliceStable(v.Bundles, func(i, j int) bool {
		a, b := d.versions[v.Bundles[i].Name], d.versions[v.Bundles[j].Name]
		if !a.EQ(b) {
			return a.GT(b)
		}
		return v.Bundles[i].Name < v.Bundles[j].Name
	})
	var status int
	v.Upgrade, status = u.upgrade(r, d)
	u.render(w, status, view{Title: d.p.Name, Package: v})
}

func (u *ui) channel(w http.ResponseWriter, r *http.Request) {
	d := u.loadOr404(w, r.PathValue("pkg"))
	if d == nil {
		return
	}
	name := r.PathValue("channel")
	ch := d.channel(name)
	if ch == nil {
		u.fail(w, http.StatusNotFound, "no channel "+name+" in package "+d.p.Name)
		return
	}
	v := &channelPage{Heading: d.heading(name), Channel: d.channelView(ch, 0), Install: u.channelInstall(r, d, ch)}
	u.render(w, http.StatusOK, view{Title: d.p.Name + " / " + name, Channel: v})
}

// naturalLess orders names with their numbers compared as numbers:
// stable-3.6 before stable-3.10.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// channelGraph draws a channel's upgrade graph as inline SVG (the
// drawing of opm alpha render-graph -o svg); n numbers it on the page.
func channelGraph(pkg string, ch *fbc.Channel, versions map[string]semver.Version, deprecated map[string]bool, n int) template.HTML {
	// Each skipRange once, as the runs it covers: an edge per covered
	// bundle is n² on a channel whose every entry skips all before it.
	dc, _ := graph.NewDocChannelRanges(ch, versions, deprecated)
	var b strings.Builder
	draw.InlineSVG(&b, draw.Channel{Title: pkg + " / " + ch.Name, Doc: dc}, fmt.Sprintf("g%d", n))
	return template.HTML(b.String()) //nolint:gosec // the drawing escapes every name it writes
}

// deprecatedBundles are the bundles a package's deprecations name.
func deprecatedBundles(deps map[[2]string]string) map[string]bool {
	out := map[string]bool{}
	for k := range deps {
		if k[0] == fbc.SchemaBundle {
			out[k[1]] = true
		}
	}
	return out
}

// deprecations are a package's deprecation messages by (schema, name).
func deprecations(c *fbc.Catalog) map[[2]string]string {
	out := map[[2]string]string{}
	for _, m := range c.Others {
		if m.Schema != fbc.SchemaDeprecations {
			continue
		}
		var d struct {
			Entries []struct {
				Reference struct{ Schema, Name string } `json:"reference"`
				Message   string                        `json:"message"`
			} `json:"entries"`
		}
		if json.Unmarshal(m.Blob, &d) != nil {
			continue
		}
		for _, e := range d.Entries {
			name := e.Reference.Name
			if e.Reference.Schema == fbc.SchemaPackage {
				name = ""
			}
			out[[2]string{e.Reference.Schema, name}] = e.Message
		}
	}
	return out
}

type bundleView struct {
	Package, Name, Version, Image string
	DisplayName, Description      string
	Provider                      string
	InstallModes                  []installMode
	Owned, Required               []apiView
	RelatedImages                 []fbc.RelatedImage
	Properties                    []propView
	Manifests                     int
	From                          string
	Channels                      []string
	Deprecation                   string
	Install                       *install
	// VersionError says why the bundle has no version.
	VersionError string
}

type propView struct{ Type, Value string }

func (u *ui) bundle(w http.ResponseWriter, r *http.Request) {
	d := u.loadOr404(w, r.PathValue("pkg"))
	if d == nil {
		return
	}
	name := r.PathValue("bundle")
	b := d.bundle(name)
	if b == nil {
		u.fail(w, http.StatusNotFound, "no bundle "+name+" in package "+d.p.Name)
		return
	}
	v := &bundleView{Package: b.Package, Name: b.Name, Image: b.Image, RelatedImages: b.RelatedImages, Version: d.version(b.Name),
		VersionError: d.versionErrs[b.Name], Deprecation: d.deps[[2]string{fbc.SchemaBundle, b.Name}]}
	for _, ch := range d.channels {
		for _, e := range ch.Entries {
			if e.Name == b.Name {
				v.Channels = append(v.Channels, ch.Name)
				break
			}
		}
	}
	for _, p := range b.Properties {
		if p.Type == fbc.PropertyBundleObject {
			v.Manifests++
			continue
		}
		if p.Type == fbc.PropertyCSVMetadata {
			continue // shown as the CSV
		}
		val := string(p.Value)
		if len(val) > 300 {
			val = clip(val, 300)
		}
		v.Properties = append(v.Properties, propView{Type: p.Type, Value: val})
	}
	csv := readCSV(b)
	if csv != nil {
		v.DisplayName, v.Description, v.Provider, v.From = csv.DisplayName, csv.Description, csv.Provider, csv.From
		v.InstallModes, v.Owned, v.Required = csv.InstallModes, csv.Owned, csv.Required
	}
	if len(v.Channels) > 0 {
		// Channels are in page order: the default first when it has the bundle.
		v.Install = u.newInstall(r.Context(), d.c, b, csv, v.Channels[0], v.Version, true)
	}
	u.render(w, http.StatusOK, view{Title: b.Name, Bundle: v})
}
