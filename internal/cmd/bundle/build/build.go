// Package build is `opm bundle build`.
package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/lintflags"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/validate"
)

// Options are the flags of opm bundle build.
type Options struct {
	lintflags.Flags
	Directory      string
	Tag            string
	Package        string
	Channels       []string
	DefaultChannel string
	OutputDir      string
	Overwrite      bool
	ImageBuilder   string
	Permissive     bool
	Image          image.Options
	Load           bundle.LoadOptions
}

// NewCmd is `opm bundle build`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "build -d DIR -t REF",
		Short: "Validate a bundle and build its image (no container tool needed)",
		Long: `Validate the bundle in --directory, then build its bundle image and write it to
--tag: a registry (pushed), oci:DIR[:TAG], oci-archive:FILE[:TAG] or
docker-archive:FILE.

--directory is a bundle directory (holding manifests/ and metadata/) or, as
upstream, the manifests directory itself (the bundle is its parent, or
--output-dir). metadata/annotations.yaml is generated as by 'opm bundle
generate' when it is missing or when --package, --channels, --default,
--output-dir or --overwrite is given.

The bundle is validated with the same rules as 'opm bundle validate'; a
failing finding (see --fail-on) stops the build unless --permissive is given.

The image is built in-process, without a container tool: FROM scratch, one
layer holding /manifests/ and /metadata/, the annotations as labels, fixed
timestamps, owners and modes, so the same bundle always gives the same
digest. With --image-builder, opm instead writes bundle.Dockerfile and runs
docker, podman or buildah to build --tag into that tool's local storage (push
it with the tool), as upstream does.

Exit status: 0 built, 1 failing findings (nothing built), 2 for a usage or
I/O error (bad flag, unreadable directory, registry or tool failure).`,
		Example: `  opm bundle build -d ./bundle -t quay.io/org/etcd-bundle:0.9.4
  opm bundle build -d ./bundle/manifests -p etcd -c alpha -t oci:./layout:0.9.4
  opm bundle build -d ./bundle -t 127.0.0.1:5000/etcd-bundle:0.9.4 --use-http -o json
  opm bundle build -d ./bundle -t quay.io/org/etcd-bundle:0.9.4 --image-builder podman`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	opts.Add(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&opts.Directory, "directory", "d", "", "the bundle directory (manifests/ and metadata/) or its manifests directory (required)")
	fl.StringVarP(&opts.Tag, "tag", "t", "", "where to write the image: registry name, oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE (required)")
	fl.StringVarP(&opts.Package, "package", "p", "", "the package name, for generating annotations.yaml")
	fl.StringSliceVarP(&opts.Channels, "channels", "c", nil, "comma-separated channels, for generating annotations.yaml")
	fl.StringVarP(&opts.DefaultChannel, "default", "e", "", "the default channel, for generating annotations.yaml")
	fl.StringVarP(&opts.OutputDir, "output-dir", "u", "", "bundle directory to generate metadata into (default: beside the manifests)")
	fl.BoolVar(&opts.Overwrite, "overwrite", false, "regenerate an annotations.yaml that differs")
	fl.StringVarP(&opts.ImageBuilder, "image-builder", "b", "", "build with this tool instead of in-process: docker, podman or buildah")
	fl.BoolVar(&opts.Permissive, "permissive", false, "build even when validation finds failing findings")
	opts.Image.AddFlags(fl)
	bundlesource.AddFlags(fl, &opts.Load)
	return cmd
}

// buildResult is what -o json prints after a build.
type buildResult struct {
	Ref string `json:"ref"`
	// Digest is the manifest digest (in-process builds only).
	Digest string `json:"digest,omitempty"`
	// Builder is "opm" (in-process) or the container tool used.
	Builder    string             `json:"builder"`
	Dockerfile string             `json:"dockerfile,omitempty"`
	BundleDir  string             `json:"bundleDir"`
	Labels     map[string]string  `json:"labels"`
	Findings   []validate.Finding `json:"findings"`
}

// Run validates and builds the bundle.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	vopts, err := opts.Options(f)
	if err != nil {
		return err
	}
	if opts.Directory == "" {
		return exit.Usagef("--directory is required: the bundle directory (or its manifests directory) to build")
	}
	if opts.Tag == "" {
		return exit.Usagef("--tag is required: where to write the image (registry name, oci:DIR[:TAG], oci-archive:FILE, docker-archive:FILE)")
	}
	ref, err := image.ParseReference(opts.Tag)
	if err != nil {
		return exit.Usagef("--tag %s: %v", opts.Tag, err)
	}
	var runner *containertools.Runner
	if opts.ImageBuilder != "" {
		tool, err := containertools.ParseTool(opts.ImageBuilder)
		if err != nil {
			return exit.Usagef("--image-builder: %v", err)
		}
		if ref.Transport != image.TransportRegistry {
			return exit.Usagef("--tag %s: with --image-builder the tag is an image name in %s's local storage (such as quay.io/org/bundle:v1); drop --image-builder to write %s: directly", opts.Tag, tool, ref.Transport)
		}
		if runner, err = containertools.Find(tool); err != nil {
			return exit.Usagef("--image-builder: %v", err)
		}
		runner.Stdout, runner.Stderr = f.IO.ErrOut, f.IO.ErrOut
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}

	bundleDir, err := opts.prepare(f)
	if err != nil {
		return err
	}

	// Validate, exactly as `opm bundle validate` would.
	in, err := bundlesource.DirInputWith(bundleDir, opts.Load)
	if err != nil {
		return exit.With(exit.Usage, err)
	}
	var loaded *bundle.Bundle
	load := in.Load
	in.Load = func(ctx context.Context) (*bundle.Bundle, error) {
		b, err := load(ctx)
		loaded = b
		return b, err
	}
	res := validate.Run(ctx, []validate.Input{in}, vopts)
	if ctx.Err() != nil {
		return exit.Interrupt()
	}
	findings := res.Bundles[0].Findings
	if !res.Passed && !opts.Permissive {
		if err := opts.Render(f, res, vopts.FailOn, "bundle"); !errors.Is(err, exit.Findings) {
			return err
		}
		return exit.With(exit.Failed, fmt.Errorf("not building %s: the bundle has failing findings; fix them, or build anyway with --permissive", opts.Tag))
	}
	if opts.Output != output.JSON && len(findings) > 0 {
		// Show what was found even when it does not stop the build.
		t := f.IO.ErrTheme()
		if err := validate.WriteText(f.IO.ErrOut, res, validate.TextOptions{Styles: t.ValidateStyles(), FailOn: vopts.FailOn}); err != nil {
			return exit.With(exit.Usage, err)
		}
	}
	if loaded == nil || loaded.Annotations == nil {
		return exit.With(exit.Failed, fmt.Errorf("cannot build %s: the bundle has no readable metadata/annotations.yaml to take the image labels from", bundleDir))
	}
	if loaded.Root != "." {
		bundleDir = filepath.Join(bundleDir, filepath.FromSlash(loaded.Root))
	}
	labels := loaded.Annotations.Values

	out := buildResult{Ref: opts.Tag, Builder: "opm", BundleDir: bundleDir, Labels: labels, Findings: findings}
	if runner != nil {
		out.Builder = string(runner.Tool)
		if out.Dockerfile, err = buildWithTool(ctx, runner, bundleDir, labels, ref); err != nil {
			if ctx.Err() != nil {
				return exit.Interrupt()
			}
			return exit.With(exit.Usage, err)
		}
	} else {
		fsys, closeFS, err := bundlesource.DirFS(bundleDir, opts.Load)
		if err != nil {
			return exit.With(exit.Usage, err)
		}
		defer func() { _ = closeFS() }()
		img, err := image.BuildBundleImage(fsys, labels)
		if err != nil && !opts.Load.FollowSymlinks && strings.Contains(err.Error(), "path escapes from parent") {
			// os.Root's refusal of a link out, found while building.
			return exit.With(exit.Failed, fmt.Errorf("not building %s: a symbolic link in %s leads outside it (see the bundle-load finding above); copy the file into the bundle, or pass --follow-symlinks to put its target in the image: %w", opts.Tag, bundleDir, err))
		}
		if err != nil {
			return exit.With(exit.Usage, err)
		}
		c, err := f.ImageClient(opts.Image)
		if err != nil {
			return exit.Usagef("%v", err)
		}
		d, err := c.Write(ctx, img, ref)
		if err != nil {
			if ctx.Err() != nil {
				return exit.Interrupt()
			}
			return exit.With(exit.Usage, err)
		}
		out.Digest = d.String()
	}

	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, out)
	}
	w := f.IO.ErrOut
	switch {
	case runner != nil:
		from := out.Dockerfile
		if from == "" {
			from = "a temporary bundle.Dockerfile (the bundle is outside the working directory)"
		}
		fmt.Fprintf(w, "built %s with %s from %s\n", opts.Tag, runner.Tool, from)
		fmt.Fprintf(w, "push it with: %s push %s\n", runner.Tool, strings.TrimPrefix(opts.Tag, "docker://"))
	case ref.Transport == image.TransportRegistry:
		fmt.Fprintf(w, "pushed %s\n", opts.Tag)
	default:
		fmt.Fprintf(w, "wrote %s\n", opts.Tag)
	}
	if out.Digest != "" {
		fmt.Fprintf(w, "digest: %s\n", out.Digest)
	}
	return nil
}

// prepare finds the bundle directory and generates its metadata when asked
// to or when it has none. It returns the bundle directory.
func (o *Options) prepare(f *factory.Factory) (string, error) {
	st, err := os.Stat(o.Directory)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", exit.Usagef("--directory %s: no such directory", o.Directory)
	case err != nil:
		return "", exit.With(exit.Usage, err)
	case !st.IsDir():
		return "", exit.Usagef("--directory %s: not a directory", o.Directory)
	}
	dir := filepath.Clean(o.Directory)
	bundleDir, manifestsDir := dir, filepath.Join(dir, bundle.ManifestsDir)
	if st, err := os.Stat(manifestsDir); err != nil || !st.IsDir() {
		// Upstream's -d: the manifests directory itself.
		bundleDir, manifestsDir = filepath.Dir(dir), dir
	}
	generate := o.Package != "" || len(o.Channels) > 0 || o.DefaultChannel != "" || o.OutputDir != "" || o.Overwrite
	if !generate {
		if _, err := os.Stat(filepath.Join(bundleDir, filepath.FromSlash(bundle.AnnotationsFile))); errors.Is(err, fs.ErrNotExist) {
			generate = true
		}
	}
	if !generate {
		return bundleDir, nil
	}
	// bundle.Dockerfile is not wanted from an in-process build, and an
	// --image-builder build writes its own: Generate writes it aside.
	work, err := os.MkdirTemp("", "opm-build-")
	if err != nil {
		return "", exit.With(exit.Usage, err)
	}
	defer os.RemoveAll(work)
	res, err := bundle.Generate(bundle.GenerateOptions{
		ManifestsDir:   manifestsDir,
		OutputDir:      o.OutputDir,
		Package:        o.Package,
		Channels:       o.Channels,
		DefaultChannel: o.DefaultChannel,
		Overwrite:      o.Overwrite,
		WorkDir:        work,
	})
	if err != nil {
		return "", exit.With(exit.Failed, fmt.Errorf("generate bundle metadata: %w", err))
	}
	if o.Output != output.JSON {
		t := f.IO.ErrTheme()
		for _, n := range res.Notes {
			fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.NotePrefix(), n)
		}
		if res.CopiedManifests {
			fmt.Fprintf(f.IO.ErrOut, "copied manifests to %s\n", res.BundleDir)
		}
		if !res.AnnotationsUnchanged {
			fmt.Fprintf(f.IO.ErrOut, "wrote %s\n", res.AnnotationsFile)
		}
	}
	return res.BundleDir, nil
}

// buildWithTool writes bundle.Dockerfile and builds it with the tool. When
// the bundle is inside the working directory, the Dockerfile goes there and
// the working directory is the build context, as upstream's; otherwise (a
// build context must hold what it copies) the bundle directory is the
// context and the Dockerfile a temporary file, so that nothing is written
// into a directory opm was only asked to read. It returns the Dockerfile's
// path, "" for a temporary one.
func buildWithTool(ctx context.Context, r *containertools.Runner, bundleDir string, labels map[string]string, ref image.Ref) (string, error) {
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
	if err := os.WriteFile(dockerfile, bundle.Dockerfile(labels, rel), 0o644); err != nil { //nolint:gosec // a Dockerfile is not secret
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
