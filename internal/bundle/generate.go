package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/internal/atomicfile"
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

	mediaType, csvName, err := sniffManifests(mdir)
	if err != nil {
		return nil, err
	}
	res.AnnotationsFile = filepath.Join(res.BundleDir, filepath.FromSlash(AnnotationsFile))
	existing, err := readAnnotationsFile(res.AnnotationsFile)
	if err != nil {
		return nil, err
	}

	pkg := opts.Package
	if pkg == "" && existing[AnnotationPackage] != "" {
		pkg = existing[AnnotationPackage]
		res.Notes = append(res.Notes, fmt.Sprintf("package %q taken from %s", pkg, res.AnnotationsFile))
	}
	if pkg == "" && csvName != "" {
		if i := strings.Index(csvName, ".v"); i > 0 {
			pkg = csvName[:i]
			res.Notes = append(res.Notes, fmt.Sprintf("package %q taken from the CSV name %s", pkg, csvName))
		}
	}
	if pkg == "" {
		return nil, errors.New("no package name: give --package (it was not in an existing annotations.yaml or the CSV name)")
	}
	channels := opts.Channels
	if len(channels) == 0 && existing[AnnotationChannels] != "" {
		channels = SplitChannels(existing[AnnotationChannels])
		res.Notes = append(res.Notes, fmt.Sprintf("channels %s taken from %s", strings.Join(channels, ","), res.AnnotationsFile))
	}
	if len(channels) == 0 {
		return nil, errors.New("no channels: give --channels (e.g. --channels stable)")
	}
	def := opts.DefaultChannel
	if def == "" && existing[AnnotationDefaultChannel] != "" && contains(channels, existing[AnnotationDefaultChannel]) {
		def = existing[AnnotationDefaultChannel]
	}
	if def == "" && len(channels) == 1 {
		def = channels[0]
	}
	if def == "" {
		return nil, fmt.Errorf("several channels (%s) and no default: give --default with one of them", strings.Join(channels, ", "))
	}
	if !contains(channels, def) {
		return nil, fmt.Errorf("default channel %q is not one of the channels (%s): add it to --channels or pick one of them", def, strings.Join(channels, ", "))
	}

	// Keys opm does not manage (metrics, test or OpenShift annotations)
	// are kept from the existing file.
	ann := map[string]string{}
	for k, v := range existing {
		ann[k] = v
	}
	for k, v := range map[string]string{
		AnnotationMediaType:      mediaType,
		AnnotationManifests:      ManifestsDir + "/",
		AnnotationMetadata:       MetadataDir + "/",
		AnnotationPackage:        pkg,
		AnnotationChannels:       strings.Join(channels, ","),
		AnnotationDefaultChannel: def,
	} {
		ann[k] = v
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
	if abs(filepath.Join(res.BundleDir, ManifestsDir)) != abs(mdir) {
		if err := copyManifests(mdir, filepath.Join(res.BundleDir, ManifestsDir)); err != nil {
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
	rel, err := filepath.Rel(work, res.BundleDir)
	if err != nil {
		rel = res.BundleDir
	}
	if err := writeFile(res.Dockerfile, Dockerfile(ann, filepath.ToSlash(rel))); err != nil {
		return nil, err
	}
	return res, nil
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
// relative to the build context: FROM scratch, one LABEL per annotation
// (the six core ones first, in upstream's order), and the two COPY lines.
func Dockerfile(ann map[string]string, dir string) []byte {
	var b strings.Builder
	b.WriteString("FROM scratch\n\n# Bundle labels: the same keys and values as metadata/annotations.yaml.\n")
	core := []string{AnnotationMediaType, AnnotationManifests, AnnotationMetadata, AnnotationPackage, AnnotationChannels, AnnotationDefaultChannel}
	var rest []string
	for k := range ann {
		if !contains(core, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range append(core, rest...) {
		if v, ok := ann[k]; ok {
			fmt.Fprintf(&b, "LABEL %s=%s\n", k, labelValue(v))
		}
	}
	if dir == "" || dir == "." {
		dir = ""
	} else {
		dir = strings.TrimSuffix(dir, "/") + "/"
	}
	b.WriteString("\n# The image holds the manifests and metadata at the paths the labels name.\n")
	fmt.Fprintf(&b, "COPY %s%s /%s/\n", dir, ManifestsDir, ManifestsDir)
	fmt.Fprintf(&b, "COPY %s%s /%s/\n", dir, MetadataDir, MetadataDir)
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
func sniffManifests(dir string) (mediaType, csvName string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", "", err
	}
	any := false
	for _, e := range entries {
		if e.IsDir() || !isManifestName(e.Name()) {
			continue
		}
		any = true
		name := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(name)
		if err != nil {
			return "", "", err
		}
		docs, err := decodeDocuments(name, data)
		if err != nil {
			return "", "", err
		}
		for _, d := range docs {
			if Str(d.Value, "kind") == CSVKind && csvName == "" {
				csvName = Str(d.Value, "metadata", "name")
				if csvName == "" {
					csvName = "-"
				}
			}
		}
	}
	if !any {
		return "", "", fmt.Errorf("%s holds no YAML or JSON manifests", dir)
	}
	if csvName != "" {
		return MediaTypeRegistryV1, strings.TrimPrefix(csvName, "-"), nil
	}
	return MediaTypePlain, "", nil
}

func readAnnotationsFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	docs, err := decodeDocuments(path, data)
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
