package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	yaml "go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/internal/atomicfile"
	"github.com/opmkit/opm/internal/yamldoc"
)

// GenerateOptions says what `opm bundle generate` writes.
type GenerateOptions struct {
	// ManifestsDir holds the bundle's manifests (the CSV and its CRDs).
	ManifestsDir string
	// OutputDir is the bundle directory to write metadata/ (and a copy of the
	// manifests) into; empty means the parent of ManifestsDir, as upstream.
	OutputDir string
	// Package, Channels and DefaultChannel fill the annotations; empty ones
	// are taken from an existing annotations.yaml, then from the CSV.
	Package        string
	Channels       []string
	DefaultChannel string
	// Overwrite replaces an annotations.yaml that says something else.
	Overwrite bool
	// WorkDir is where bundle.Dockerfile goes (upstream: the working
	// directory); empty means the current directory.
	WorkDir string
	// Upstream selects the rules of upstream's `opm alpha bundle generate`
	// and `alpha bundle build`: no default channel is invented (several
	// channels and no DefaultChannel write no default-channel annotation,
	// as upstream did), and the package is never taken from the CSV name
	// (upstream guessed it from the directory layout instead; opm asks).
	Upstream bool
	// BaseImage is the Dockerfile's FROM (upstream --base-image); empty
	// means scratch.
	BaseImage string
}

// GenerateResult reports what Generate wrote.
type GenerateResult struct {
	BundleDir       string
	AnnotationsFile string
	Dockerfile      string
	Annotations     map[string]string
	// AnnotationsUnchanged is true when an identical annotations.yaml was
	// already there.
	AnnotationsUnchanged bool
	// CopiedManifests is set when the manifests were copied to OutputDir.
	CopiedManifests bool
	// Notes say where inferred values came from.
	Notes []string
}

// AnnotationsDiffError is returned when annotations.yaml exists, says
// something else, and Overwrite is not set.
type AnnotationsDiffError struct {
	File string
	Diff []string // lines: "- key: old" / "+ key: new"
}

func (e *AnnotationsDiffError) Error() string {
	return fmt.Sprintf("%s exists and differs from what would be generated:\n%s\nrerun with --overwrite to replace it", e.File, strings.Join(e.Diff, "\n"))
}

// Generate writes metadata/annotations.yaml and bundle.Dockerfile for the
// manifests in opts.ManifestsDir, the files upstream `opm bundle generate`
// writes, so existing build pipelines keep working.
func Generate(opts GenerateOptions) (*GenerateResult, error) {
	mdir := filepath.Clean(opts.ManifestsDir)
	st, err := os.Stat(mdir)
	if err != nil {
		return nil, fmt.Errorf("manifests directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("manifests directory %s is not a directory", mdir)
	}
	res := &GenerateResult{BundleDir: opts.OutputDir}
	if res.BundleDir == "" {
		res.BundleDir = filepath.Dir(mdir)
	}

	mediaType, csv, err := sniffManifests(mdir)
	if err != nil {
		return nil, err
	}
	res.AnnotationsFile = filepath.Join(res.BundleDir, filepath.FromSlash(AnnotationsFile))
	existing, err := readAnnotationsFile(res.AnnotationsFile)
	if err != nil {
		return nil, err
	}

	pkg := opts.Package
	if pkg == "" && !opts.Upstream && existing[AnnotationPackage] != "" {
		pkg = existing[AnnotationPackage]
		res.Notes = append(res.Notes, fmt.Sprintf("package %q taken from %s", pkg, res.AnnotationsFile))
	}
	channels := opts.Channels
	if len(channels) == 0 && existing[AnnotationChannels] != "" {
		channels = SplitChannels(existing[AnnotationChannels])
		res.Notes = append(res.Notes, fmt.Sprintf("channels %s taken from %s", strings.Join(channels, ","), res.AnnotationsFile))
	}
	if pkg == "" && !opts.Upstream {
		if p, ok := packageFromCSVName(csv.name, csv.version); ok {
			pkg = p
			res.Notes = append(res.Notes, fmt.Sprintf("package %q taken from the CSV name %s", pkg, csv.name))
		}
	}
	if pkg == "" {
		// Upstream guessed the package from the directory layout, which
		// names packages nobody chose; opm asks instead.
		where := "(opm does not guess it from the directory)"
		if !opts.Upstream {
			where = fmt.Sprintf("(%s holds none, and the manifests hold no CSV named <package>.v<version>)", res.AnnotationsFile)
			if csv.name != "" {
				where = fmt.Sprintf("(%s holds none, and the CSV name %s is not of the form <package>.v<version>)", res.AnnotationsFile, csv.name)
			}
		}
		if len(channels) == 0 {
			return nil, fmt.Errorf("no package name and no channels: give -p/--package and -c/--channels %s", where)
		}
		return nil, fmt.Errorf("no package name: give -p/--package %s", where)
	}
	if len(channels) == 0 {
		return nil, errors.New("no channels: give -c/--channels (e.g. --channels stable)")
	}
	def := opts.DefaultChannel
	if def == "" && existing[AnnotationDefaultChannel] != "" && contains(channels, existing[AnnotationDefaultChannel]) {
		def = existing[AnnotationDefaultChannel]
	}
	if def == "" && !opts.Upstream && len(channels) == 1 {
		def = channels[0]
	}
	if def == "" && !opts.Upstream {
		return nil, fmt.Errorf("several channels (%s) and no default: give -e/--default with one of them", strings.Join(channels, ", "))
	}
	if def != "" && !contains(channels, def) {
		return nil, fmt.Errorf("default channel %q is not one of the channels (%s): add it to --channels or pick one of them", def, strings.Join(channels, ", "))
	}

	// Keys opm does not manage (metrics, test or OpenShift annotations)
	// are kept from the existing file.
	ann := map[string]string{}
	for k, v := range existing {
		ann[k] = v
	}
	for k, v := range map[string]string{
		AnnotationMediaType: mediaType,
		AnnotationManifests: ManifestsDir + "/",
		AnnotationMetadata:  MetadataDir + "/",
		AnnotationPackage:   pkg,
		AnnotationChannels:  strings.Join(channels, ","),
	} {
		ann[k] = v
	}
	delete(ann, AnnotationDefaultChannel)
	if def != "" {
		ann[AnnotationDefaultChannel] = def
	}
	res.Annotations = ann

	if existing != nil {
		if diff := diffAnnotations(existing, ann); len(diff) == 0 {
			res.AnnotationsUnchanged = true
		} else if !opts.Overwrite {
			return nil, &AnnotationsDiffError{File: res.AnnotationsFile, Diff: diff}
		}
	}

	// Everything is decided: now write. The manifests copy comes first so a
	// failure leaves no annotations pointing at missing files.
	// Upstream copied only for --output-dir; without it bundle.Dockerfile
	// copies the manifests from where they are. opm's own command also
	// copies a manifests directory not named manifests/ next to metadata/,
	// so that the bundle directory is a bundle.
	manifestsUsed := mdir
	if abs(filepath.Join(res.BundleDir, ManifestsDir)) != abs(mdir) && (opts.OutputDir != "" || !opts.Upstream) {
		manifestsUsed = filepath.Join(res.BundleDir, ManifestsDir)
		if err := copyManifests(mdir, manifestsUsed); err != nil {
			return nil, err
		}
		res.CopiedManifests = true
	}
	if !res.AnnotationsUnchanged {
		data, err := MarshalAnnotations(ann)
		if err != nil {
			return nil, err
		}
		if err := writeFile(res.AnnotationsFile, data); err != nil {
			return nil, err
		}
	}
	work := opts.WorkDir
	if work == "" {
		if work, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	res.Dockerfile = filepath.Join(work, "bundle.Dockerfile")
	if err := writeFile(res.Dockerfile, UpstreamDockerfile(ann, relTo(work, manifestsUsed), relTo(work, filepath.Join(res.BundleDir, MetadataDir)), opts.BaseImage)); err != nil {
		return nil, err
	}
	return res, nil
}

// relTo is path relative to dir with forward slashes, as upstream wrote the
// COPY sources (the absolute path when there is no relative one).
func relTo(dir, path string) string {
	rel, err := filepath.Rel(abs(dir), abs(path))
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

// MarshalAnnotations writes annotations.yaml as upstream does: the keys under
// `annotations:`, sorted, indented by two spaces.
func MarshalAnnotations(ann map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(map[string]map[string]string{"annotations": ann}); err != nil {
		return nil, fmt.Errorf("encode annotations: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Dockerfile returns bundle.Dockerfile for a bundle whose directory is dir
// relative to the build context (dir/manifests and dir/metadata), FROM
// scratch, in upstream's form (UpstreamDockerfile).
func Dockerfile(ann map[string]string, dir string) []byte {
	if dir == "" || dir == "." {
		return UpstreamDockerfile(ann, ManifestsDir, MetadataDir, "")
	}
	dir = strings.TrimSuffix(dir, "/") + "/"
	return UpstreamDockerfile(ann, dir+ManifestsDir, dir+MetadataDir, "")
}

// UpstreamDockerfile returns bundle.Dockerfile byte for byte as upstream opm
// v1.73.0 wrote it: FROM the base image (scratch when empty) and a blank
// line; one LABEL each for the media type, manifests, metadata, package and
// channels annotations, then the default channel's LABEL followed by a blank
// line when there is a default (without one there is no blank line before
// the COPY lines, as upstream); COPY of the manifests and the metadata
// directories (paths relative to the build context) to /manifests/ and
// /metadata/. Other annotations get no LABEL, as upstream.
func UpstreamDockerfile(ann map[string]string, manifests, metadata, baseImage string) []byte {
	if baseImage == "" {
		baseImage = "scratch"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n\n", baseImage)
	for _, k := range []string{AnnotationMediaType, AnnotationManifests, AnnotationMetadata, AnnotationPackage, AnnotationChannels} {
		fmt.Fprintf(&b, "LABEL %s=%s\n", k, labelValue(ann[k]))
	}
	if def := ann[AnnotationDefaultChannel]; def != "" {
		fmt.Fprintf(&b, "LABEL %s=%s\n\n", AnnotationDefaultChannel, labelValue(def))
	}
	fmt.Fprintf(&b, "COPY %s /manifests/\n", manifests)
	fmt.Fprintf(&b, "COPY %s /metadata/\n", metadata)
	return []byte(b.String())
}

// labelValue quotes a LABEL value when Dockerfile syntax needs it.
func labelValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\"'\\$=") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	return `"` + r.Replace(v) + `"`
}

// sniffManifests reads the manifests to pick the media type and find the
// CSV name.
// csvIdentity is what Generate needs of the bundle's CSV.
type csvIdentity struct {
	name    string // metadata.name; "" when there is no CSV
	version string // spec.version
}

func sniffManifests(dir string) (mediaType string, csv csvIdentity, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", csv, err
	}
	any, found := false, false
	for _, e := range entries {
		if e.IsDir() || !isManifestName(e.Name()) {
			continue
		}
		any = true
		name := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(name)
		if err != nil {
			return "", csv, err
		}
		docs, err := yamldoc.Decode(name, data)
		if err != nil {
			return "", csv, err
		}
		for _, d := range docs {
			if Str(d.Value, "kind") == CSVKind && !found {
				found = true
				csv = csvIdentity{name: Str(d.Value, "metadata", "name"), version: Str(d.Value, "spec", "version")}
			}
		}
	}
	if !any {
		return "", csv, fmt.Errorf("%s holds no YAML or JSON manifests", dir)
	}
	if found {
		return MediaTypeRegistryV1, csv, nil
	}
	return MediaTypePlain, csv, nil
}

// packageFromCSVName returns the package a CSV name follows OLM's naming
// convention for, <package>.v<version> (what operator-sdk writes): the name
// must end in ".v" and the CSV's spec.version, so that a name that merely
// contains a dot is never cut into a package nobody chose. Without a
// spec.version, any semantic version after the last ".v" will do.
func packageFromCSVName(name, version string) (string, bool) {
	if version != "" {
		p, ok := strings.CutSuffix(name, ".v"+version)
		return p, ok && p != ""
	}
	i := strings.LastIndex(name, ".v")
	if i <= 0 {
		return "", false
	}
	if _, err := semver.Parse(name[i+2:]); err != nil {
		return "", false
	}
	return name[:i], true
}

func readAnnotationsFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	docs, err := yamldoc.Decode(path, data)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(docs) > 0 {
		for k, v := range MapAt(docs[0].Value, "annotations") {
			out[k] = fmt.Sprint(v)
		}
	}
	return out, nil
}

func diffAnnotations(old, new map[string]string) []string {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var diff []string
	for _, k := range sorted {
		o, inOld := old[k]
		n, inNew := new[k]
		if inOld && inNew && o == n {
			continue
		}
		if inOld {
			diff = append(diff, fmt.Sprintf("- %s: %s", k, o))
		}
		if inNew {
			diff = append(diff, fmt.Sprintf("+ %s: %s", k, n))
		}
	}
	return diff
}

func copyManifests(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !isManifestName(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(to, e.Name()), data); err != nil {
			return err
		}
	}
	return nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeFile writes data atomically, creating the directory as needed.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data)
}
