package index

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/opmkit/opm/internal/printable"
)

// The `alpha list` rows of upstream opm v1.73.0 and their tables; the rows
// come from the catalog model (internal/fbc/graph), whatever the source.

// PackageRow is one line of `alpha list packages`.
type PackageRow struct {
	Name string `json:"name"`
	// DisplayName is spec.displayName of the CSV at the head of the default
	// channel; empty when that CSV is not in the database.
	DisplayName    string `json:"displayName"`
	DefaultChannel string `json:"defaultChannel"`
}

// ChannelRow is one line of `alpha list channels`.
type ChannelRow struct {
	Package string `json:"package"`
	Channel string `json:"channel"`
	Head    string `json:"head"`
}

// BundleRow is one line of `alpha list bundles`: a bundle in one channel
// (a bundle in two channels gives two rows, as upstream).
type BundleRow struct {
	Package   string   `json:"package"`
	Channel   string   `json:"channel"`
	Bundle    string   `json:"bundle"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
	Image     string   `json:"image"`
	// Version is spec.version, for ordering (render-graph); not a column.
	Version string `json:"-"`
}

// The column layouts upstream printed: text/tabwriter with minimum width 0,
// tab width 4, padding 2, spaces, no flags; headers in capitals.

// pn is a cell of a table people read: names come from catalogs, so
// control characters (a tab would shift the columns) are shown escaped.
func pn(s string) string { return printable.Name(s) }

func newColumns(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// WritePackages prints rows as `opm alpha list packages` does.
func WritePackages(w io.Writer, rows []PackageRow) error {
	tw := newColumns(w)
	fmt.Fprintln(tw, "NAME\tDISPLAY NAME\tDEFAULT CHANNEL")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", pn(r.Name), pn(r.DisplayName), pn(r.DefaultChannel))
	}
	return tw.Flush()
}

// WriteChannels prints rows as `opm alpha list channels` does.
func WriteChannels(w io.Writer, rows []ChannelRow) error {
	tw := newColumns(w)
	fmt.Fprintln(tw, "PACKAGE\tCHANNEL\tHEAD")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", pn(r.Package), pn(r.Channel), pn(r.Head))
	}
	return tw.Flush()
}

// WriteBundles prints rows as `opm alpha list bundles` does.
func WriteBundles(w io.Writer, rows []BundleRow) error {
	tw := newColumns(w)
	fmt.Fprintln(tw, "PACKAGE\tCHANNEL\tBUNDLE\tREPLACES\tSKIPS\tSKIP RANGE\tIMAGE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", pn(r.Package), pn(r.Channel), pn(r.Bundle), pn(r.Replaces), pn(strings.Join(r.Skips, ",")), pn(r.SkipRange), pn(r.Image))
	}
	return tw.Flush()
}
