package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/yamldoc"
)

// Bundle is one operator version: a CSV, its CRDs, other objects and metadata.
type Bundle struct {
	// Root is where the bundle sits inside the file system it was loaded from:
	// "." normally, or a subdirectory such as "bundle" when the bundle was
	// found one level down (common in operator repositories).
	Root string

	CSV     *CSV
	CRDs    []*CRD
	Objects []*Object // every object in manifests/, CSV and CRDs included, in file order

	Annotations  *Annotations // nil when metadata/annotations.yaml is missing
	Properties   []Property
	Dependencies []Dependency

	// PropertiesFile and DependenciesFile are set when those files exist.
	PropertiesFile   *File
	DependenciesFile *File

	// Files are the manifest and metadata files read, in name order.
	Files []*File
	// Ignored are files in manifests/ or metadata/ that are not YAML or JSON
	// and directories inside manifests/: OLM does not read them.
	Ignored []string
	// Empty are YAML or JSON files that hold no document (nothing, or only
	// comments and `---`).
	Empty []string

	Labels map[string]string // image config labels, nil for a directory
	// IndexDigest is, for a bundle read from an image given as a manifest
	// list or OCI index, the digest of that index ("" otherwise).
	IndexDigest string
}

// Dependency is one entry of metadata/dependencies.yaml.
type Dependency = Property

// File is one file of a bundle as read.
type File struct {
	Name string // slash-separated, relative to the bundle root
	Data []byte
	Docs []yamldoc.Document
}

// ErrNoCSV is returned when no ClusterServiceVersion is found.
var ErrNoCSV = errors.New("no ClusterServiceVersion found")

// ErrMultipleCSVs is returned when manifests/ holds more than one CSV.
var ErrMultipleCSVs = errors.New("more than one ClusterServiceVersion")

// MaxFileSize is the largest manifest or metadata file read for parsing:
// real ones are kilobytes (the largest CRDs a few MiB), and a file is held in
// memory several times over while it is decoded.
const MaxFileSize int64 = 64 << 20

// ErrFileTooLarge is returned (as a load problem) for a file over MaxFileSize.
var ErrFileTooLarge = errors.New("file too large")

// FileTooLargeError names the file over MaxFileSize.
type FileTooLargeError struct {
	File string
	Size int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d MiB a bundle file may have; it was not read (bundle manifests are kilobytes: split or remove it)",
		e.File, e.Size, MaxFileSize>>20)
}

func (e *FileTooLargeError) Unwrap() error { return ErrFileTooLarge }

// nestedSearchDepth bounds how far below the given directory Load looks for
// a bundle that is not at the top.
const nestedSearchDepth = 3

// SymlinkError is a symbolic link in a bundle directory that leads outside
// it: a bundle is what its directory holds, and a link out would make it
// read (and an image built from it carry) files from elsewhere.
type SymlinkError struct {
	File   string // the link, relative to the bundle directory
	Target string // where it points
}

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link to %s, outside the bundle directory; it was not followed (copy the file into the bundle, or pass --follow-symlinks to read it)", e.File, e.Target)
}

// BundleSubdirError is ErrNoCSV for a directory that is the manifests/ or
// metadata/ directory of a bundle: the bundle is its parent.
type BundleSubdirError struct {
	Dir    string // as given
	Sub    string // ManifestsDir or MetadataDir
	Bundle string // the parent, the directory to give instead
}

func (e *BundleSubdirError) Error() string {
	return fmt.Sprintf("%s is the %s/ directory of the bundle %s, not a bundle directory (the one that holds %s/ and %s/)",
		e.Dir, e.Sub, e.Bundle, ManifestsDir, MetadataDir)
}

func (e *BundleSubdirError) Unwrap() error { return ErrNoCSV }

// Hint is what to do instead.
func (e *BundleSubdirError) Hint() string {
	return fmt.Sprintf("give the bundle directory %s instead", e.Bundle)
}

// bundleSubdir returns a *BundleSubdirError when dir, in which no bundle
// was found, is a bundle's manifests/ (it holds a CSV) or metadata/ (its
// parent holds manifests/).
func bundleSubdir(dir string, fsys fs.FS) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	// The parent as the user would write it: ".." for ".".
	parent := filepath.Join(filepath.Clean(dir), "..")
	name := filepath.Base(abs)
	switch name {
	case ManifestsDir:
		if !hasCSVFile(fsys, ".") {
			return nil
		}
	case MetadataDir:
		if st, err := os.Stat(filepath.Join(parent, ManifestsDir)); err != nil || !st.IsDir() {
			return nil
		}
	default:
		return nil
	}
	return &BundleSubdirError{Dir: dir, Sub: name, Bundle: parent}
}

// LoadOptions tune LoadDirWith.
type LoadOptions struct {
	// FollowSymlinks follows symbolic links that lead outside the bundle
	// directory; without it each one is a *SymlinkError problem.
	FollowSymlinks bool
}

// LoadDir loads the bundle in the directory dir; symbolic links leading
// outside dir are not followed (see LoadDirWith).
func LoadDir(dir string) (*Bundle, error) { return LoadDirWith(dir, LoadOptions{}) }

// LoadDirWith is LoadDir with options.
func LoadDirWith(dir string, opts LoadOptions) (*Bundle, error) {
	fsys, done, err := openDir(dir, opts)
	if err != nil {
		return nil, err
	}
	defer done()
	b, err := Load(fsys)
	if errors.Is(err, ErrNoCSV) {
		if sub := bundleSubdir(dir, fsys); sub != nil {
			err = sub
		}
	}
	return b, err
}

// openDir is the file system LoadDirWith reads dir through; done releases
// it.
func openDir(dir string, opts LoadOptions) (fsys fs.FS, done func(), err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory", dir)
	}
	if opts.FollowSymlinks {
		return os.DirFS(dir), func() {}, nil
	}
	// os.Root refuses any path, links included, that resolves outside dir.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	return root.FS(), func() { _ = root.Close() }, nil
}

// PeekPackageDir is PeekPackage for the bundle directory dir, read as
// LoadDirWith(dir, opts) reads it.
func PeekPackageDir(dir string, opts LoadOptions) string {
	fsys, done, err := openDir(dir, opts)
	if err != nil {
		return ""
	}
	defer done()
	return PeekPackage(fsys)
}

// escapingLink reports the target of name when name is a symbolic link
// that fsys refuses to follow.
func escapingLink(fsys fs.FS, name string) (string, bool) {
	target, err := fs.ReadLink(fsys, name)
	if err != nil {
		return "", false
	}
	if _, err := fs.Stat(fsys, name); err == nil {
		return "", false
	}
	clean := path.Clean(path.Join(path.Dir(name), target))
	if path.IsAbs(target) || clean == ".." || strings.HasPrefix(clean, "../") {
		return target, true
	}
	return "", false
}

// Load reads a bundle from fsys, a directory or an image's file system.
//
// The bundle is located by its CSV, not by file names: normally in
// manifests/, otherwise in the one subdirectory (up to three levels down)
// whose manifests/ holds a CSV; Root says where it was found.
//
// When some files cannot be read (a YAML syntax error, two CSVs, no CSV),
// Load returns the error together with the bundle loaded so far, so that a
// validator can report every problem at once; a caller that needs a whole
// bundle must treat any error as fatal. Each problem is its own error in the
// joined error (see Problems); syntax errors are *yamldoc.SyntaxError.
func Load(fsys fs.FS) (*Bundle, error) {
	root, err := locate(fsys)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Root: root}
	var problems []error
	sub := fsys
	if root != "." {
		if sub, err = fs.Sub(fsys, root); err != nil {
			return nil, err
		}
	}

	var csvObjects []*Object
	manifests, tooLarge, err := b.readDir(sub, ManifestsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// (tooLarge holds every file refused unread: too large, or a link out.)
	problems = append(problems, tooLarge...)
	for _, f := range manifests {
		docs, err := yamldoc.Decode(f.Name, f.Data)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		f.Docs = docs
		if len(docs) == 0 {
			b.Empty = append(b.Empty, f.Name)
		}
		for _, d := range docs {
			o := newObject(f.Name, d)
			b.Objects = append(b.Objects, o)
			switch {
			case o.Kind == CSVKind:
				csvObjects = append(csvObjects, o)
			case isCRD(o):
				b.CRDs = append(b.CRDs, decodeCRD(o))
			}
		}
	}
	switch {
	case len(csvObjects) == 1:
		b.CSV = decodeCSV(csvObjects[0])
	case len(csvObjects) > 1:
		b.CSV = decodeCSV(csvObjects[0])
		var files []string
		for _, o := range csvObjects {
			files = append(files, o.File)
		}
		problems = append(problems, fmt.Errorf("%w: %s/ holds %d (%s); a bundle has exactly one, so move the others to bundles of their own",
			ErrMultipleCSVs, ManifestsDir, len(csvObjects), strings.Join(files, ", ")))
	case len(problems) == 0:
		problems = append(problems, fmt.Errorf("%w in %s/: a bundle keeps exactly one CSV (kind: %s) there", ErrNoCSV, path.Join(root, ManifestsDir), CSVKind))
	default:
		// A file that did not parse may be the CSV: say so rather than
		// claiming there is none.
		problems = append(problems, fmt.Errorf("%w among the files that parsed in %s/; the CSV may be in a file with a syntax error: fix those first", ErrNoCSV, path.Join(root, ManifestsDir)))
	}

	metaProblems, err := b.readMetadata(sub)
	if err != nil {
		return nil, err
	}
	problems = append(problems, metaProblems...)
	sort.Slice(b.Files, func(i, j int) bool { return b.Files[i].Name < b.Files[j].Name })
	return b, errors.Join(problems...)
}

// readMetadata reads metadata/: the annotations, properties and
// dependencies files. Files that cannot be read or do not parse are
// returned as problems.
func (b *Bundle) readMetadata(sub fs.FS) ([]error, error) {
	metadata, tooLarge, err := b.readDir(sub, MetadataDir)
	if target, ok := escapingLink(sub, MetadataDir); ok && err != nil {
		tooLarge, err = []error{&SymlinkError{File: MetadataDir, Target: target}}, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	problems := tooLarge
	for _, f := range metadata {
		docs, err := yamldoc.Decode(f.Name, f.Data)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		f.Docs = docs
		base := path.Base(f.Name)
		stem := strings.TrimSuffix(base, path.Ext(base))
		if len(docs) == 0 {
			b.Empty = append(b.Empty, f.Name)
			continue
		}
		switch {
		case stem == "annotations" || (b.Annotations == nil && hasKey(docs[0].Value, "annotations") && stem != "properties" && stem != "dependencies"):
			if b.Annotations == nil || stem == "annotations" {
				b.Annotations = decodeAnnotations(f.Name, docs[0])
			}
		case b.DependenciesFile == nil && len(Slice(docs[0].Value, "dependencies")) > 0:
			// Like OLM, the first file (by name) listing dependencies is the
			// dependencies file whatever its name (a properties.yaml that
			// holds dependencies is common), and likewise for properties.
			b.DependenciesFile = f
			b.Dependencies = decodeProperties(docs[0], "dependencies")
		case b.PropertiesFile == nil && len(Slice(docs[0].Value, "properties")) > 0:
			b.PropertiesFile = f
			b.Properties = decodeProperties(docs[0], "properties")
		case stem == "properties" && b.PropertiesFile == nil:
			b.PropertiesFile = f // no list: kept so that validation can say so
		case stem == "dependencies" && b.DependenciesFile == nil:
			b.DependenciesFile = f
		}
	}
	return problems, nil
}

// PeekPackage returns the package annotation of the bundle in fsys as Load
// would read it, reading only what locates the bundle and its metadata/
// files (not its manifests): a cheap way to learn which bundles of a long
// list belong together before loading any. It returns "" when that is not
// known without loading: no readable annotations, or no package annotation
// (then Bundle.Package falls back to the CSV name).
func PeekPackage(fsys fs.FS) string {
	root, err := locate(fsys)
	if err != nil {
		return ""
	}
	sub := fsys
	if root != "." {
		if sub, err = fs.Sub(fsys, root); err != nil {
			return ""
		}
	}
	b := &Bundle{Root: root}
	if _, err := b.readMetadata(sub); err != nil || b.Annotations == nil {
		return ""
	}
	return b.Annotations.Package()
}

func hasKey(v any, k string) bool {
	_, ok := Lookup(v, k)
	return ok
}

// Problems splits an error from Load into its separate problems.
func Problems(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// readDir reads the YAML and JSON files directly inside dir. Anything else is
// recorded in Ignored, since OLM reads only those. Files over MaxFileSize are
// not read, nor are links leading out of fsys: each is a *FileTooLargeError
// or *SymlinkError in tooLarge.
func (b *Bundle) readDir(fsys fs.FS, dir string) (files []*File, tooLarge []error, err error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		if e.IsDir() || !isManifestName(e.Name()) {
			b.Ignored = append(b.Ignored, name)
			continue
		}
		if !e.Type().IsRegular() {
			// A link inside the bundle is followed; one that leads out is
			// refused by LoadDir's file system (an image file system has
			// refused such links already).
			if target, ok := escapingLink(fsys, name); ok {
				tooLarge = append(tooLarge, &SymlinkError{File: name, Target: target})
				b.Ignored = append(b.Ignored, name)
				continue
			}
			info, err := fs.Stat(fsys, name)
			if err != nil || !info.Mode().IsRegular() {
				b.Ignored = append(b.Ignored, name)
				continue
			}
		}
		data, err := readLimited(fsys, name)
		var tl *FileTooLargeError
		if errors.As(err, &tl) {
			tooLarge = append(tooLarge, err)
			b.Ignored = append(b.Ignored, name)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", name, err)
		}
		f := &File{Name: name, Data: data}
		files = append(files, f)
		b.Files = append(b.Files, f)
	}
	return files, tooLarge, nil
}

// readLimited reads name unless it is over MaxFileSize (by its size, or by
// what it yields: a file system's size may not be the truth).
func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxFileSize {
		return nil, &FileTooLargeError{File: name, Size: st.Size()}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > MaxFileSize {
		return nil, &FileTooLargeError{File: name, Size: int64(len(data))}
	}
	return data, nil
}

func isManifestName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return !strings.HasPrefix(name, ".")
	}
	return false
}

// locate finds the bundle root inside fsys.
func locate(fsys fs.FS) (string, error) {
	if isDir(fsys, ManifestsDir) {
		return ".", nil
	}
	if target, ok := escapingLink(fsys, ManifestsDir); ok {
		return "", &SymlinkError{File: ManifestsDir, Target: target}
	}
	var found []string
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if depth > nestedSearchDepth {
			return nil
		}
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			sub := path.Join(dir, e.Name())
			if e.Name() == ManifestsDir {
				if dir != "." && hasCSVFile(fsys, sub) {
					found = append(found, dir)
				}
				continue
			}
			if err := walk(sub, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(".", 1); err != nil {
		return "", fmt.Errorf("look for the bundle: %w", err)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		if hasCSVFile(fsys, ".") {
			return "", fmt.Errorf("%w in a %s/ directory: the CSV sits at the top; a bundle keeps it and its CRDs in %s/ and its annotations in %s/ (opm bundle generate writes that layout)", ErrNoCSV, ManifestsDir, ManifestsDir, MetadataDir)
		}
		return "", fmt.Errorf("%w: no %s/ directory here or up to %d levels down; is this a bundle directory?", ErrNoCSV, ManifestsDir, nestedSearchDepth)
	}
	return "", fmt.Errorf("%d bundles found below this directory (%s): give one of them", len(found), strings.Join(found, ", "))
}

func isDir(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.IsDir()
}

// hasCSVFile is a cheap check for a file in dir that declares a CSV.
func hasCSVFile(fsys fs.FS, dir string) bool {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() || !isManifestName(e.Name()) {
			continue
		}
		data, err := readLimited(fsys, path.Join(dir, e.Name()))
		if err == nil && bytes.Contains(data, []byte(CSVKind)) {
			return true
		}
	}
	return false
}

// ParseCSVFile reads a lone CSV file (what `opm csv lint` is given) into a
// bundle that holds just that CSV; Root is "" to mark it as standalone.
func ParseCSVFile(name string, data []byte) (*Bundle, error) {
	docs, err := yamldoc.Decode(name, data)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Files: []*File{{Name: name, Data: data, Docs: docs}}}
	for _, d := range docs {
		o := newObject(name, d)
		b.Objects = append(b.Objects, o)
		if o.Kind == CSVKind && b.CSV == nil {
			b.CSV = decodeCSV(o)
		}
	}
	if b.CSV == nil {
		if len(b.Objects) == 0 {
			return b, fmt.Errorf("%s: %w (the file holds no YAML document)", name, ErrNoCSV)
		}
		// Say what the file is instead: a CRD given to csv lint is a
		// mistaken argument, not a CSV without a kind.
		var kinds []string
		for _, o := range b.Objects {
			k := o.Kind
			if k == "" {
				k = "a document without kind"
			}
			if o.Name != "" {
				k += " " + o.Name
			}
			kinds = append(kinds, k)
		}
		return b, fmt.Errorf("%s: %w: the file holds %s, and no document with kind: %s", name, ErrNoCSV, strings.Join(kinds, ", "), CSVKind)
	}
	return b, nil
}

// Standalone reports whether the bundle is a lone CSV file rather than a
// bundle directory, so bundle-level rules do not apply.
func (b *Bundle) Standalone() bool { return b.Root == "" }

// Package is the package name: the annotation, or failing that the CSV name
// up to ".v".
func (b *Bundle) Package() string {
	if b.Annotations != nil && b.Annotations.Package() != "" {
		return b.Annotations.Package()
	}
	if b.CSV != nil {
		name := b.CSV.Metadata.Name
		if i := strings.Index(name, ".v"); i > 0 {
			return name[:i]
		}
	}
	return ""
}

// File returns the file named name, or nil.
func (b *Bundle) File(name string) *File {
	for _, f := range b.Files {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func isDirPath(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
