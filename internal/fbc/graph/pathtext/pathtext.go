// Package pathtext words an upgrade path (graph.Path) as opm alpha
// upgrade-path prints it, line by line, so that the command and the
// catalog UI (opm serve --http-ui) answer the same question the same way.
package pathtext

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/printable"
)

// Text is a path in words: a heading (package, rules, channels), the
// bundle it starts from, a line per step and how it ends.
type Text struct {
	Heading string
	Start   string
	Steps   []string
	End     string
}

// Of words path, read from p.
func Of(p *graph.Package, path *graph.Path) Text {
	t := Text{
		Heading: fmt.Sprintf("%s, %s, %s:", path.Package, Semantics(path.Semantics), ChannelWord(path.Channels)),
		Start:   printable.Name(path.From) + versionOf(p, path.From),
	}
	for _, st := range path.Steps {
		s := fmt.Sprintf("%s (%s)  %s", printable.Name(st.To), st.Version, EdgeText(st))
		if len(path.Channels) > 1 {
			s += " in " + st.Channel
		}
		t.Steps = append(t.Steps, s)
	}
	switch {
	case path.To != "" && path.Reached:
		t.End = fmt.Sprintf("%s is reached in %s.", printable.Name(path.To), printable.Count(len(path.Steps), "step", "steps"))
	case path.To != "":
		t.End = fmt.Sprintf("%s is unreachable, because %s.", printable.Name(path.To), printable.Text(path.Unreachable))
	case path.Unreachable != "":
		t.End = printable.Text(path.Unreachable) + "."
	default:
		t.End = fmt.Sprintf("%s is the head of %s: OLM installs nothing more.", printable.Name(path.End), ChannelWord(path.HeadOf))
	}
	return t
}

// String is the text as opm alpha upgrade-path prints it: steps numbered.
func (t Text) String() string {
	var b strings.Builder
	b.WriteString(t.Heading + "\n")
	b.WriteString("   " + t.Start + "\n")
	for i, s := range t.Steps {
		fmt.Fprintf(&b, "%2d. %s\n", i+1, s)
	}
	b.WriteString(t.End + "\n")
	return b.String()
}

// Semantics names a path's rules: "OLM v0" or "OLM v1".
func Semantics(s string) string {
	if s == graph.OLMv1 {
		return "OLM v1"
	}
	return "OLM v0"
}

// ChannelWord is "channel C" or "channels A, B".
func ChannelWord(chans []string) string {
	if len(chans) == 1 {
		return "channel " + chans[0]
	}
	return "channels " + strings.Join(chans, ", ")
}

func versionOf(p *graph.Package, name string) string {
	if v, ok := p.Versions[name]; ok {
		return " (" + v.String() + ")"
	}
	return ""
}

// EdgeText says why a step is allowed: replaces, skips, a skipRange, or
// (OLM v1) the installed version.
func EdgeText(st graph.Step) string {
	switch st.Edge {
	case graph.EdgeSkipRange:
		return fmt.Sprintf("skipRange %q covers %s", st.SkipRange, printable.Name(st.From))
	case graph.EdgeSkips:
		return "skips " + printable.Name(st.From)
	case graph.EdgeSameVersion:
		return "same version as " + printable.Name(st.From) + " (no edge: operator-controller keeps the installed version)"
	}
	return "replaces " + printable.Name(st.From)
}
