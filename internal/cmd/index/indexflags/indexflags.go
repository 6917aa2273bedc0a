// Package indexflags holds the index image flags of index add, rm, prune,
// prune-stranded and deprecatetruncate (ImageOptions), their checks, and
// their translation into an indexchange.Request.
package indexflags

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indexchange"
	"github.com/opmkit/opm/internal/indeximage"
)

// ImageOptions are the flags index add and index rm share for index
// images, as upstream opm had them.
type ImageOptions struct {
	FromIndex     string
	Tag           string
	BinaryImage   string
	Generate      bool
	OutDockerfile string
	ContainerTool string
	BuildTool     string
	PullTool      string
	EnableAlpha   bool
	// CatalogFormat is sqlite, fbc or both; "" keeps the --from-index
	// image's format (sqlite for a new index).
	CatalogFormat string
	// LayerCompression is --layer-compression: gzip or zstd.
	LayerCompression string
	Image            image.Options
}

// FlagCatalogFormat is the flag choosing what an index image carries.
const FlagCatalogFormat = "catalog-format"

// CatalogFormats are the values of --catalog-format.
var CatalogFormats = []string{string(indeximage.FormatSQLite), string(indeximage.FormatFBC), string(indeximage.FormatBoth)}

// RegisterCatalogFormatCompletion completes --catalog-format's values on cmd.
func RegisterCatalogFormatCompletion(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc(FlagCatalogFormat, cobra.FixedCompletions(CatalogFormats, cobra.ShellCompDirectiveNoFileComp))
}

// Help shared by AddFlags and AddBuildFlags.
const (
	fromIndexUsage        = "index image to start from (only its database layer is fetched)"
	tagUsage              = "where to write the index image: a registry reference, oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:NAME]"
	generateUsage         = "write database/index.db and the Dockerfile in the working directory instead of an image"
	outDockerfileUsage    = "name of the Dockerfile --generate writes (default " + indeximage.DefaultDockerfile + ")"
	binaryImageDefault    = " (default: " + indeximage.ServingImageRepository + ":<this opm's version>, opm's own serving image; a development build has none)"
	layerCompressionUsage = "compression of the layer opm writes (database and catalog): gzip (every runtime reads it) or zstd (several times faster to write and read, and smaller; read by containerd 1.5+, CRI-O and podman, not by older runtimes; needs an OCI base image)"
)

// AddFlags adds the index image flags to f.
func (o *ImageOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.FromIndex, "from-index", "f", "", fromIndexUsage)
	f.StringVarP(&o.Tag, "tag", "t", "", tagUsage)
	f.StringVarP(&o.BinaryImage, "binary-image", "i", "", "base image of a new index (its opm serves the database); also the FROM of --generate's Dockerfile"+binaryImageDefault)
	f.BoolVar(&o.Generate, "generate", false, generateUsage)
	f.StringVarP(&o.OutDockerfile, "out-dockerfile", "d", "", outDockerfileUsage)
	f.StringVarP(&o.ContainerTool, "container-tool", "c", "", "docker or podman for both --pull-tool and --build-tool (default: none, opm works without a container tool)")
	f.StringVarP(&o.BuildTool, "build-tool", "u", "", "build the image with docker or podman from a generated Dockerfile instead of writing it directly")
	f.StringVarP(&o.PullTool, "pull-tool", "p", "", "pull bundle images with docker or podman (their local storage and configuration) instead of directly; none is the default")
	f.BoolVar(&o.EnableAlpha, "enable-alpha", false, "accepted for compatibility with upstream opm; opm has no alpha index features")
	f.StringVar(&o.CatalogFormat, FlagCatalogFormat, "", "what the index image carries: sqlite (the database), fbc (a file-based catalog in /configs with its serve cache, served with opm serve) or both (default: the --from-index image's format, else sqlite)")
	f.StringVar(&o.LayerCompression, "layer-compression", string(indeximage.Gzip), layerCompressionUsage)
	o.Image.AddFlags(f)
}

// AddBuildFlags adds the image flags of upstream's index prune and
// prune-stranded: those of add and rm without --build-tool, --pull-tool and
// --enable-alpha, and -c defaulting to podman (see UpstreamContainerTool).
func (o *ImageOptions) AddBuildFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.FromIndex, "from-index", "f", "", fromIndexUsage)
	f.StringVarP(&o.Tag, "tag", "t", "", tagUsage)
	f.StringVarP(&o.BinaryImage, "binary-image", "i", "", "base image of the index when it is not --from-index's; also the FROM of --generate's Dockerfile"+binaryImageDefault)
	f.BoolVar(&o.Generate, "generate", false, generateUsage)
	f.StringVarP(&o.OutDockerfile, "out-dockerfile", "d", "", outDockerfileUsage)
	// Upstream's default was podman; opm needs no tool unless -c is given
	// (UpstreamContainerTool), so the help shows no default.
	f.StringVarP(&o.ContainerTool, "container-tool", "c", "", "build the image with docker or podman (default: opm writes the image itself, with no container tool)")
	f.StringVar(&o.LayerCompression, "layer-compression", string(indeximage.Gzip), layerCompressionUsage)
	o.Image.AddFlags(f)
}

// UpstreamContainerTool applies upstream's -c default (podman) only when
// -c was given: without it opm works in-process. none is refused, as
// upstream refused it on prune.
func (o *ImageOptions) UpstreamContainerTool(given bool) error {
	if !given {
		o.ContainerTool = ""
		return nil
	}
	if o.ContainerTool == "none" {
		return exit.Usagef("--container-tool none: this command builds an image; use docker or podman, or drop -c to build without a container tool")
	}
	return nil
}

// Tools resolves -c, -u and -p: "" means opm's own code.
func (o *ImageOptions) Tools() (build, pull containertools.Tool, err error) {
	parse := func(flag, v string) (containertools.Tool, error) {
		switch v {
		case "", "none":
			return "", nil
		case "docker", "podman":
			return containertools.Tool(v), nil
		}
		return "", exit.Usagef("--%s %q: use docker or podman (or none)", flag, v)
	}
	c, err := parse("container-tool", o.ContainerTool)
	if err != nil {
		return "", "", err
	}
	if build, err = parse("build-tool", o.BuildTool); err != nil {
		return "", "", err
	}
	if pull, err = parse("pull-tool", o.PullTool); err != nil {
		return "", "", err
	}
	if build == "" && o.BuildTool == "" {
		build = c
	}
	if pull == "" && o.PullTool == "" {
		pull = c
	}
	return build, pull, nil
}

// ImageMode says whether the options ask for an index image (or its
// generated files) rather than a database file.
func (o *ImageOptions) ImageMode() bool {
	return o.FromIndex != "" || o.Tag != "" || o.Generate || o.BuildTool != "" || o.ContainerTool != "" || o.CatalogFormat != ""
}

// Check validates the image options before anything is read. version is
// the running opm's: without -i, a new index is based on opm's serving
// image of that version, which a development build does not have.
func (o *ImageOptions) Check(database, version string) (build, pull containertools.Tool, err error) {
	build, pull, err = o.Tools()
	if err != nil {
		return "", "", err
	}
	if err := o.checkCatalogFormat(string(build)); err != nil {
		return "", "", err
	}
	if err := o.Image.Validate(); err != nil {
		return "", "", exit.Usagef("%v", err)
	}
	if _, err := indeximage.ParseCompression(o.LayerCompression); err != nil {
		return "", "", exit.Usagef("--layer-compression: %v", err)
	}
	if database != "" {
		if o.ImageMode() {
			return "", "", exit.Usagef("--database works on a database file; drop --from-index, --tag, --generate, --catalog-format and the tool flags, or drop --database")
		}
		return build, pull, nil
	}
	switch {
	case o.Generate:
		if o.Tag != "" && build == "" {
			return "", "", exit.Usagef("--generate writes files and builds no image; drop --tag, or add --build-tool to build one")
		}
	case o.Tag == "":
		return "", "", exit.Usagef("--tag is required: where to write the index image (or use --generate, or --database FILE)")
	}
	if o.Tag != "" && build == "" {
		if _, err := image.ParseReference(o.Tag); err != nil {
			return "", "", exit.Usagef("--tag: %v", err)
		}
	}
	if o.BinaryImage == "" && (o.FromIndex == "" || o.Generate || build != "") {
		if o.BinaryImage, err = indeximage.DefaultBinaryImage(version); err != nil {
			return "", "", exit.Usagef("no -i/--binary-image given, and %w", err)
		}
	}
	for flag, v := range map[string]string{"from-index": o.FromIndex, "binary-image": o.BinaryImage} {
		if v == "" {
			continue
		}
		if _, err := image.ParseReference(v); err != nil {
			return "", "", exit.Usagef("--%s: %v", flag, err)
		}
	}
	return build, pull, nil
}

// checkCatalogFormat validates --catalog-format before anything is read.
func (o *ImageOptions) checkCatalogFormat(build string) error {
	if o.CatalogFormat == "" {
		return nil
	}
	f, err := indeximage.ParseFormat(o.CatalogFormat)
	if err != nil {
		return exit.Usagef("--%s: %v", FlagCatalogFormat, err)
	}
	if f.HasConfigs() && (o.Generate || build != "") {
		return exit.Usagef("--%s %s: opm writes file-based catalogs into images directly; drop --generate and --build-tool, or use --%s sqlite", FlagCatalogFormat, f, FlagCatalogFormat)
	}
	return nil
}

// Request is the library request of checked options (see Check); the
// caller adds the client and the hooks.
func (o *ImageOptions) Request() (indexchange.Request, error) {
	build, _, err := o.Tools()
	if err != nil {
		return indexchange.Request{}, err
	}
	comp, err := indeximage.ParseCompression(o.LayerCompression)
	if err != nil {
		return indexchange.Request{}, exit.Usagef("--layer-compression: %v", err)
	}
	return indexchange.Request{
		FromIndex:     o.FromIndex,
		Tag:           o.Tag,
		BinaryImage:   o.BinaryImage,
		Generate:      o.Generate,
		Dockerfile:    o.OutDockerfile,
		BuildTool:     build,
		Insecure:      o.Image.UseHTTP || o.Image.SkipTLSVerify,
		CatalogFormat: indeximage.Format(o.CatalogFormat),
		Compression:   comp,
	}, nil
}
