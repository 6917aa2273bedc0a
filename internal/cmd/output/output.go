// Package output holds the -o flag that commands share and its JSON
// writer.
package output

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
)

// Formats of -o.
const (
	Text = "text"
	JSON = "json"
)

// AddFlag adds -o/--output to cmd, into p.
func AddFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "output", "o", Text, "output format: text or json (json goes to stdout)")
}

// Check validates an -o value; from says where it came from (see
// config.Config.From).
func Check(v, from string) error {
	switch v {
	case Text, JSON:
		return nil
	}
	return exit.Usagef("invalid --output %q%s: use text or json", v, from)
}

// WriteJSON writes v indented, without HTML escaping.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
