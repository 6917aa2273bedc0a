package main

import (
	"io"
	"os"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/opmkit/opm/internal/validate"
)

// theme is the styling of human output on ErrOut.
type theme struct {
	enabled bool
	r       *lipgloss.Renderer

	errorS, warnS, infoS, ruleS, locS, hintS, headS, okS, failS, dimS lipgloss.Style
}

// newTheme styles output to w; tty says whether w is a terminal.
func newTheme(w io.Writer, tty bool) *theme {
	t := &theme{enabled: colorEnabled(tty)}
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

func (t *theme) fn(s lipgloss.Style) func(string) string {
	if !t.enabled {
		return nil
	}
	return func(x string) string { return s.Render(x) }
}

// validateStyles is the theme for validate's text report.
func (t *theme) validateStyles() validate.Styles {
	return validate.Styles{
		Error: t.fn(t.errorS), Warning: t.fn(t.warnS), Info: t.fn(t.infoS),
		Rule: t.fn(t.ruleS), Location: t.fn(t.locS), Hint: t.fn(t.hintS),
		Header: t.fn(t.headS), Passed: t.fn(t.okS), Failed: t.fn(t.failS), Dim: t.fn(t.dimS),
	}
}

func (t *theme) errorPrefix() string {
	if !t.enabled {
		return "error:"
	}
	return t.errorS.Render("error:")
}

func (t *theme) notePrefix() string {
	if !t.enabled {
		return "note:"
	}
	return t.infoS.Render("note:")
}
