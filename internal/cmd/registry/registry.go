// Package registry is `opm registry`, upstream opm's commands on a sqlite
// database file: add, rm, prune and prune-stranded are thin aliases onto
// the index commands' Options and Run with the database set; serve serves
// a database over gRPC and health probes it.
package registry

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
	"github.com/opmkit/opm/internal/cmd/registry/add"
	"github.com/opmkit/opm/internal/cmd/registry/deprecatetruncate"
	"github.com/opmkit/opm/internal/cmd/registry/health"
	"github.com/opmkit/opm/internal/cmd/registry/prune"
	"github.com/opmkit/opm/internal/cmd/registry/prunestranded"
	"github.com/opmkit/opm/internal/cmd/registry/rm"
	"github.com/opmkit/opm/internal/cmd/registry/serve"
)

// NewCmd is `opm registry` with its subcommands; extra are added too.
func NewCmd(f *factory.Factory, extra ...*cobra.Command) *cobra.Command {
	subs := []*cobra.Command{
		add.NewCmd(f, nil),
		rm.NewCmd(f, nil),
		prune.NewCmd(f, nil),
		prunestranded.NewCmd(f, nil),
		serve.NewCmd(f, nil),
		health.NewCmd(f, nil),
		deprecatetruncate.NewCmd(f, nil),
	}
	return group.New("registry", "Change and serve sqlite index database files (upstream opm's registry commands)", append(subs, extra...)...)
}
