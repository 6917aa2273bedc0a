// Package catalogui is a small web UI over a served catalog (opm serve
// --http-ui): its packages with icon, description and a search, a
// package's channels, deprecations and upgrade graph, and a bundle's CSV.
// Pages are rendered on the server, with their CSS inline and no external
// asset, and read without JavaScript.
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

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/graph/draw"
)

// Querier reads a catalog's blobs, as JSON lines, by schema, package and
// name ("" matches any): the HTTP store of opm serve.
type Querier interface {
	Query(schema, pkg, name string) io.Reader
}

//go:embed page.html
var pageFS embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"markdown": func(s string) template.HTML { return template.HTML(Markdown(s)) }, //nolint:gosec // Markdown escapes everything it is given
	"graphCSS": func() template.CSS { return template.CSS(draw.CSS) },              //nolint:gosec // opm's own stylesheet
	"pkgURL":   func(p string) string { return "/ui/packages/" + url.PathEscape(p) },
	"bundleURL": func(p, b string) string {
		return "/ui/packages/" + url.PathEscape(p) + "/bundles/" + url.PathEscape(b)
	},
}).ParseFS(pageFS, "page.html"))

// Handler serves the UI: / (packages, ?q= searches), /ui/packages/{pkg}
// and /ui/packages/{pkg}/bundles/{bundle}.
func Handler(q Querier) http.Handler {
	u := &ui{q: q}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", u.index)
	mux.HandleFunc("GET /ui/packages/{pkg}", u.pkg)
	mux.HandleFunc("GET /ui/packages/{pkg}/bundles/{bundle}", u.bundle)
	return mux
}

type ui struct{ q Querier }

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
	Index   []pkgSummary
	Package *pkgView
	Bundle  *bundleView
	Error   string
}

type pkgSummary struct {
	Name, Summary, DefaultChannel string
	Icon                          template.URL
}

func (u *ui) render(w http.ResponseWriter, status int, v view) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src data:; style-src 'unsafe-inline'")
	w.WriteHeader(status)
	_ = page.Execute(w, v) // a client gone is nothing to report
}

func (u *ui) fail(w http.ResponseWriter, status int, msg string) {
	u.render(w, status, view{Title: http.StatusText(status), Error: msg})
}

func (u *ui) index(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	v := view{Title: "Packages", Query: q, Index: []pkgSummary{}}
	err := u.blobs(fbc.SchemaPackage, "", "", func(raw []byte) error {
		var p fbc.Package
		if json.Unmarshal(raw, &p) != nil {
			return nil
		}
		if q != "" && !strings.Contains(strings.ToLower(p.Name+" "+p.Description), strings.ToLower(q)) {
			return nil
		}
		v.Index = append(v.Index, pkgSummary{Name: p.Name, Summary: summary(p.Description), DefaultChannel: p.DefaultChannel, Icon: icon(p.Icon)})
		return nil
	})
	if err != nil {
		u.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	sort.Slice(v.Index, func(i, j int) bool { return v.Index[i].Name < v.Index[j].Name })
	u.render(w, http.StatusOK, v)
}

// summary is a description's first paragraph, as plain text, clipped.
func summary(d string) string {
	for _, para := range strings.Split(strings.ReplaceAll(d, "\r\n", "\n"), "\n\n") {
		t := strings.TrimSpace(strings.Trim(strings.TrimSpace(para), "#"))
		if t == "" {
			continue
		}
		t = strings.Join(strings.Fields(t), " ")
		if len(t) > 200 {
			t = t[:197] + "..."
		}
		return t
	}
	return ""
}

var mediaTypeRE = regexp.MustCompile(`^image/(png|jpeg|gif|svg\+xml)$`)

// icon is a package icon as a data: URL, when it is an image.
func icon(i *fbc.Icon) template.URL {
	if i == nil || len(i.Data) == 0 || !mediaTypeRE.MatchString(i.MediaType) {
		return ""
	}
	return template.URL("data:" + i.MediaType + ";base64," + base64.StdEncoding.EncodeToString(i.Data)) //nolint:gosec // an image type checked above, base64 data
}

type pkgView struct {
	Name, Description, DefaultChannel string
	Icon                              template.URL
	Deprecation                       string
	Channels                          []channelView
	Bundles                           []bundleRef
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

func (u *ui) load(pkg string) (*fbc.Catalog, error) {
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
	return c, nil
}

func (u *ui) pkg(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("pkg")
	c, err := u.load(name)
	if err != nil {
		u.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if len(c.Packages) == 0 {
		u.fail(w, http.StatusNotFound, "no package "+name+" in this catalog")
		return
	}
	p := c.Packages[0]
	v := &pkgView{Name: p.Name, Description: p.Description, DefaultChannel: p.DefaultChannel, Icon: icon(p.Icon)}
	deps := deprecations(c)
	v.Deprecation = deps[[2]string{fbc.SchemaPackage, ""}]
	versions, _ := graph.Versions(c)
	for i := range c.Channels {
		ch := &c.Channels[i]
		cv := channelView{Name: ch.Name, Default: ch.Name == p.DefaultChannel, Heads: graph.Heads(ch), Deprecation: deps[[2]string{fbc.SchemaChannel, ch.Name}]}
		heads := map[string]bool{}
		for _, h := range cv.Heads {
			heads[h] = true
		}
		for _, e := range ch.Entries {
			ev := entryView{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange, Head: heads[e.Name], Deprecation: deps[[2]string{fbc.SchemaBundle, e.Name}]}
			if ver, ok := versions[e.Name]; ok {
				ev.Version = ver.String()
			}
			cv.Entries = append(cv.Entries, ev)
		}
		sort.SliceStable(cv.Entries, func(i, j int) bool {
			a, b := versions[cv.Entries[i].Name], versions[cv.Entries[j].Name]
			return a.GT(b)
		})
		cv.Graph = channelGraph(p.Name, ch, versions, deprecatedBundles(deps), i)
		v.Channels = append(v.Channels, cv)
	}
	sort.SliceStable(v.Channels, func(i, j int) bool {
		if v.Channels[i].Default != v.Channels[j].Default {
			return v.Channels[i].Default
		}
		return v.Channels[i].Name < v.Channels[j].Name
	})
	for _, b := range c.Bundles {
		ref := bundleRef{Name: b.Name}
		if ver, ok := versions[b.Name]; ok {
			ref.Version = ver.String()
		}
		v.Bundles = append(v.Bundles, ref)
	}
	sort.Slice(v.Bundles, func(i, j int) bool { return v.Bundles[i].Name < v.Bundles[j].Name })
	u.render(w, http.StatusOK, view{Title: p.Name, Package: v})
}

// channelGraph draws a channel's upgrade graph as inline SVG (the
// drawing of opm alpha render-graph -o svg); n numbers it on the page.
func channelGraph(pkg string, ch *fbc.Channel, versions map[string]semver.Version, deprecated map[string]bool, n int) template.HTML {
	dc, _ := graph.NewDocChannel(ch, versions, deprecated)
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
}

type installMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

type apiView struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

type propView struct{ Type, Value string }

// csvFields is what the bundle page shows of a CSV (spec) or of
// olm.csv.metadata (the same fields, at the top).
type csvFields struct {
	DisplayName  string                `json:"displayName"`
	Description  string                `json:"description"`
	Provider     struct{ Name string } `json:"provider"`
	InstallModes []installMode         `json:"installModes"`
	CRDs         struct {
		Owned    []apiView `json:"owned"`
		Required []apiView `json:"required"`
	} `json:"customresourcedefinitions"`
	CRDDescriptions struct {
		Owned    []apiView `json:"owned"`
		Required []apiView `json:"required"`
	} `json:"crdDescriptions"`
}

func (u *ui) bundle(w http.ResponseWriter, r *http.Request) {
	pkg, name := r.PathValue("pkg"), r.PathValue("bundle")
	var b *fbc.Bundle
	err := u.blobs(fbc.SchemaBundle, pkg, name, func(raw []byte) error {
		var x fbc.Bundle
		if err := json.Unmarshal(raw, &x); err != nil {
			return err
		}
		b = &x
		return nil
	})
	if err != nil {
		u.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if b == nil {
		u.fail(w, http.StatusNotFound, "no bundle "+name+" in package "+pkg)
		return
	}
	v := &bundleView{Package: b.Package, Name: b.Name, Image: b.Image, RelatedImages: b.RelatedImages}
	if ver, err := graph.Version(b); err == nil {
		v.Version = ver.String()
	}
	var csv *csvFields
	for _, p := range b.Properties {
		switch p.Type {
		case fbc.PropertyBundleObject:
			v.Manifests++
			o, err := fbc.DecodeBundleObject(p.Value)
			if err != nil || csv != nil {
				continue
			}
			var m struct {
				Kind string    `json:"kind"`
				Spec csvFields `json:"spec"`
			}
			if j, err := yaml.YAMLToJSON(o.Data); err == nil && json.Unmarshal(j, &m) == nil && m.Kind == "ClusterServiceVersion" {
				csv, v.From = &m.Spec, "the bundle's ClusterServiceVersion (olm.bundle.object)"
			}
			continue
		case fbc.PropertyCSVMetadata:
			var m csvFields
			if json.Unmarshal(p.Value, &m) == nil && csv == nil {
				m.CRDs = m.CRDDescriptions
				csv, v.From = &m, "olm.csv.metadata"
			}
		}
		val := string(p.Value)
		if len(val) > 300 {
			val = val[:297] + "..."
		}
		v.Properties = append(v.Properties, propView{Type: p.Type, Value: val})
	}
	if csv != nil {
		v.DisplayName, v.Description, v.Provider = csv.DisplayName, csv.Description, csv.Provider.Name
		v.InstallModes, v.Owned, v.Required = csv.InstallModes, csv.CRDs.Owned, csv.CRDs.Required
	}
	u.render(w, http.StatusOK, view{Title: b.Name, Bundle: v})
}
