package catalogfilter

import (
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/internal/printable"
)

// WriteExplain writes, a line each, every bundle the filter removed and
// every one it kept outside a range, with the reason (--explain).
func (r *Report) WriteExplain(w io.Writer) error {
	var b strings.Builder
	for _, x := range r.Removed {
		fmt.Fprintf(&b, "removed %s/%s: %s\n", printable.Name(x.Package), printable.Name(x.Bundle), printable.Text(x.Why))
	}
	for _, x := range r.Extra {
		fmt.Fprintf(&b, "kept %s/%s in channel %s: %s\n", printable.Name(x.Package), printable.Name(x.Bundle), printable.Name(x.Channel), printable.Text(x.Why))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Counts says how many bundles were removed and kept outside a range:
// "removed 1 bundle, kept 0 outside a range".
func (r *Report) Counts() string {
	return fmt.Sprintf("removed %s, kept %d outside a range", printable.Count(len(r.Removed), "bundle", "bundles"), len(r.Extra))
}
