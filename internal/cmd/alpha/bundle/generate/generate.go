// Package generate is `opm alpha bundle generate`: `opm bundle generate`
// with upstream's flags and rules.
package generate

import (
	"strings"

	"github.com/spf13/cobra"

	bundlegen "github.com/opmkit/opm/internal/cmd/bundle/generate"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
)

// NewCmd is `opm alpha bundle generate`; runF, when not nil, runs instead
// of Run.
func NewCmd(f *factory.Factory, runF func(*bundlegen.Options) error) *cobra.Command {
	opts := &bundlegen.Options{Upstream: true, Output: output.Text}
	var channels string
	cmd := &cobra.Command{
		Use:   "generate -d MANIFESTS_DIR -p PACKAGE [-c CHANNELS] [-e DEFAULT] [-u OUTPUT_DIR] [--base-image IMAGE]",
		Short: "Write annotations.yaml and bundle.Dockerfile as upstream opm did",
		Long: `Upstream opm's 'alpha bundle generate': 'opm bundle generate' with upstream's
flags and rules. bundle.Dockerfile is written in the working directory byte
for byte as upstream wrote it, FROM --base-image; several channels and no
--default write no default-channel annotation, as upstream. --package is
required (upstream guessed it from the directory layout).`,
		Example: `  opm alpha bundle generate -d ./manifests -p etcd -c stable,fast -e stable`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Channels = SplitList(channels)
			if runF != nil {
				return runF(opts)
			}
			return bundlegen.Run(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Directory, "directory", "d", "", "the directory holding the bundle's manifests (required)")
	_ = cmd.MarkFlagRequired("directory")
	fl.StringVarP(&opts.Package, "package", "p", "", "the package name")
	fl.StringVarP(&channels, "channels", "c", "", "comma-separated channels the bundle is in")
	fl.StringVarP(&opts.DefaultChannel, "default", "e", "", "the package's default channel")
	fl.StringVarP(&opts.OutputDir, "output-dir", "u", "", "bundle directory to copy the manifests into, with metadata/ beside them")
	fl.StringVar(&opts.BaseImage, "base-image", "scratch", "the image bundle.Dockerfile starts FROM")
	return cmd
}

// SplitList splits a comma-separated flag value (upstream's -c is one
// string), dropping spaces and empty entries.
func SplitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
