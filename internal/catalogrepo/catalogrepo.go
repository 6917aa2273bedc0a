// Package catalogrepo is the layout of a catalog repository as the
// community operator repositories keep it: operators/<package>/ci.yaml maps
// each catalog template under operators/<package>/catalog-templates/ to the
// catalogs (one per OpenShift version) it is rendered into, written to
// catalogs/<catalog>/<package>/catalog.yaml at the repository's root.
package catalogrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/atomicfile"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
	"github.com/opmkit/opm/internal/fbc/template/templates"
	"github.com/opmkit/opm/internal/validate"
)

// TemplatesDir is where a package's templates are, beside its ci.yaml.
const TemplatesDir = "catalog-templates"

// CSVMetadataFrom is the first OpenShift minor version (4.x) whose catalogs
// carry olm.csv.metadata instead of olm.bundle.object manifests.
const CSVMetadataFrom = 17

// Mapping is one catalog_mapping entry: a template and the catalogs it
// is rendered into.
type Mapping struct {
	Template string   `json:"template_name"`
	Catalogs []string `json:"catalog_names"`
	// Type is the template's schema, olm.template.basic or olm.semver.
	Type string `json:"type"`
}

// Config is what opm reads of a ci.yaml.
type Config struct {
	FBC struct {
		Enabled bool      `json:"enabled"`
		Mapping []Mapping `json:"catalog_mapping"`
	} `json:"fbc"`
}

// Repo is one package of a catalog repository.
type Repo struct {
	// File is the ci.yaml read.
	File string
	// PackageDir holds ci.yaml and catalog-templates/; its name is the
	// operator's (the package's) name.
	PackageDir string
	Package    string
	// Root is the repository's root (the directory holding operators/),
	// "" when PackageDir is not under an operators/ directory.
	Root     string
	Mappings []Mapping
}

// Load reads a ci.yaml's catalog mapping, checking each entry.
func Load(file string) (*Repo, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read mapping %s: %w", file, err)
	}
	var c Config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("read mapping %s: %w", file, err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	r := &Repo{File: file, PackageDir: filepath.Dir(abs), Mappings: c.FBC.Mapping}
	r.Package = filepath.Base(r.PackageDir)
	if parent := filepath.Dir(r.PackageDir); filepath.Base(parent) == "operators" {
		r.Root = filepath.Dir(parent)
	}
	if len(r.Mappings) == 0 {
		return nil, fmt.Errorf("%s: fbc.catalog_mapping: no entry; map each template to its catalogs, e.g.\n  fbc:\n    enabled: true\n    catalog_mapping:\n      - template_name: basic.yaml\n        catalog_names: [\"v4.16\", \"v4.17\"]\n        type: olm.template.basic", file)
	}
	seen := map[string]string{}
	for i, m := range r.Mappings {
		field := fmt.Sprintf("%s: fbc.catalog_mapping[%d]", file, i)
		switch {
		case m.Template == "":
			return nil, fmt.Errorf("%s.template_name: missing: name a file under %s/", field, TemplatesDir)
		case filepath.Base(m.Template) != m.Template:
			return nil, fmt.Errorf("%s.template_name: %q: a file name under %s/, without a directory", field, m.Template, TemplatesDir)
		case len(m.Catalogs) == 0:
			return nil, fmt.Errorf("%s.catalog_names: no catalog: list the catalogs (OpenShift versions such as v4.16) to render the template into", field)
		}
		if _, err := TemplateType(m.Type); err != nil {
			return nil, fmt.Errorf("%s.type: %w", field, err)
		}
		for j, cat := range m.Catalogs {
			if _, err := MigrateLevel(cat); err != nil {
				return nil, fmt.Errorf("%s.catalog_names[%d]: %w", field, j, err)
			}
			if prev, dup := seen[cat]; dup {
				return nil, fmt.Errorf("%s.catalog_names[%d]: catalog %s is mapped from %s already: a catalog takes one template", field, j, cat, prev)
			}
			seen[cat] = m.Template
		}
	}
	return r, nil
}

// TemplatePath is where m's template is.
func (r *Repo) TemplatePath(m Mapping) string {
	return filepath.Join(r.PackageDir, TemplatesDir, m.Template)
}

// CatalogDir is where catalog's rendering of the package goes: under
// outputDir/<catalog>/<package> when outputDir is set, else under the
// repository's catalogs/<catalog>/<package>. A place that a symbolic link
// takes out of the output directory (or the repository) is refused.
func (r *Repo) CatalogDir(outputDir, catalog string) (string, error) {
	base := outputDir
	if outputDir == "" {
		if r.Root == "" {
			return "", fmt.Errorf("%s is not in a catalog repository (operators/<package>/ci.yaml): say where the catalogs go with --output-dir", r.File)
		}
		base, outputDir = r.Root, filepath.Join(r.Root, "catalogs")
	}
	dir := filepath.Join(outputDir, catalog, r.Package)
	if err := atomicfile.CheckInside(base, dir); err != nil {
		return "", fmt.Errorf("catalog %s: %w", catalog, err)
	}
	return dir, nil
}

// Base is what CatalogDir's places must stay inside: outputDir when set,
// else the repository.
func (r *Repo) Base(outputDir string) string {
	if outputDir != "" {
		return outputDir
	}
	return r.Root
}

// TemplateBase is what the templates must stay inside when opm edits
// them: the repository, or the package's directory outside one.
func (r *Repo) TemplateBase() string {
	if r.Root != "" {
		return r.Root
	}
	return r.PackageDir
}

// Catalogs lists every catalog the mapping renders, sorted.
func (r *Repo) Catalogs() []string {
	var out []string
	for _, m := range r.Mappings {
		out = append(out, m.Catalogs...)
	}
	sort.Strings(out)
	return out
}

// TemplateType is the template type (template.TypeBasic, TypeSemver) of
// a catalog_mapping type.
func TemplateType(schema string) (string, error) {
	switch schema {
	case template.SchemaBasic:
		return template.TypeBasic, nil
	case template.SchemaSemver:
		return template.TypeSemver, nil
	}
	return "", fmt.Errorf("type %q: want %s or %s", schema, template.SchemaBasic, template.SchemaSemver)
}

var ocpCatalog = regexp.MustCompile(`^v?(\d+)\.(\d+)$`)

// OpenShiftVersion reads a catalog name such as v4.16 as OpenShift 4.16.
func OpenShiftVersion(catalog string) (major, minor int, err error) {
	m := ocpCatalog.FindStringSubmatch(catalog)
	if m == nil {
		return 0, 0, errors.New("not an OpenShift version such as v4.16")
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, nil
}

// MigrateLevel is the bundle format catalog needs: olm.csv.metadata from
// OpenShift 4.17 on (its catalogs must not carry olm.bundle.object), the
// bundle's manifests before.
func MigrateLevel(catalog string) (fbc.MigrateLevel, error) {
	major, minor, err := OpenShiftVersion(catalog)
	if err != nil {
		return "", fmt.Errorf("catalog %q: %w (the name says which bundle format its catalog needs)", catalog, err)
	}
	if major > 4 || (major == 4 && minor >= CSVMetadataFrom) {
		return fbc.MigrateCSVMetadata, nil
	}
	return fbc.MigrateNone, nil
}

// Target is one catalog of a mapping, rendered and ready to write.
type Target struct {
	Catalog string
	// File is where it goes: Dir/catalog.<format>, inside Base (checked
	// again as it is written).
	Dir, File, Base string
	Level           fbc.MigrateLevel
	Bundles         int
	Data            []byte
}

// Job is a mapping entry whose template is parsed.
type Job struct {
	Mapping Mapping
	// Source names the template file in messages.
	Source string
	Render templates.RenderFunc
}

// Render renders every job into each of its catalogs, bundles rendered
// at the catalog's level by renderAt, and validates each catalog. It
// returns the catalogs ready to write and, for those that failed, why
// (a catalog at a time, so that a run reports them all).
func (r *Repo) Render(ctx context.Context, jobs []Job, renderAt func(fbc.MigrateLevel) template.RenderBundle, outputDir string, format fbc.Format) ([]Target, []string, error) {
	var out []Target
	var failures []string
	// A template that fails to render fails the same way for each of its
	// catalogs (an image that cannot be pulled): said once, naming them.
	type renderFailure struct {
		at   int
		cats []string
		msg  string
	}
	var same []*renderFailure
	for _, j := range jobs {
		for _, cat := range j.Mapping.Catalogs {
			level, err := MigrateLevel(cat)
			if err != nil {
				return nil, nil, err
			}
			dir, err := r.CatalogDir(outputDir, cat)
			if err != nil {
				return nil, nil, err
			}
			c, err := j.Render(ctx, renderAt(level))
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, err
				}
				msg := fmt.Sprintf("render %s: %v", j.Source, err)
				found := false
				for _, f := range same {
					if f.msg == msg {
						f.cats, found = append(f.cats, cat), true
					}
				}
				if !found {
					same = append(same, &renderFailure{at: len(failures), cats: []string{cat}, msg: msg})
					failures = append(failures, "")
				}
				continue
			}
			var problems []string
			for _, fd := range fbc.Validate(c) {
				if fd.Severity == validate.Error {
					problems = append(problems, fd.Message)
				}
			}
			if len(problems) > 0 {
				failures = append(failures, fmt.Sprintf("catalog %s (from %s) does not validate:\n  %s", cat, j.Source, strings.Join(problems, "\n  ")))
				continue
			}
			var buf bytes.Buffer
			if err := fbc.Write(&buf, c, format); err != nil {
				return nil, nil, err
			}
			out = append(out, Target{Catalog: cat, Dir: dir, Base: r.Base(outputDir), File: filepath.Join(dir, "catalog."+string(format)), Level: level, Bundles: len(c.Bundles), Data: buf.Bytes()})
		}
	}
	for _, f := range same {
		word := "catalog "
		if len(f.cats) > 1 {
			word = "catalogs "
		}
		failures[f.at] = word + strings.Join(f.cats, ", ") + ": " + f.msg
	}
	return out, failures, nil
}

// WriteAll writes every catalog beside its place first, then moves each
// into place: a failure while writing leaves every catalog as it was.
func WriteAll(out []Target) error {
	var temps []string
	cleanup := func() {
		for _, t := range temps {
			_ = os.Remove(t)
		}
	}
	for _, r := range out {
		if r.Base != "" {
			if err := atomicfile.CheckInside(r.Base, r.File); err != nil {
				cleanup()
				return fmt.Errorf("write catalog %s: %w; nothing was written", r.Catalog, err)
			}
		}
		if err := os.MkdirAll(r.Dir, 0o755); err != nil {
			cleanup()
			return fmt.Errorf("write catalog %s: %w; nothing was written", r.Catalog, err)
		}
		if r.Base != "" {
			// Made since the check: a link put in meanwhile is caught.
			if err := atomicfile.CheckInside(r.Base, r.File); err != nil {
				cleanup()
				return fmt.Errorf("write catalog %s: %w; nothing was written", r.Catalog, err)
			}
		}
		tmp, err := os.CreateTemp(r.Dir, ".catalog-*")
		if err != nil {
			cleanup()
			return fmt.Errorf("write catalog %s: %w; nothing was written", r.Catalog, err)
		}
		temps = append(temps, tmp.Name())
		_, werr := tmp.Write(r.Data)
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), 0o644)
		}
		if werr != nil {
			cleanup()
			return fmt.Errorf("write catalog %s: %w; nothing was written", r.Catalog, werr)
		}
	}
	for i, r := range out {
		if err := os.Rename(temps[i], r.File); err != nil {
			cleanup()
			return fmt.Errorf("write catalog %s: %w (catalogs before it in the mapping were written)", r.Catalog, err)
		}
	}
	return nil
}
