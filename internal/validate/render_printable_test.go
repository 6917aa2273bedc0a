package validate

import (
	"strings"
	"testing"
)

// TestTextReportShowsControlCharacters: a name with an ANSI escape sequence
// reached the terminal raw (it could recolour or clear it); the text report
// shows it as \x1b.
func TestTextReportShowsControlCharacters(t *testing.T) {
	evil := "p\x1b[2J\x1b[31mred"
	r := NewResult([]BundleReport{{Path: "cat/" + evil, Name: evil, Findings: []Finding{{
		Rule: "catalog-x", Severity: Error, File: "cat/" + evil + ".json", Line: 3, Message: "package " + evil + " is bad\nsecond line", Hint: "rename " + evil,
	}}}}, Error)
	var b strings.Builder
	if err := WriteText(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("raw escape in the report:\n%q", out)
	}
	if !strings.Contains(out, `p\x1b[2J\x1b[31mred`) || !strings.Contains(out, "second line") {
		t.Errorf("report does not show the name escaped, or lost a line:\n%s", out)
	}
}
