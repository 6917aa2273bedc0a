// Package bundleimage builds a bundle directory into a bundle image: in
// process (FROM scratch or a base image, one layer, the annotations as
// labels, written to any image destination), or with a container tool
// from a generated bundle.Dockerfile, as upstream did. It also finds the
// bundle directory behind upstream's -d (Locate). Validation and metadata
// generation are internal/validate's and internal/bundle's.
package bundleimage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
)

// Locate finds the bundle and manifests directories of dir: dir is the
// bundle directory when it holds manifests/, else (upstream's -d) the
// manifests directory itself, whose parent is the bundle.
func Locate(dir string) (bundleDir, manifestsDir string) {
	dir = filepath.Clean(dir)
	bundleDir, manifestsDir = dir, filepath.Join(dir, bundle.ManifestsDir)
	if st, err := os.Stat(manifestsDir); err != nil || !st.IsDir() {
		bundleDir, manifestsDir = filepath.Dir(dir), dir
	}
	return bundleDir, manifestsDir
}

// Prepare finds the bundle directory of dir (see Locate) and generates
// its metadata as bundle.Generate does (ManifestsDir and WorkDir are
// filled in) when g asks for any of it or the bundle has none; the result
// is nil when nothing was generated. bundle.Dockerfile is written aside and
// dropped: an in-process build does not want it, and a tool's build writes
// its own.
func Prepare(dir string, g bundle.GenerateOptions) (string, *bundle.GenerateResult, error) {
	bundleDir, manifestsDir := Locate(dir)
	asked := g.Package != "" || len(g.Channels) > 0 || g.DefaultChannel != "" || g.OutputDir != "" || g.Overwrite
	if _, err := os.Stat(filepath.Join(bundleDir, filepath.FromSlash(bundle.AnnotationsFile))); !asked && !errors.Is(err, fs.ErrNotExist) {
		return bundleDir, nil, nil
	}
	work, err := os.MkdirTemp("", "opm-build-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(work)
	g.ManifestsDir, g.WorkDir = manifestsDir, work
	res, err := bundle.Generate(g)
	if err != nil {
		return "", nil, fmt.Errorf("generate bundle metadata: %w", err)
	}
	return res.BundleDir, res, nil
}

// Build is an in-process build of a bundle image.
type Build struct {
	// FS is the bundle directory's files (see bundlesource.DirFS), for an
	// in-process build.
	FS fs.FS
	// Dir is the bundle directory, for a tool's build.
	Dir string
	// Labels are the image labels (the bundle's annotations).
	Labels map[string]string
	// BaseImage is the image to build on; "" or "scratch" is scratch.
	BaseImage string
	// FollowSymlinks says links out of the bundle were followed.
	FollowSymlinks bool
	// Tool, when set, builds the image into the tool's local storage from
	// a generated bundle.Dockerfile (see WithTool) instead of in process.
	Tool *containertools.Runner
}

// Result is what a build made.
type Result struct {
	// Builder is "opm" (in process) or the container tool used.
	Builder string
	// Digest is the manifest digest (in-process builds only).
	Digest string
	// Dockerfile is the bundle.Dockerfile a tool built from ("" for a
	// temporary one).
	Dockerfile string
}

// Write builds the image and writes it to ref with c (nil with a Tool).
func (b Build) Write(ctx context.Context, c *image.Client, ref image.Ref) (*Result, error) {
	if b.Tool != nil {
		if err := b.holdToPolicy(c); err != nil {
			return nil, &BaseError{Err: err}
		}
		df, err := WithTool(ctx, b.Tool, b.Dir, b.Labels, ref, b.BaseImage)
		if err != nil {
			return nil, err
		}
		return &Result{Builder: string(b.Tool.Tool), Dockerfile: df}, nil
	}
	var base v1.Image
	if b.BaseImage != "" && b.BaseImage != "scratch" {
		im, err := c.OpenString(ctx, b.BaseImage)
		if err != nil {
			return nil, &BaseError{Err: err}
		}
		defer func() { _ = im.Close() }()
		base = im.V1Image(ctx)
	}
	img, err := image.BuildBundleImageFrom(base, b.FS, b.Labels)
	if err != nil {
		// os.Root's refusal of a link out, found while building.
		linkOut := !b.FollowSymlinks && strings.Contains(err.Error(), "path escapes from parent")
		return nil, &ReadError{Err: err, LinkOut: linkOut}
	}
	d, err := c.Write(ctx, img, ref)
	if err != nil {
		return nil, err
	}
	return &Result{Builder: "opm", Digest: d.String()}, nil
}

// holdToPolicy holds the tool's pull of the base image to the signature
// policy of c, as opm's own pull would be: podman and buildah are given
// the policy file; docker, which checks no signatures, is refused when the
// policy requires any.
func (b Build) holdToPolicy(c *image.Client) error {
	if c == nil || b.BaseImage == "" || b.BaseImage == "scratch" {
		return nil
	}
	policy, checks, err := c.SignaturePolicy()
	switch {
	case err != nil:
		return err
	case b.Tool.Tool == containertools.Docker && checks:
		return fmt.Errorf("the signature policy %s requires signatures, which %s does not check when it pulls %s: build without --image-builder (opm pulls and checks it) or with podman", policy, b.Tool.Tool, b.BaseImage)
	case b.Tool.Tool != containertools.Docker && policy != "":
		b.Tool.BuildFlags = append(b.Tool.BuildFlags, "--signature-policy", policy)
	}
	return nil
}

// ReadError is a bundle that could not be read into an image; LinkOut
// says the cause is a symbolic link out of the bundle.
type ReadError struct {
	Err     error
	LinkOut bool
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// BaseError is a base image that could not be opened.
type BaseError struct{ Err error }

func (e *BaseError) Error() string { return "base image: " + e.Err.Error() }
func (e *BaseError) Unwrap() error { return e.Err }

// WithTool writes bundle.Dockerfile and builds it with the tool. When the
// bundle is inside the working directory, the Dockerfile goes there and
// the working directory is the build context, as upstream's; otherwise (a
// build context must hold what it copies) the bundle directory is the
// context and the Dockerfile a temporary file, so that nothing is written
// into a directory opm was only asked to read. baseImage, when set, builds
// upstream's Dockerfile on it. It returns the Dockerfile's path, "" for a
// temporary one.
func WithTool(ctx context.Context, r *containertools.Runner, bundleDir string, labels map[string]string, ref image.Ref, baseImage string) (string, error) {
	bundleAbs, err := filepath.Abs(bundleDir)
	if err != nil {
		return "", err
	}
	var contextDir, rel, dockerfile string
	temp := false
	if wd, err := os.Getwd(); err == nil {
		if p, err := filepath.Rel(wd, bundleAbs); err == nil && p != ".." && !strings.HasPrefix(p, ".."+string(filepath.Separator)) {
			contextDir, rel, dockerfile = wd, filepath.ToSlash(p), filepath.Join(wd, "bundle.Dockerfile")
		}
	}
	if dockerfile == "" {
		tmp, err := os.MkdirTemp("", "opm-build-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		contextDir, rel, dockerfile = bundleAbs, ".", filepath.Join(tmp, "bundle.Dockerfile")
		temp = true
	}
	df := bundle.Dockerfile(labels, rel)
	if baseImage != "" {
		dir := ""
		if rel != "." {
			dir = strings.TrimSuffix(rel, "/") + "/"
		}
		df = bundle.UpstreamDockerfile(labels, dir+bundle.ManifestsDir, dir+bundle.MetadataDir, baseImage)
	}
	if err := os.WriteFile(dockerfile, df, 0o644); err != nil { //nolint:gosec // a Dockerfile is not secret
		return "", fmt.Errorf("write bundle.Dockerfile: %w", err)
	}
	if err := r.Build(ctx, dockerfile, ref.Name, contextDir); err != nil {
		return "", fmt.Errorf("build with %s: %w", r.Tool, err)
	}
	if temp {
		return "", nil
	}
	return dockerfile, nil
}
