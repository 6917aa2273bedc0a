// Package completion registers the shell completion of flag values that
// take one of a known set (--mode, --platform, --image-builder, ...). The
// root command calls Register on the whole tree, so a flag gets its
// completion wherever it is defined, including flags added later.
package completion

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/index"
)

// CatalogFormats are the values of --catalog-format.
var CatalogFormats = []string{"sqlite", "fbc", "both"}

// Platforms are the platforms offered for --platform: those operator
// images are commonly built for. Any os/arch[/variant] is accepted.
var Platforms = []string{"linux/amd64", "linux/arm64", "linux/ppc64le", "linux/s390x", "linux/arm/v7"}

// byFlag are the fixed value sets, by flag name.
var byFlag = map[string][]string{
	"mode":           {string(index.ModeReplaces), string(index.ModeSemver), string(index.ModeSemverSkipPatch)},
	"image-builder":  {"docker", "podman", "buildah"},
	"container-tool": {"docker", "podman", "none"},
	"build-tool":     {"docker", "podman", "none"},
	"pull-tool":      {"docker", "podman", "none"},
	"catalog-format": CatalogFormats,
	"platform":       Platforms,
	"fail-on":        {"error", "warning", "info"},
	"output":         {"text", "json"},
}

// Register adds the completion of every known flag to cmd and all its
// subcommands. A flag whose completion the command registered itself
// keeps it.
func Register(cmd *cobra.Command) {
	for name, values := range byFlag {
		Fixed(cmd, name, values...)
	}
	for _, c := range cmd.Commands() {
		Register(c)
	}
}

// Fixed completes flag of cmd (when cmd has it) with values, and no file
// names.
func Fixed(cmd *cobra.Command, flag string, values ...string) {
	if cmd.Flags().Lookup(flag) == nil {
		return
	}
	if _, ok := cmd.GetFlagCompletionFunc(flag); ok {
		return
	}
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// CatalogFormat completes --catalog-format of cmd with sqlite, fbc and
// both; Register does the same for every command.
func CatalogFormat(cmd *cobra.Command) { Fixed(cmd, "catalog-format", CatalogFormats...) }
