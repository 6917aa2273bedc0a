package iostreams

import (
	"io"
	"os"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/opmkit/opm/internal/validate"
)

// Theme is the styling of human output on one stream.
type Theme struct {
	enabled bool
	r       *lipgloss.Renderer

	errorS, warnS, infoS, ruleS, locS, hintS, headS, okS, failS, dimS lipgloss.Style
}

// NewTheme styles output to w; enabled says whether colour is wanted there
// (see IOStreams.ColorEnabled).
func NewTheme(w io.Writer, enabled bool) *Theme {
	t := &Theme{enabled: enabled}
	t.r = lipgloss.NewRenderer(w)
	switch {
	case !t.enabled:
		t.r.SetColorProfile(termenv.Ascii)
	case !isFile(w):
		// A stream that claims to be a terminal but is not a file (tests):
		// detection would find no colour support, so pick a common one.
		t.r.SetColorProfile(termenv.ANSI256)
	}
	r := t.r
	t.errorS = r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true)
	t.warnS = r.NewStyle().Foreground(lipgloss.Color("11")).Bold(true)
	t.infoS = r.NewStyle().Foreground(lipgloss.Color("12"))
	t.ruleS = r.NewStyle().Bold(true)
	t.locS = r.NewStyle().Foreground(lipgloss.Color("14"))
	t.hintS = r.NewStyle().Faint(true)
	t.headS = r.NewStyle().Bold(true)
	t.okS = r.NewStyle().Foreground(lipgloss.Color("10"))
	t.failS = r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true)
	t.dimS = r.NewStyle().Faint(true)
	return t
}

func isFile(w any) bool {
	_, ok := w.(*os.File)
	return ok
}

func (t *Theme) fn(s lipgloss.Style) func(string) string {
	if !t.enabled {
		return nil
	}
	return func(x string) string { return s.Render(x) }
}

// ValidateStyles is the theme for validate's text report.
func (t *Theme) ValidateStyles() validate.Styles {
	return validate.Styles{
		Error: t.fn(t.errorS), Warning: t.fn(t.warnS), Info: t.fn(t.infoS),
		Rule: t.fn(t.ruleS), Location: t.fn(t.locS), Hint: t.fn(t.hintS),
		Header: t.fn(t.headS), Passed: t.fn(t.okS), Failed: t.fn(t.failS), Dim: t.fn(t.dimS),
	}
}

// ErrorPrefix starts an error line: "error:".
func (t *Theme) ErrorPrefix() string {
	if !t.enabled {
		return "error:"
	}
	return t.errorS.Render("error:")
}

// NotePrefix starts a note line: "note:".
func (t *Theme) NotePrefix() string {
	if !t.enabled {
		return "note:"
	}
	return t.infoS.Render("note:")
}

// WarningPrefix starts a warning line: "warning:".
func (t *Theme) WarningPrefix() string {
	if !t.enabled {
		return "warning:"
	}
	return t.warnS.Render("warning:")
}
