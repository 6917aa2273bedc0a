// Package validate is `opm alpha bundle validate`: `opm bundle validate`
// of one image, with upstream's flags.
package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	bundlevalidate "github.com/opmkit/opm/internal/cmd/bundle/validate"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
)

// OptionalValidators are upstream's optional suites. opm has no suites:
// every rule runs, and what those suites checked is among them, so a
// known name selects nothing more; an unknown one is a usage error.
var OptionalValidators = map[string]string{
	"operatorhub":    "opm's csv-* and annotations-* rules",
	"bundle-objects": "opm's manifest-* and bundle-* rules",
}

// NewCmd is `opm alpha bundle validate`; runF, when not nil, runs instead
// of Run.
func NewCmd(f *factory.Factory, runF func(*bundlevalidate.Options) error) *cobra.Command {
	opts := &bundlevalidate.Options{}
	opts.Output, opts.FailOn = output.Text, "error"
	var tag, builder, optional string
	cmd := &cobra.Command{
		Use:   "validate -t IMAGE [-b TOOL] [-o VALIDATORS]",
		Short: "Validate a bundle image, as upstream opm did (opm bundle validate IMAGE)",
		// Deprecated upstream too; not cobra's Deprecated, whose message
		// would go to stdout.
		Hidden: true,
		Long: `Upstream opm's 'alpha bundle validate': 'opm bundle validate' of the image
named by -t, with every rule. -b is accepted and ignored (opm reads images
itself); -o names upstream's optional suites (operatorhub, bundle-objects),
whose checks are among opm's rules, which all run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch builder {
			case "none", "docker", "podman":
			default:
				return exit.Usagef("--image-builder %q: use none, docker or podman", builder)
			}
			for _, v := range strings.Split(optional, ",") {
				if v = strings.TrimSpace(v); v == "" {
					continue
				}
				if name, _, _ := strings.Cut(v, "="); OptionalValidators[name] == "" {
					return exit.Usagef("--optional-validators: unknown validator %q; known: %s", v, knownValidators())
				}
			}
			opts.Paths = []string{tag}
			fmt.Fprintf(f.IO.ErrOut, "%s opm alpha bundle validate is deprecated: use opm bundle validate %s\n", f.IO.ErrTheme().NotePrefix(), tag)
			if runF != nil {
				return runF(opts)
			}
			return bundlevalidate.Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&tag, "tag", "t", "", "the bundle image to validate (required)")
	_ = cmd.MarkFlagRequired("tag")
	fl.StringVarP(&builder, "image-builder", "b", "docker", "accepted and ignored: opm pulls images itself (none, docker or podman)")
	fl.StringVarP(&optional, "optional-validators", "o", "", "upstream's optional suites, comma-separated: "+knownValidators()+" (every opm rule runs anyway)")
	opts.Image.AddFlags(fl)
	return cmd
}

func knownValidators() string {
	var names []string
	for n := range OptionalValidators {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
