package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
)

// Output formats of -o.
const (
	outputText = "text"
	outputJSON = "json"
)

func addOutputFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "output", "o", outputText, "output format: text or json (json goes to stdout)")
}

// checkOutput validates an -o value.
func (a *app) checkOutput(v string) error {
	switch v {
	case outputText, outputJSON:
		return nil
	}
	return usageErrorf("invalid --output %q%s: use text or json", v, a.from("output"))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
