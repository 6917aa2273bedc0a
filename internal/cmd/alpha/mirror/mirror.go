// Package mirror is `opm alpha mirror`: a catalog image and every image it
// needs, copied to a registry or a directory (internal/mirror).
package mirror

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/alpha/mirror/prune"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/mirror"
)

// Options are the flags and argument of opm alpha mirror.
type Options struct {
	Catalog string
	// Config is an ImageSetConfiguration: its catalogs, filtered and
	// rebuilt, additionalImages and blockedImages.
	Config       string
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
	// MaxNestedPaths limits the path components of a repository at --to
	// (0: no limit).
	MaxNestedPaths int
	Output         string
	Image          image.Options
}

// NewCmd is `opm alpha mirror`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "mirror ((CATALOG-IMAGE | --config ISC) (--to REGISTRY[/PREFIX] | --to-dir DIR) | --from-dir DIR --to REGISTRY[/PREFIX])",
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
the exit status is 1 unless everything arrived. Each run keeps its report
at PREFIX/opm-mirror-reports or beside DIR/opm-mirror.json (for prune).

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
reads a registry.

--config ISC reads an oc-mirror ImageSetConfiguration instead of
CATALOG-IMAGE: each catalog of mirror.operators is filtered as opm alpha
filter does, rebuilt as opm index filter does (serve cache included) and
mirrored, under its source's name, with the images of what it keeps;
mirror.additionalImages (by tag or digest) are copied too, and
mirror.blockedImages (an image, a repository, or an RE2 pattern) are
never copied, and are listed in the report. --from-dir copies such a
directory on without --config.

--max-nested-paths N serves registries that limit the depth of a
repository (Quay organisations, GitLab groups refuse a third component
with 401): a repository path at --to (the prefix counted, the registry
host not) of more than N components keeps its first N-1 and joins the
others with '-', as oc-mirror does (--to m.example/olm with N=2:
quay.io/org/op becomes m.example/olm/org-op); every object written names
the flattened repositories. A prefix of N components or more is refused
before anything is copied.

Filter the catalog first (opm index filter) to mirror part of it.
docs/mirroring.md walks through it.`,
		Example: `  opm alpha mirror quay.io/me/index:v1 --to mirror.example:5000/olm
  opm alpha mirror quay.io/me/index:v1 --to-dir /media/usb/mirror
  opm alpha mirror --config imageset-config.yaml --to mirror.example:5000/olm --max-nested-paths 2
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
	fl.StringVar(&opts.Config, "config", "", "an ImageSetConfiguration (oc-mirror's): mirror each catalog of mirror.operators filtered and rebuilt, mirror.additionalImages, never mirror.blockedImages")
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
	fl.IntVar(&opts.MaxNestedPaths, "max-nested-paths", 0, "the most path components a repository at --to may have, its prefix counted (0: no limit); deeper repositories keep the first N-1 and join the rest with '-'")
	fl.StringVarP(&opts.Output, "output", "o", output.Text, "output format: text or json (the report, on stdout)")
	opts.Image.AddFlags(fl)
	opts.Image.AddSideFlags(fl)
	cmd.AddCommand(prune.NewCmd(f, nil))
	return cmd
}

// Run mirrors.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if err := (mirror.Request{Catalog: opts.Catalog, Config: opts.Config, FromDir: opts.FromDir, To: opts.To, ToDir: opts.ToDir,
		Concurrency: opts.Concurrency, MaxNestedPaths: opts.MaxNestedPaths}).Check(); err != nil {
		return exit.Usagef("%v", err)
	}
	if err := opts.Image.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	opts.Image.RateLimits = &image.RateLimits{}
	cl, err := f.ImageClient(opts.Image)
	if err != nil {
		return exit.With(exit.Usage, err)
	}
	if opts.ToDir != "" {
		// Before a catalog is read: a directory that cannot be written
		// safely is refused at once (--from-dir copies to --to only).
		if err := image.CheckLayoutDir(opts.ToDir); err != nil {
			return exit.With(exit.Usage, fmt.Errorf("--to-dir %s: %w", opts.ToDir, err))
		}
	}
	var items []mirror.Item
	var missing []mirror.Result
	var blocked []mirror.Blocked
	switch {
	case opts.FromDir != "":
		if items, missing, err = mirror.FromDir(opts.FromDir); err != nil {
			return exit.With(exit.Usage, err)
		}
		blocked = mirror.BlockedIn(opts.FromDir)
	case opts.Config != "":
		work, err := os.MkdirTemp("", "opm-mirror-")
		if err != nil {
			return exit.With(exit.Failed, err)
		}
		defer func() { _ = os.RemoveAll(work) }()
		if items, blocked, err = planConfig(ctx, f, opts, cl, work); err != nil {
			return err
		}
	default:
		images, refused, err := listImages(ctx, f, opts, opts.Catalog)
		if err != nil {
			return indexio.Interrupted(ctx, exit.With(exit.Usage, fmt.Errorf("read catalog %s: %w", opts.Catalog, err)))
		}
		if len(refused) > 0 {
			return exit.With(exit.Failed, catalogimages.RefusedError(opts.Catalog, refused))
		}
		items = mirror.Plan(opts.Catalog, images)
		if ref, err := image.ParseReference(opts.Catalog); err == nil && ref.Transport != image.TransportRegistry {
			items[0].From, items[0].Source = opts.Catalog, "localhost/"+opts.CatalogName
		}
	}
	counters := &mirror.Counters{}
	progress := output.Progress(f.IO, opts.Output, "", 0)
	start := time.Now()
	stop := progress.Tick(time.Second, func() string { return counters.Line(len(items), time.Since(start)) + opts.Image.RateLimits.Note() })
	rep, err := mirror.Run(ctx, cl, items, mirror.Options{To: opts.To, ToDir: opts.ToDir, Concurrency: opts.Concurrency,
		FailFast: opts.FailFast, Signatures: opts.Signatures, Counters: counters, Missing: missing, Offline: opts.FromDir != "",
		MaxNestedPaths: opts.MaxNestedPaths, Blocked: blocked})
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
	if rep.Stopped == "" && (err == nil || rep.Failed > 0) {
		// Kept for prune; failing to keep it is told, not failed on.
		if _, rerr := mirror.Record(ctx, cl, rep, start); rerr != nil {
			fmt.Fprintf(f.IO.ErrOut, "warning: %v (opm alpha mirror prune then knows this run only from the catalogs it keeps)\n", rerr)
		}
	}
	if opts.Output == output.JSON {
		if werr := output.WriteJSON(f.IO.Out, rep); werr != nil && err == nil {
			err = werr
		}
	} else {
		mirror.WriteText(f.IO.ErrOut, f.IO.ErrTheme(), rep, mirror.TextOptions{Files: files, FromDir: opts.FromDir, Note: opts.Image.RateLimits.Note()})
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
