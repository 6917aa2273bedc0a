package index

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/bundle"
)

// ErrNeedsPull: a bundle's manifests are not in the database, only its image
// reference, and no Fetch function was given to pull it.
var ErrNeedsPull = errors.New("bundle content is only an image reference; exporting it needs an image pull")

// ExportOptions control Export.
type ExportOptions struct {
	// Packages to export; empty means all.
	Packages []string
	// Fetch pulls a bundle by reference when the database holds only its
	// reference (upstream semver modes dropped the manifests of non-head
	// bundles). Nil makes such bundles an ErrNeedsPull error.
	Fetch func(ctx context.Context, ref string) (*bundle.Bundle, error)
	// Concurrency bounds concurrent Fetch calls (default 4).
	Concurrency int
}

// ExportResult says what Export wrote.
type ExportResult struct {
	Packages []string `json:"packages"`
	Bundles  int      `json:"bundles"`
	Fetched  int      `json:"fetched"`
}

// packageManifest is package.yaml of the appregistry layout.
type packageManifest struct {
	PackageName    string            `json:"packageName"`
	Channels       []manifestChannel `json:"channels"`
	DefaultChannel string            `json:"defaultChannel,omitempty"`
}

type manifestChannel struct {
	Name       string `json:"name"`
	CurrentCSV string `json:"currentCSV"`
}

type exportBundle struct {
	pkg, name, version, path string
	objects                  []byte
	fetched                  *bundle.Bundle
}

// Export writes packages in the appregistry layout: folder/<package>/
// package.yaml and folder/<package>/<version>/<manifests>, the manifests
// written from the database's bundle column (one YAML file per object), or
// pulled with opts.Fetch when the database holds only a reference. Each
// package directory is written aside and renamed into place when complete;
// an existing package directory is an error.
func (d *DB) Export(ctx context.Context, folder string, opts ExportOptions) (*ExportResult, error) {
	pkgs := opts.Packages
	if len(pkgs) == 0 {
		var err error
		if pkgs, err = d.PackageNames(ctx); err != nil {
			return nil, err
		}
	}
	pkgs = dedupe(pkgs)
	sort.Strings(pkgs)
	res := &ExportResult{}

	var all []*exportBundle
	manifests := map[string]*packageManifest{}
	for _, name := range pkgs {
		p, err := d.Package(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		pm := &packageManifest{PackageName: p.Name, DefaultChannel: p.DefaultChannel}
		for _, c := range p.Channels {
			pm.Channels = append(pm.Channels, manifestChannel{Name: c.Name, CurrentCSV: c.Head})
		}
		manifests[name] = pm
		seen := map[string]string{}
		for _, b := range p.Bundles {
			if other, ok := seen[b.Version]; ok {
				return nil, fmt.Errorf("export package %s: bundles %s and %s have the same version %s, so the same directory", name, other, b.Name, b.Version)
			}
			seen[b.Version] = b.Name
			eb := &exportBundle{pkg: name, name: b.Name, version: b.Version, path: b.BundlePath}
			if err := d.sql.QueryRowContext(ctx, `SELECT bundle FROM operatorbundle WHERE name = ?`, b.Name).Scan(&eb.objects); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("export package %s: read bundle %s: %w", name, b.Name, err)
			}
			all = append(all, eb)
		}
	}
	for _, name := range pkgs {
		if _, err := os.Lstat(filepath.Join(folder, name)); err == nil {
			return nil, fmt.Errorf("export package %s: %s already exists; remove it or export elsewhere", name, filepath.Join(folder, name))
		}
	}

	// Bundles stored only as references.
	var refs []*exportBundle
	for _, b := range all {
		if len(bytes.TrimSpace(b.objects)) == 0 {
			refs = append(refs, b)
		}
	}
	if len(refs) > 0 && opts.Fetch == nil {
		var names []string
		for _, b := range refs {
			names = append(names, fmt.Sprintf("%s (%s)", b.name, b.path))
		}
		return nil, fmt.Errorf("export: %w: %s", ErrNeedsPull, strings.Join(names, ", "))
	}
	if err := fetchAll(ctx, refs, opts); err != nil {
		return nil, err
	}
	res.Fetched = len(refs)

	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for _, name := range pkgs {
		var bs []*exportBundle
		for _, b := range all {
			if b.pkg == name {
				bs = append(bs, b)
			}
		}
		if err := writePackage(folder, manifests[name], bs); err != nil {
			return nil, fmt.Errorf("export package %s: %w", name, err)
		}
		res.Packages = append(res.Packages, name)
		res.Bundles += len(bs)
	}
	return res, nil
}

func fetchAll(ctx context.Context, refs []*exportBundle, opts ExportOptions) error {
	n := opts.Concurrency
	if n <= 0 {
		n = 4
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	errs := make([]error, len(refs))
	for i, b := range refs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				errs[i] = err
				return
			}
			fb, err := opts.Fetch(ctx, b.path)
			if err != nil {
				errs[i] = fmt.Errorf("export: pull bundle %s (%s): %w", b.name, b.path, err)
				return
			}
			b.fetched = fb
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func writePackage(folder string, pm *packageManifest, bs []*exportBundle) error {
	tmp, err := os.MkdirTemp(folder, "."+pm.PackageName+".opm-tmp-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data, err := yaml.Marshal(pm)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "package.yaml"), data, 0o644); err != nil {
		return err
	}
	for _, b := range bs {
		dir := filepath.Join(tmp, safeName(b.version))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if b.fetched != nil {
			if err := writeFetched(dir, b.fetched); err != nil {
				return fmt.Errorf("bundle %s: %w", b.name, err)
			}
			continue
		}
		if err := writeObjects(dir, b.objects); err != nil {
			return fmt.Errorf("bundle %s: %w", b.name, err)
		}
	}
	return os.Rename(tmp, filepath.Join(folder, pm.PackageName))
}

// writeObjects writes each object of a bundle column (JSON, one per line) as
// a YAML file named after the object.
func writeObjects(dir string, stream []byte) error {
	used := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(line, &obj); err != nil {
			return fmt.Errorf("stored object is not JSON: %w", err)
		}
		kind := bundle.Str(obj, "kind")
		name := bundle.Str(obj, "metadata", "name")
		var file string
		switch kind {
		case bundle.CSVKind:
			file = name + ".clusterserviceversion.yaml"
		case bundle.CRDKind:
			file = name + ".crd.yaml"
		default:
			file = name + "." + strings.ToLower(kind) + ".yaml"
		}
		file = safeName(file)
		base := strings.TrimSuffix(file, ".yaml")
		for i := 2; used[file]; i++ {
			file = fmt.Sprintf("%s-%d.yaml", base, i)
		}
		used[file] = true
		y, err := yaml.JSONToYAML(line)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), y, 0o644); err != nil {
			return err
		}
	}
	return sc.Err()
}

// writeFetched writes a pulled bundle's manifest files as they are.
func writeFetched(dir string, b *bundle.Bundle) error {
	for _, f := range b.Files {
		if !strings.HasPrefix(f.Name, bundle.ManifestsDir+"/") {
			continue
		}
		name := safeName(path.Base(f.Name))
		if err := os.WriteFile(filepath.Join(dir, name), f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// safeName keeps a file name inside its directory.
func safeName(s string) string {
	s = strings.NewReplacer("/", "_", "\\", "_", "\x00", "_").Replace(s)
	if s == "" || s == "." || s == ".." {
		s = "_" + s
	}
	return s
}
