// Package dockerfile is `opm generate dockerfile`: the Dockerfile of a
// file-based catalog image.
package dockerfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
)

// Options are the flags and argument of opm generate dockerfile.
type Options struct {
	CatalogDir   string
	BaseImage    string
	BuilderImage string
	ExtraLabels  []string
	// BinaryImage is upstream's deprecated name of --base-image, which
	// also sets the builder image when -b is not given.
	BinaryImage string
	builderSet  bool
}

// NewCmd is `opm generate dockerfile`; runF, when not nil, runs instead of
// Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "dockerfile DIR",
		Short: "Write the Dockerfile of a file-based catalog image",
		Long: `Write DIR.Dockerfile beside the catalog directory DIR, as upstream opm
generate dockerfile does: build it from DIR's parent directory. A
DIR.Dockerfile that exists is never replaced. A DIR whose name holds a
space or quote is written in ADD's JSON-array form; one holding a control
character (a line break would start a Dockerfile line of its own) or what
the build would expand ($, *, ?, [, \) is refused: rename it.

The image it describes holds the catalog in /configs (the
operators.operatorframework.io.index.configs.v1 label says so) and opm
serve's cache in /tmp/cache, built at image build time by the builder
image's /bin/opm. On the default base, opm's own serving image of this
opm's version (` + indeximage.ServingImageRepository + `:<version>), it serves the catalog:
opm serve /configs --cache-dir=/tmp/cache. With -i scratch it holds only the
catalog and cache, for OLM v1 (or OLM v0 catalog sources that extract
them). A development build of opm has no published serving image: give -i
and -b (for example an image built with make serving-image).

Labels given twice keep the last value.`,
		Example: `  opm generate dockerfile catalog && podman build -f catalog.Dockerfile -t quay.io/me/catalog:1 .
  opm generate dockerfile catalog -i scratch -l org.opencontainers.image.source=https://github.com/me/op`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.CatalogDir = args[0]
			opts.builderSet = cmd.Flags().Changed("builder-image")
			if cmd.Flags().Changed("binary-image") {
				if cmd.Flags().Changed("base-image") {
					return exit.Usagef("--binary-image is the old name of --base-image: give one of them")
				}
				opts.BaseImage = opts.BinaryImage
				if !opts.builderSet {
					opts.BuilderImage = opts.BinaryImage
					opts.builderSet = true
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.BaseImage, "base-image", "i", "", "image to build the catalog image on: one whose /bin/opm serves it, or scratch for an image without opm (default "+indeximage.ServingImageRepository+":<this opm's version>)")
	fl.StringVarP(&opts.BuilderImage, "builder-image", "b", "", "image whose /bin/opm builds the serve cache in the build stage; not scratch (default "+indeximage.ServingImageRepository+":<this opm's version>)")
	fl.StringSliceVarP(&opts.ExtraLabels, "extra-labels", "l", nil, "labels to add to the image, as key=value (repeat the flag or separate with commas)")
	fl.StringVar(&opts.BinaryImage, "binary-image", "", "old name of --base-image; also the builder image when -b is not given")
	_ = fl.MarkHidden("binary-image")
	config.Deprecate(fl, "binary-image", "use --base-image (and --builder-image) instead")
	return cmd
}

// Run writes the Dockerfile.
func Run(_ context.Context, f *factory.Factory, opts *Options) error {
	if opts.BuilderImage == indeximage.Scratch {
		return exit.Usagef("--builder-image scratch: the build stage runs /bin/opm to build the serve cache; give an image with opm, such as %s:<version>", indeximage.ServingImageRepository)
	}
	labels := map[string]string{}
	for _, l := range opts.ExtraLabels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return exit.Usagef("--extra-labels %q: give key=value", l)
		}
		labels[k] = v
	}
	version := f.Version().Version
	def, defErr := indeximage.DefaultBinaryImage(version)
	noDefault := func(flag string) error {
		return exit.Usagef("no %s given, and this opm (version %q) is a development build with no published serving image: give -i/--base-image and -b/--builder-image, for example an image built with `make serving-image IMAGE=REF` or %s:vX.Y.Z of a release", flag, version, indeximage.ServingImageRepository)
	}
	if opts.BuilderImage == "" {
		switch {
		case defErr == nil:
			opts.BuilderImage = def
		case opts.BaseImage != "" && opts.BaseImage != indeximage.Scratch:
			// Without a published serving image, the base's opm builds
			// the cache.
			opts.BuilderImage = opts.BaseImage
		default:
			return noDefault("-b/--builder-image")
		}
	}
	if opts.BaseImage == "" {
		if defErr != nil {
			return noDefault("-i/--base-image")
		}
		opts.BaseImage = def
	}
	for flag, v := range map[string]string{"base-image": opts.BaseImage, "builder-image": opts.BuilderImage} {
		if v == indeximage.Scratch {
			continue
		}
		if _, err := image.ParseReference(v); err != nil {
			return exit.Usagef("--%s: %v", flag, err)
		}
	}

	dir, err := catalogDir(opts.CatalogDir)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	parent, name := filepath.Split(dir)
	out := filepath.Join(parent, name+".Dockerfile")
	content, err := indeximage.CatalogDockerfile{BaseImage: opts.BaseImage, BuilderImage: opts.BuilderImage, CatalogDir: name, Labels: labels}.Bytes()
	if err != nil {
		return exit.Usagef("%v", err)
	}
	if err := writeNew(out, content); err != nil {
		return exit.With(exit.Failed, err)
	}
	shown := out
	if rel, err := filepath.Rel(".", out); err == nil && !filepath.IsAbs(opts.CatalogDir) {
		shown = rel
	}
	ctxDir := filepath.Dir(shown)
	fmt.Fprintf(f.IO.ErrOut, "wrote %s (build with: podman build -f %s -t IMAGE %s)\n", shown, shown, ctxDir)
	return nil
}

// catalogDir checks that arg is a directory and gives the path to use:
// as given, but absolute when its last element is . or .. (so that the
// Dockerfile is named after the directory).
func catalogDir(arg string) (string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return "", fmt.Errorf("catalog directory: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory: give the catalog's root directory", arg)
	}
	dir := filepath.Clean(arg)
	if b := filepath.Base(dir); b == "." || b == ".." || b == string(filepath.Separator) {
		if dir, err = filepath.Abs(dir); err != nil {
			return "", err
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("%s is the root directory: put the catalog in a directory of its own", arg)
		}
	}
	return dir, nil
}

// writeNew creates name holding content, refusing to replace a file that
// exists; a failed write leaves no file behind.
func writeNew(name string, content []byte) error {
	fh, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists; remove it to generate it again (opm never replaces it)", name)
	}
	if err != nil {
		return err
	}
	if _, err := fh.Write(content); err != nil {
		fh.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := fh.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
