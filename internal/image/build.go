package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Epoch is the timestamp of every entry and of the config of images opm
// builds, so the same input always gives the same digest.
var Epoch = time.Unix(0, 0).UTC()

// LayerBuilder collects files for one deterministic layer: entries sorted by
// path, uid/gid 0, no user or group names, mode 0644 for files and 0755 for
// directories, timestamps at Epoch.
type LayerBuilder struct {
	files map[string][]byte // nil value: directory
}

// NewLayerBuilder returns an empty builder.
func NewLayerBuilder() *LayerBuilder { return &LayerBuilder{files: map[string][]byte{}} }

func cleanLayerPath(p string) (string, error) {
	c := path.Clean("/" + p)[1:]
	if c == "" {
		return "", fmt.Errorf("layer path %q names the root", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("layer path %q contains a .. element", p)
		}
	}
	return c, nil
}

// AddDir adds a directory (and its parents).
func (b *LayerBuilder) AddDir(p string) error {
	c, err := cleanLayerPath(p)
	if err != nil {
		return err
	}
	if data, ok := b.files[c]; ok && data != nil {
		return fmt.Errorf("layer path %q is already a file", c)
	}
	for d := c; d != "."; d = path.Dir(d) {
		if data, ok := b.files[d]; ok && data != nil {
			return fmt.Errorf("layer path %q is already a file", d)
		}
		b.files[d] = nil
	}
	return nil
}

// AddFile adds a regular file (and its parent directories).
func (b *LayerBuilder) AddFile(p string, data []byte) error {
	c, err := cleanLayerPath(p)
	if err != nil {
		return err
	}
	if dir := path.Dir(c); dir != "." {
		if err := b.AddDir(dir); err != nil {
			return err
		}
	}
	if old, ok := b.files[c]; ok && old == nil {
		return fmt.Errorf("layer path %q is already a directory", c)
	}
	if data == nil {
		data = []byte{}
	}
	b.files[c] = data
	return nil
}

// AddFS copies the tree under dir of fsys ("." for all of it) to dest in the
// layer. Symbolic links are followed (their content is copied), so a bundle
// directory that links to shared CRDs builds the same image as one holding copies.
func (b *LayerBuilder) AddFS(dest string, fsys fs.FS, dir string) error {
	if err := b.AddDir(dest); err != nil {
		return err
	}
	return b.addTree(dest, fsys, dir, 0)
}

func (b *LayerBuilder) addTree(dest string, fsys fs.FS, dir string, depth int) error {
	if depth > 32 {
		return fmt.Errorf("%s: directories nested too deeply (a symbolic link loop?)", dir)
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		src, dst := path.Join(dir, e.Name()), path.Join(dest, e.Name())
		info, err := fs.Stat(fsys, src) // follows symbolic links
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			if err := b.AddDir(dst); err != nil {
				return err
			}
			if err := b.addTree(dst, fsys, src, depth+1); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			data, err := fs.ReadFile(fsys, src)
			if err != nil {
				return err
			}
			if err := b.AddFile(dst, data); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: %s is neither a file nor a directory", src, info.Mode().Type())
		}
	}
	return nil
}

// Tar returns the layer as an uncompressed, deterministic tar.
func (b *LayerBuilder) Tar() ([]byte, error) {
	names := slices.Sorted(maps.Keys(b.files))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		data := b.files[n]
		hdr := &tar.Header{Name: n, Mode: 0o644, ModTime: Epoch, Typeflag: tar.TypeReg, Size: int64(len(data)), Format: tar.FormatPAX}
		if data == nil {
			hdr.Name, hdr.Mode, hdr.Typeflag, hdr.Size = n+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Layer returns the layer gzip-compressed with an OCI media type.
func (b *LayerBuilder) Layer() (v1.Layer, error) {
	raw, err := b.Tar()
	if err != nil {
		return nil, err
	}
	return LayerFromTar(raw)
}

// LayerFromTar gzips an uncompressed tar into an in-memory OCI layer. The gzip
// header carries no name or time, so equal input gives equal digests.
func LayerFromTar(raw []byte) (v1.Layer, error) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &memLayer{
		compressed:   gz.Bytes(),
		uncompressed: raw,
		digest:       v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256(gz.Bytes()))},
		diffID:       v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256(raw))},
		mediaType:    types.OCILayer,
	}, nil
}

// memLayer is a layer held in memory.
type memLayer struct {
	compressed, uncompressed []byte
	digest, diffID           v1.Hash
	mediaType                types.MediaType
}

func (l *memLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *memLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *memLayer) Size() (int64, error)                { return int64(len(l.compressed)), nil }
func (l *memLayer) MediaType() (types.MediaType, error) { return l.mediaType, nil }
func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.compressed)), nil
}
func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.uncompressed)), nil
}

// withMediaType returns the layer under another (equivalent) media type, so a
// gzip layer can join a Docker v2s2 image.
func withMediaType(l v1.Layer, mt types.MediaType) v1.Layer {
	if ml, ok := l.(*memLayer); ok {
		c := *ml
		c.mediaType = mt
		return &c
	}
	return l
}

// ImageConfig is what a FROM-scratch image built by opm holds besides its layers.
type ImageConfig struct {
	Labels       map[string]string
	Platform     Platform // zero: linux/amd64
	Env          []string
	Entrypoint   []string
	Cmd          []string
	WorkingDir   string
	User         string
	ExposedPorts []string // such as "50051/tcp"
}

// NewImage builds a FROM-scratch OCI image from layers (bottom first).
// Everything that could vary between runs is fixed, so the digest depends only
// on the layers and cfg.
func NewImage(cfg ImageConfig, layers ...v1.Layer) (v1.Image, error) {
	p := cfg.Platform
	if p.OS == "" {
		p = Platform{OS: "linux", Architecture: "amd64"}
	}
	cf := &v1.ConfigFile{
		Created:      v1.Time{Time: Epoch},
		Architecture: p.Architecture,
		OS:           p.OS,
		Variant:      p.Variant,
		RootFS:       v1.RootFS{Type: "layers", DiffIDs: []v1.Hash{}},
		Config: v1.Config{
			Labels:     cfg.Labels,
			Env:        cfg.Env,
			Entrypoint: cfg.Entrypoint,
			Cmd:        cfg.Cmd,
			WorkingDir: cfg.WorkingDir,
			User:       cfg.User,
		},
	}
	if len(cfg.ExposedPorts) > 0 {
		cf.Config.ExposedPorts = map[string]struct{}{}
		for _, port := range cfg.ExposedPorts {
			cf.Config.ExposedPorts[port] = struct{}{}
		}
	}
	m := &v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Layers: []v1.Descriptor{}}
	return compose(m, cf, nil, layers, types.OCIConfigJSON)
}

// AppendLayer returns base with layer on top and labels merged into its config
// (a label with an empty value is removed). Base layers are not read: when base
// comes from Image.V1Image and the destination is the same registry, Write
// mounts or skips them instead of downloading them.
func AppendLayer(base v1.Image, layer v1.Layer, labels map[string]string) (v1.Image, error) {
	m, err := base.Manifest()
	if err != nil {
		return nil, fmt.Errorf("append layer: base manifest: %w", err)
	}
	cf, err := base.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("append layer: base config: %w", err)
	}
	baseLayers, err := base.Layers()
	if err != nil {
		return nil, fmt.Errorf("append layer: base layers: %w", err)
	}
	m = m.DeepCopy()
	cf = cf.DeepCopy()
	if m.MediaType == types.DockerManifestSchema2 {
		layer = withMediaType(layer, types.DockerLayer)
	}
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range labels {
		if v == "" {
			delete(cf.Config.Labels, k)
		} else {
			cf.Config.Labels[k] = v
		}
	}
	cf.History = append(cf.History, v1.History{Created: v1.Time{Time: Epoch}, CreatedBy: "opm"})
	return compose(m, cf, baseLayers, []v1.Layer{layer}, m.Config.MediaType)
}

// compose builds the image from a manifest template and config: old layers
// are kept as they are (their descriptors copied), new ones appended.
func compose(m *v1.Manifest, cf *v1.ConfigFile, old, added []v1.Layer, configType types.MediaType) (v1.Image, error) {
	// OCI lets a manifest omit its mediaType (umoci writes such manifests);
	// the image opm writes states it, or registries store it untyped.
	if configType == "" {
		configType = types.OCIConfigJSON
	}
	if m.MediaType == "" {
		m.MediaType = manifestTypeFor(configType)
	}
	if len(old) != len(m.Layers) {
		return nil, fmt.Errorf("base has %d layers, manifest %d", len(old), len(m.Layers))
	}
	layers := slices.Clone(old)
	for _, l := range added {
		d, err := describe(l)
		if err != nil {
			return nil, err
		}
		diffID, err := l.DiffID()
		if err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, d)
		cf.RootFS.DiffIDs = append(cf.RootFS.DiffIDs, diffID)
		layers = append(layers, l)
	}
	if len(cf.History) == 0 {
		for range layers {
			cf.History = append(cf.History, v1.History{Created: v1.Time{Time: Epoch}, CreatedBy: "opm"})
		}
	}
	rawCfg, err := json.Marshal(cf)
	if err != nil {
		return nil, err
	}
	m.Config = v1.Descriptor{MediaType: configType, Size: int64(len(rawCfg)), Digest: sha256Of(rawCfg)}
	rawManifest, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &staticImage{rawManifest: rawManifest, manifest: m, rawConfig: rawCfg, config: cf, layers: layers}, nil
}

// manifestTypeFor is the manifest media type that goes with a config media
// type, for manifests that do not state theirs.
func manifestTypeFor(configType types.MediaType) types.MediaType {
	if configType == types.DockerConfigJSON {
		return types.DockerManifestSchema2
	}
	return types.OCIManifestSchema1
}

func describe(l v1.Layer) (v1.Descriptor, error) {
	d, err := l.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := l.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := l.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Size: size, Digest: d}, nil
}

// Bundle image layout: upstream's bundle.Dockerfile copies these two
// directories of the bundle to the image root.
var bundleDirs = []string{"manifests", "metadata"}

// BuildBundleImage builds a FROM-scratch bundle image: one layer holding the
// manifests/ and metadata/ directories of bundle, and labels in the config.
// The same bundle and labels always give the same digest.
func BuildBundleImage(bundle fs.FS, labels map[string]string) (v1.Image, error) {
	b := NewLayerBuilder()
	for _, d := range bundleDirs {
		info, err := fs.Stat(bundle, d)
		if err != nil {
			return nil, fmt.Errorf("build bundle image: %w", err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("build bundle image: %s is not a directory", d)
		}
		if err := b.AddFS(d, bundle, d); err != nil {
			return nil, fmt.Errorf("build bundle image: %w", err)
		}
	}
	layer, err := b.Layer()
	if err != nil {
		return nil, fmt.Errorf("build bundle image: %w", err)
	}
	return NewImage(ImageConfig{Labels: labels}, layer)
}
