package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// WriteYAML writes the -o json report as YAML.
func WriteYAML(w io.Writer, res *Result) error {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, res); err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(buf.Bytes())
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}

// upstreamResult is upstream opm's validate -o json|yaml document.
type upstreamResult struct {
	Passed bool           `json:"passed"`
	Error  *upstreamError `json:"error,omitempty"`
}

type upstreamError struct {
	Message string `json:"message"`
}

// WriteUpstream writes res as upstream opm's validate -o json|yaml does: JSON indented by two spaces, or
// YAML, each followed by a newline. The message lists the findings that
// failed the run, one a line: file:line: rule: field: message.
func WriteUpstream(w io.Writer, res *Result, failOn Severity, asYAML bool) error {
	doc := upstreamResult{Passed: res.Passed}
	if !res.Passed {
		var lines []string
		for _, b := range res.Bundles {
			for _, fd := range b.Findings {
				if !Fails(fd.Severity, failOn) {
					continue
				}
				loc := fd.File
				if fd.Line > 0 {
					loc = fmt.Sprintf("%s:%d", loc, fd.Line)
				}
				field := ""
				if fd.Field != "" {
					field = fd.Field + ": "
				}
				lines = append(lines, fmt.Sprintf("%s: %s: %s%s", loc, fd.Rule, field, fd.Message))
			}
		}
		doc.Error = &upstreamError{Message: strings.Join(lines, "\n")}
	}
	var data []byte
	var err error
	if asYAML {
		data, err = yaml.Marshal(doc)
	} else {
		data, err = json.MarshalIndent(doc, "", "  ")
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(data))
	return err
}
