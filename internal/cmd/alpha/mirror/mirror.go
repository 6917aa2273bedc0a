// Package mirror is `opm alpha mirror`: a catalog image and every image it
// needs, copied to a registry or a directory (internal/mirror).
package mirror

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/mirror"
)

// Options are the flags and argument of opm alpha mirror.
type Options struct {
	Catalog      string
	To           string
	ToDir        string
	FromDir      string
	ManifestsDir string
	CatalogName  string
	Name         string
	ICSP         bool
	Concurrency  int
	FailFast     bool
	Signatures   bool
	// AllowIncomplete writes the catalog's objects for a mirror that
	// lacks images.
	AllowIncomplete bool
	Output          string
	Image           image.Options
}

// NewCmd is `opm alpha mirror`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "mirror (CATALOG-IMAGE (--to REGISTRY[/PREFIX] | --to-dir DIR) | --from-dir DIR --to REGISTRY[/PREFIX])",
		Short: "Copy a catalog image and every image it needs to a registry or a directory, for disconnected clusters",
		Long: `Copy the catalog image CATALOG-IMAGE and every image its bundles need (each
bundle image and related image: opm alpha list images) to the registry
--to REGISTRY[/PREFIX], each under its own repository path
(quay.io/org/op@sha256:X becomes REGISTRY/PREFIX/org/op@sha256:X, and a
tag stays a tag), or into the OCI layout directory --to-dir DIR, which is
carried into the disconnected network and copied on with --from-dir DIR.

Images are copied whole and by digest: every platform of a manifest list,
and what is attached to them (cosign signatures, attestations, SBOMs, OCI
referrers; --signatures=false leaves them). A blob or manifest already at
the destination is not copied again, so a run that was interrupted resumes
where it stopped and a second run copies nothing. Digests are checked as
the bytes arrive. An image that cannot be copied is reported with the
bundles that need it and the rest go on (--fail-fast stops at the first);
the exit status is 1 unless everything arrived.

Copying to a registry writes into --manifests-dir what a cluster needs:
an ImageDigestMirrorSet and an ImageTagMirrorSet (--icsp adds an
ImageContentSourcePolicy for OpenShift before 4.13), a CatalogSource and a
ClusterCatalog for the mirrored catalog, and mapping.txt. The CatalogSource
and ClusterCatalog (and mapping.txt's catalog line) are written only when
every image the catalog needs arrived; --allow-incomplete writes them
anyway, headed by a comment naming what is missing.

A catalog names images in registries: one naming an image by another
transport (oci:, oci-archive:, dir: ...) is refused, and nothing of it is
read. A mirror directory is checked against the report written in it
(opm-mirror.json) before anything is copied from it, and --from-dir never
reads a registry. Filter the catalog first (opm index filter) to mirror
part of it. docs/mirroring.md walks through it.`,
		Example: `  opm alpha mirror quay.io/me/index:v1 --to mirror.example:5000/olm
  opm alpha mirror quay.io/me/index:v1 --to-dir /media/usb/mirror
  opm alpha mirror --from-dir /media/usb/mirror --to mirror.internal:5000/olm --manifests-dir manifests/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Catalog = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.To, "to", "", "the registry, and a path prefix, to copy to: REGISTRY[/PREFIX]")
	fl.StringVar(&opts.ToDir, "to-dir", "", "copy into this directory (an OCI layout) instead of a registry")
	fl.StringVar(&opts.FromDir, "from-dir", "", "copy what a --to-dir run wrote to --to")
	fl.StringVar(&opts.ManifestsDir, "manifests-dir", "mirror-manifests", "where to write the mirror sets, CatalogSource, ClusterCatalog and mapping.txt")
	fl.StringVar(&opts.CatalogName, "catalog-name", "catalog:latest", "the repository and tag under --to for a catalog image that is not in a registry (oci:, oci-archive:)")
	fl.StringVar(&opts.Name, "name", "", "metadata.name of the objects written (default: from the catalog's repository and tag)")
	fl.BoolVar(&opts.ICSP, "icsp", false, "also write an ImageContentSourcePolicy (OpenShift before 4.13)")
	fl.IntVar(&opts.Concurrency, "concurrency", 4, "how many images to copy at once")
	fl.BoolVar(&opts.FailFast, "fail-fast", false, "stop at the first image that cannot be copied")
	fl.BoolVar(&opts.Signatures, "signatures", true, "copy the signatures, attestations and referrers attached to each image")
	fl.BoolVar(&opts.AllowIncomplete, "allow-incomplete", false, "write the CatalogSource and ClusterCatalog even when images the catalog needs did not arrive (marked as incomplete)")
	fl.StringVarP(&opts.Output, "output", "o", output.Text, "output format: text or json (the report, on stdout)")
	opts.Image.AddFlags(fl)
	opts.Image.AddSideFlags(fl)
	return cmd
}

// Run mirrors.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if err := check(opts); err != nil {
		return err
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	opts.Image.RateLimits = &image.RateLimits{}
	cl, err := f.ImageClient(opts.Image)
	if err != nil {
		return exit.With(exit.Usage, err)
	}
	var items []mirror.Item
	var missing []mirror.Result
	if opts.FromDir != "" {
		if items, missing, err = mirror.FromDir(opts.FromDir); err != nil {
			return exit.With(exit.Usage, err)
		}
	} else {
		if opts.ToDir != "" {
			// Before the catalog is read: a directory that cannot be
			// written safely is refused at once.
			if err := image.CheckLayoutDir(opts.ToDir); err != nil {
				return exit.With(exit.Usage, fmt.Errorf("--to-dir %s: %w", opts.ToDir, err))
			}
		}
		// Read part by part: the images of a large catalog, not the catalog.
		l := catalogimages.NewLister("")
		add := func(c *fbc.Catalog) error { l.Add(c); return nil }
		if _, err := catalogsource.NewOpener(f, opts.Image, fbc.RenderOptions{}).OpenEach(ctx, opts.Catalog, add, catalogsource.DatabaseImage, catalogsource.CatalogImage); err != nil {
			return indexio.Interrupted(ctx, exit.With(exit.Usage, fmt.Errorf("read catalog %s: %w", opts.Catalog, err)))
		}
		if refused := l.Refused(); len(refused) > 0 {
			return exit.With(exit.Failed, catalogimages.RefusedError(opts.Catalog, refused))
		}
		items = mirror.Plan(opts.Catalog, l.Images())
		if ref, err := image.ParseReference(opts.Catalog); err == nil && ref.Transport != image.TransportRegistry {
			items[0].From, items[0].Source = opts.Catalog, "localhost/"+opts.CatalogName
		}
	}
	counters := &mirror.Counters{}
	progress := output.Progress(f.IO, opts.Output, "", 0)
	start := time.Now()
	stop := progress.Tick(time.Second, func() string { return counters.Line(len(items), time.Since(start)) + opts.Image.RateLimits.Note() })
	rep, err := mirror.Run(ctx, cl, items, mirror.Options{To: opts.To, ToDir: opts.ToDir, Concurrency: opts.Concurrency,
		FailFast: opts.FailFast, Signatures: opts.Signatures, Counters: counters, Missing: missing, Offline: opts.FromDir != ""})
	stop()
	progress.Finish()
	if err != nil && rep == nil {
		return exit.With(exit.Usage, err)
	}
	rep.RateLimitWaits, _ = opts.Image.RateLimits.Waits()
	var files []string
	if opts.To != "" {
		var werr error
		files, werr = mirror.WriteManifests(opts.ManifestsDir, rep, mirror.ManifestOptions{Name: opts.Name, ICSP: opts.ICSP, AllowIncomplete: opts.AllowIncomplete})
		if werr != nil && err == nil {
			err = fmt.Errorf("write %s: %w", opts.ManifestsDir, werr)
		}
	}
	if opts.Output == output.JSON {
		if werr := output.WriteJSON(f.IO.Out, rep); werr != nil && err == nil {
			err = werr
		}
	} else {
		writeText(f, opts, rep, files)
	}
	if err != nil {
		if ctx.Err() != nil {
			// Stopped: the last line (printed by opm's root) says what
			// this run wrote, not that it wrote nothing.
			return exit.With(exit.Failed, exit.Partial(err, mirror.Written(rep, opts.ManifestsDir, files)))
		}
		return exit.With(exit.Failed, err)
	}
	if rep.Failed > 0 {
		return exit.With(exit.Failed, nil)
	}
	return nil
}

func check(opts *Options) error {
	switch {
	case opts.FromDir != "" && opts.Catalog != "":
		return exit.Usagef("give a catalog image or --from-dir, not both")
	case opts.FromDir != "" && opts.To == "":
		return exit.Usagef("--from-dir needs --to REGISTRY[/PREFIX]")
	case opts.FromDir == "" && opts.Catalog == "":
		return exit.Usagef("give the catalog image to mirror (or --from-dir DIR)")
	case opts.To != "" && opts.ToDir != "":
		return exit.Usagef("give --to or --to-dir, not both")
	case opts.To == "" && opts.ToDir == "":
		return exit.Usagef("give --to REGISTRY[/PREFIX] or --to-dir DIR")
	case opts.Concurrency < 1:
		return exit.Usagef("--concurrency must be at least 1")
	case strings.Contains(opts.To, "://"):
		return exit.Usagef("--to %q: give REGISTRY[/PREFIX] without a scheme", opts.To)
	}
	return nil
}
