// Package build is `opm alpha bundle build`: `opm bundle build` with
// upstream's flags.
package build

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/alpha/bundle/generate"
	bundlebuild "github.com/opmkit/opm/internal/cmd/bundle/build"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
)

// NewCmd is `opm alpha bundle build`; runF, when not nil, runs instead of
// Run.
func NewCmd(f *factory.Factory, runF func(*bundlebuild.Options) error) *cobra.Command {
	opts := &bundlebuild.Options{Upstream: true, Permissive: true}
	opts.Output, opts.FailOn = output.Text, "error"
	var channels string
	cmd := &cobra.Command{
		Use:   "build -d MANIFESTS_DIR -t IMAGE [-p PACKAGE] [-c CHANNELS] [-e DEFAULT] [-b TOOL] [-o] [--base-image IMAGE]",
		Short: "Generate the metadata when needed and build the bundle image, as upstream opm did",
		Long: `Upstream opm's 'alpha bundle build': 'opm bundle build' with upstream's flags.
-o is --overwrite here, not the output format. Without -b the image is built
in-process and written where -t points (pushed to a registry, or oci:,
oci-archive:, docker-archive:), on top of --base-image when it is not
scratch; with -b docker|podman|buildah that tool builds it into its local
storage, as upstream. Validation findings are shown but do not stop the
build (upstream validated nothing here); 'opm bundle build' stops on them.`,
		Example: `  opm alpha bundle build -d ./manifests -p etcd -c stable -e stable -t quay.io/me/etcd-bundle:v1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Channels = generate.SplitList(channels)
			if !cmd.Flags().Changed("image-builder") {
				// Upstream's default was docker; opm builds in-process
				// unless a tool is asked for.
				opts.ImageBuilder = ""
			}
			if opts.BaseImage == "scratch" {
				opts.BaseImage = ""
			}
			if runF != nil {
				return runF(opts)
			}
			return bundlebuild.Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Directory, "directory", "d", "", "the directory holding the bundle's manifests (required)")
	_ = cmd.MarkFlagRequired("directory")
	fl.StringVarP(&opts.Tag, "tag", "t", "", "the bundle image to produce (required)")
	_ = cmd.MarkFlagRequired("tag")
	fl.StringVarP(&opts.Package, "package", "p", "", "the package name")
	fl.StringVarP(&channels, "channels", "c", "", "comma-separated channels the bundle is in")
	fl.StringVarP(&opts.DefaultChannel, "default", "e", "", "the package's default channel")
	fl.StringVarP(&opts.ImageBuilder, "image-builder", "b", "docker", "docker, podman or buildah to build with; not given, opm builds in-process")
	fl.BoolVarP(&opts.Overwrite, "overwrite", "o", false, "replace an annotations.yaml that differs")
	fl.StringVarP(&opts.OutputDir, "output-dir", "u", "", "bundle directory to copy the manifests into, with metadata/ beside them")
	fl.StringVar(&opts.BaseImage, "base-image", "scratch", "the image the bundle image is built on")
	opts.Image.AddFlags(fl)
	return cmd
}
