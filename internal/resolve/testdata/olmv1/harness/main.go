// Command harness records operator-controller's resolver answers for opm's
// replay test (internal/resolve TestOLMv1Answers). It is built inside a work
// tree of operator-controller, whose internal packages it imports; see
// ../README.md. It is opm's code: it only wires operator-controller's own
// CatalogResolver the way its main does (CatalogWalker over ClusterCatalogs
// listed by name, the catalog client's GetPackage over its filesystem cache,
// the NoDependencyValidation check) and feeds it catalogs read from files.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"github.com/operator-framework/operator-controller/internal/operator-controller/bundleutil"
	"github.com/operator-framework/operator-controller/internal/operator-controller/catalogmetadata/cache"
	catalogclient "github.com/operator-framework/operator-controller/internal/operator-controller/catalogmetadata/client"
	"github.com/operator-framework/operator-controller/internal/operator-controller/catalogmetadata/compare"
	"github.com/operator-framework/operator-controller/internal/operator-controller/resolve"
)

type catalog struct {
	Name     string   `json:"name"`
	Priority int32    `json:"priority,omitempty"`
	Sources  []string `json:"sources"`
}

type question struct {
	Name             string          `json:"name"`
	Catalogs         []catalog       `json:"catalogs"`
	ClusterExtension json.RawMessage `json:"clusterExtension"`
}

// catalogMark is the property type the harness adds to every bundle.
const catalogMark = "opm.harness.catalog"

type answer struct {
	Name string `json:"name"`
	// Bundle is the bundle resolved, nil on error.
	Bundle *string `json:"bundle"`
	// Version is the bundle's olm.package version; Release the release
	// operator-controller read for it (legacy: from the build metadata).
	Version string `json:"version,omitempty"`
	Release string `json:"release,omitempty"`
	Catalog string `json:"catalog,omitempty"`
	// Deprecated says the package's deprecations name the bundle.
	Deprecated bool   `json:"deprecated,omitempty"`
	Error      string `json:"error,omitempty"`
}

func main() {
	qs := flag.String("questions", "", "questions.json")
	base := flag.String("base", "", "directory the relative sources are under (the questions file's)")
	shared := flag.String("shared", "", "../shared: where shared:PATH sources are")
	out := flag.String("out", "", "answers file to write")
	rangesIn := flag.String("ranges", "", "ranges.json: {\"versions\": [...], \"ranges\": [...]}; with -ranges-out, records which versions each range admits instead")
	rangesOut := flag.String("ranges-out", "", "answers file for -ranges")
	cacheDir := flag.String("cache", "", "directory for operator-controller's catalog cache (a temporary one when empty)")
	flag.Parse()
	// The resolver logs through controller-runtime; its lines are not
	// part of the answer.
	ctrllog.SetLogger(logr.Discard())
	if *rangesIn != "" {
		if err := recordRanges(*rangesIn, *rangesOut); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *qs == "" || *out == "" {
		log.Fatal("-questions and -out are required")
	}
	if *base == "" {
		*base = filepath.Dir(*qs)
	}
	data, err := os.ReadFile(*qs)
	if err != nil {
		log.Fatal(err)
	}
	var questions []question
	if err := json.Unmarshal(data, &questions); err != nil {
		log.Fatalf("%s: %v", *qs, err)
	}
	if *cacheDir == "" {
		d, err := os.MkdirTemp("", "oc-resolve-cache-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*cacheDir = d
	}
	h := &harness{base: *base, shared: *shared, cacheRoot: *cacheDir, clients: map[string]*catalogclient.Client{}}
	var answers []answer
	for _, q := range questions {
		a, err := h.ask(q)
		if err != nil {
			log.Fatalf("question %s: %v", q.Name, err)
		}
		answers = append(answers, a)
	}
	b, err := json.MarshalIndent(answers, "", " ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d answers written to %s", len(answers), *out)
}

type harness struct {
	base, shared, cacheRoot string
	// clients holds one catalog client (over its own filesystem cache)
	// per catalog content: catalog name and sources.
	clients map[string]*catalogclient.Client
}

// stream is the catalog's content as catalogd serves /api/v1/all: every
// blob of every source, in walk order, as JSON lines.
func (h *harness) stream(sources []string) ([]byte, error) {
	var buf bytes.Buffer
	for _, s := range sources {
		p := filepath.Join(h.base, s)
		if rest, ok := strings.CutPrefix(s, "shared:"); ok {
			p = filepath.Join(h.shared, rest)
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		var fsys fs.FS
		if st.IsDir() {
			fsys = os.DirFS(p)
		} else {
			fsys = singleFile{dir: filepath.Dir(p), name: filepath.Base(p)}
		}
		if err := declcfg.WalkMetasFS(context.Background(), fsys, func(path string, m *declcfg.Meta, err error) error {
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, m.Blob); err != nil {
				return err
			}
			buf.Write(compact.Bytes())
			buf.WriteByte('\n')
			return nil
		}, declcfg.WithConcurrency(1)); err != nil {
			return nil, fmt.Errorf("source %s: %w", s, err)
		}
	}
	return buf.Bytes(), nil
}

// singleFile is a directory holding one file of another.
type singleFile struct{ dir, name string }

func (s singleFile) Open(name string) (fs.File, error) {
	if name == "." || name == s.name {
		return os.DirFS(s.dir).Open(name)
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (s singleFile) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	st, err := os.Stat(filepath.Join(s.dir, s.name))
	if err != nil {
		return nil, err
	}
	return []fs.DirEntry{fs.FileInfoToDirEntry(st)}, nil
}

func (h *harness) client(c catalog) (*catalogclient.Client, string, error) {
	key := c.Name + "\x00" + strings.Join(c.Sources, "\x00")
	ref := fmt.Sprintf("%x", key)
	if cl, ok := h.clients[key]; ok {
		return cl, ref, nil
	}
	dir := filepath.Join(h.cacheRoot, fmt.Sprint(len(h.clients)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	fsc := cache.NewFilesystemCache(dir)
	content, err := h.stream(c.Sources)
	if err != nil {
		return nil, "", err
	}
	if _, err := fsc.Put(c.Name, ref, bytes.NewReader(content), nil); err != nil {
		return nil, "", err
	}
	cl := catalogclient.New(fsc, nil)
	h.clients[key] = cl
	return cl, ref, nil
}

func (h *harness) ask(q question) (answer, error) {
	var ext ocv1.ClusterExtension
	if err := yaml.Unmarshal(q.ClusterExtension, &ext); err != nil {
		return answer{}, fmt.Errorf("clusterExtension: %w", err)
	}
	if ext.Spec.Source.Catalog == nil {
		return answer{}, fmt.Errorf("clusterExtension has no spec.source.catalog")
	}
	var cats []ocv1.ClusterCatalog
	clients := map[string]*catalogclient.Client{}
	for _, c := range q.Catalogs {
		cl, ref, err := h.client(c)
		if err != nil {
			return answer{}, err
		}
		clients[c.Name] = cl
		cats = append(cats, ocv1.ClusterCatalog{
			ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: map[string]string{"olm.operatorframework.io/metadata.name": c.Name}},
			Spec:       ocv1.ClusterCatalogSpec{Priority: c.Priority, AvailabilityMode: ocv1.AvailabilityModeAvailable},
			Status: ocv1.ClusterCatalogStatus{
				Conditions:     []metav1.Condition{{Type: ocv1.TypeServing, Status: metav1.ConditionTrue, Reason: ocv1.ReasonAvailable}},
				ResolvedSource: &ocv1.ResolvedCatalogSource{Type: ocv1.SourceTypeImage, Image: &ocv1.ResolvedImageSource{Ref: ref}},
				URLs:           &ocv1.ClusterCatalogURLs{Base: "https://catalogd.invalid/catalogs/" + c.Name},
			},
		})
	}
	// The API server lists ClusterCatalogs by name.
	sort.Slice(cats, func(i, j int) bool { return cats[i].Name < cats[j].Name })
	list := func(_ context.Context, opts ...client.ListOption) ([]ocv1.ClusterCatalog, error) {
		lo := &client.ListOptions{}
		lo.ApplyOptions(opts)
		sel := lo.LabelSelector
		if sel == nil {
			sel = labels.Everything()
		}
		var out []ocv1.ClusterCatalog
		for _, c := range cats {
			if sel.Matches(labels.Set(c.Labels)) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	// Each bundle gets a property naming its catalog, which nothing in
	// resolution reads, so that the bundle resolved says where it came
	// from (the resolver returns only the bundle).
	getPackage := func(ctx context.Context, cat *ocv1.ClusterCatalog, pkg string) (*declcfg.DeclarativeConfig, error) {
		fbc, err := clients[cat.Name].GetPackage(ctx, cat, pkg)
		if fbc != nil {
			mark, _ := json.Marshal(cat.Name)
			for i := range fbc.Bundles {
				fbc.Bundles[i].Properties = append(fbc.Bundles[i].Properties, property.Property{Type: catalogMark, Value: mark})
			}
		}
		return fbc, err
	}
	r := &resolve.CatalogResolver{
		WalkCatalogsFunc: resolve.CatalogWalker(list, getPackage),
		Validations:      []resolve.ValidationFunc{resolve.NoDependencyValidation},
	}
	var installed *ocv1.BundleMetadata
	if ext.Status.Install != nil {
		installed = &ext.Status.Install.Bundle
	}
	a := answer{Name: q.Name}
	b, vr, dep, err := r.Resolve(context.Background(), &ext, installed)
	if err != nil {
		a.Error = err.Error()
		return a, nil
	}
	name := b.Name
	a.Bundle = &name
	for _, p := range b.Properties {
		if p.Type == property.TypePackage {
			var pv property.Package
			if err := json.Unmarshal(p.Value, &pv); err == nil {
				a.Version = pv.Version
			}
			break
		}
	}
	if vr != nil {
		a.Release = vr.Release.String()
	}
	for _, p := range b.Properties {
		if p.Type == catalogMark {
			_ = json.Unmarshal(p.Value, &a.Catalog)
		}
	}
	if dep != nil {
		for _, e := range dep.Entries {
			if e.Reference.Schema == declcfg.SchemaBundle && e.Reference.Name == b.Name {
				a.Deprecated = true
			}
		}
	}
	return a, nil
}

// rangeTable is the version-range table: every range asked of every
// version, through operator-controller's own range parser (the one the
// resolver's version filter uses).
type rangeTable struct {
	Versions []string `json:"versions"`
	Ranges   []string `json:"ranges"`
}

type rangeAnswer struct {
	Range string `json:"range"`
	// Admits lists the versions in range, in the table's order.
	Admits []string `json:"admits"`
	Error  string   `json:"error,omitempty"`
}

func recordRanges(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var t rangeTable
	if err := json.Unmarshal(data, &t); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var answers []rangeAnswer
	for _, r := range t.Ranges {
		a := rangeAnswer{Range: r, Admits: []string{}}
		rng, err := compare.NewVersionRange(r)
		if err != nil {
			a.Error = err.Error()
		} else {
			for _, v := range t.Versions {
				// As the resolver reads a bundle's version: the legacy
				// registry+v1 release leaves the build metadata.
				vr, err := bundleutil.ParseLegacyVersionRelease(v)
				if err != nil {
					return fmt.Errorf("version %q: %w", v, err)
				}
				if rng(vr.Version) {
					a.Admits = append(a.Admits, v)
				}
			}
		}
		answers = append(answers, a)
	}
	b, err := json.MarshalIndent(answers, "", " ")
	if err != nil {
		return err
	}
	log.Printf("%d ranges written to %s", len(answers), out)
	return os.WriteFile(out, append(b, '\n'), 0o644)
}
