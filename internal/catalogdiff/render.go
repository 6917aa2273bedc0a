package catalogdiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss/tree"

	"github.com/opmkit/opm/internal/printable"
)

// Styles colour the text tree (the command makes them with lipgloss for
// its stream); PlainStyles leaves text as it is.
type Styles struct {
	Added, Removed, Changed, Warn, Name, Dim func(string) string
}

// PlainStyles are Styles without colour.
func PlainStyles() Styles {
	plain := func(s string) string { return s }
	return Styles{plain, plain, plain, plain, plain, plain}
}

// WriteText prints the diff as one tree per package, then a summary line.
func WriteText(w io.Writer, r *Result, s Styles) error {
	r = printableCopy(r)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n", r.Old, s.Dim("→"), r.New)
	if r.Equal {
		b.WriteString("no differences\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	for _, p := range r.Packages {
		t := tree.Root(s.Name(p.Name) + " " + statusWord(p.Status, s))
		if p.DefaultChannel != nil && p.Status == Changed {
			t.Child(fmt.Sprintf("default channel: %s → %s", orNone(p.DefaultChannel.Old), orNone(p.DefaultChannel.New)))
		} else if p.DefaultChannel != nil && p.Status == Added {
			t.Child("default channel: " + orNone(p.DefaultChannel.New))
		}
		if n := len(p.BundlesAdded) + len(p.BundlesRemoved) + len(p.BundlesChanged); n > 0 {
			bt := tree.Root(fmt.Sprintf("bundles (%s)", counts(len(p.BundlesAdded), len(p.BundlesRemoved), len(p.BundlesChanged))))
			for _, x := range p.BundlesAdded {
				bt.Child(s.Added("+ "+x.Name) + " " + s.Dim(strings.TrimSpace(x.Version+" "+x.Image)))
			}
			for _, x := range p.BundlesRemoved {
				bt.Child(s.Removed("- "+x.Name) + " " + s.Dim(strings.TrimSpace(x.Version+" "+x.Image)))
			}
			for _, x := range p.BundlesChanged {
				bt.Child(s.Changed("~ "+x.Name) + ": " + bundleChange(x))
			}
			t.Child(bt)
		}
		for _, c := range p.Channels {
			ct := tree.Root("channel " + s.Name(c.Name) + " " + statusWord(c.Status, s))
			if c.Head != nil {
				switch c.Status {
				case Added:
					ct.Child("head " + orNone(c.Head.New))
				case Removed:
					ct.Child("head was " + orNone(c.Head.Old))
				default:
					ct.Child(s.Changed(fmt.Sprintf("head %s → %s", orNone(c.Head.Old), orNone(c.Head.New))))
				}
			}
			if c.Status == Changed {
				for _, e := range c.EntriesAdded {
					ct.Child(s.Added("+ entry " + e))
				}
				for _, e := range c.EntriesRemoved {
					ct.Child(s.Removed("- entry " + e))
				}
			} else {
				ct.Child(plural(len(c.EntriesAdded)+len(c.EntriesRemoved), "entry", "entries"))
			}
			for _, e := range c.EdgesAdded {
				ct.Child(s.Added("+ edge " + edge(e)))
			}
			for _, e := range c.EdgesRemoved {
				ct.Child(s.Removed("- edge " + edge(e)))
			}
			for _, u := range c.Unreachable {
				ct.Child(s.Warn("! unreachable "+u) + s.Dim(" (no upgrade path to the head)"))
			}
			t.Child(ct)
		}
		if n := len(p.DeprecationsAdded) + len(p.DeprecationsRemoved) + len(p.DeprecationsChanged); n > 0 {
			dt := tree.Root("deprecations")
			for _, d := range p.DeprecationsAdded {
				dt.Child(s.Added("+ "+deprecated(d.Schema, d.Name)) + ": " + d.Message)
			}
			for _, d := range p.DeprecationsRemoved {
				dt.Child(s.Removed("- "+deprecated(d.Schema, d.Name)) + ": " + d.Message)
			}
			for _, d := range p.DeprecationsChanged {
				dt.Child(s.Changed("~ "+deprecated(d.Schema, d.Name)) + fmt.Sprintf(": %q → %q", d.Message.Old, d.Message.New))
			}
			t.Child(dt)
		}
		b.WriteString(t.String())
		b.WriteString("\n")
	}
	b.WriteString(SummaryLine(r))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func statusWord(st Status, s Styles) string {
	switch st {
	case Added:
		return s.Added("(added)")
	case Removed:
		return s.Removed("(removed)")
	}
	return s.Changed("(changed)")
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

func counts(added, removed, changed int) string {
	var parts []string
	if added > 0 {
		parts = append(parts, fmt.Sprintf("%d added", added))
	}
	if removed > 0 {
		parts = append(parts, fmt.Sprintf("%d removed", removed))
	}
	if changed > 0 {
		parts = append(parts, fmt.Sprintf("%d changed", changed))
	}
	return strings.Join(parts, ", ")
}

func bundleChange(x BundleChange) string {
	var parts []string
	for _, f := range x.Fields {
		switch {
		case f == "image" && x.Image != nil:
			parts = append(parts, fmt.Sprintf("image %s → %s", x.Image.Old, x.Image.New))
		case f == "properties" && len(x.Properties) > 0:
			parts = append(parts, "properties ("+strings.Join(x.Properties, ", ")+")")
		case f == "version" && x.Version != nil:
			parts = append(parts, fmt.Sprintf("version %s → %s", x.Version.Old, x.Version.New))
		default:
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, "; ")
}

func edge(e Edge) string {
	kind := e.Kind
	if e.Range != "" {
		kind += " " + e.Range
	}
	return fmt.Sprintf("%s → %s (%s)", e.From, e.To, kind)
}

func deprecated(schema, name string) string {
	if name == "" {
		return schema
	}
	return schema + " " + name
}

// SummaryLine is one line counting what changed.
func SummaryLine(r *Result) string {
	if r.Equal {
		return "no differences"
	}
	s := r.Summary
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.PackagesAdded, "package(s) added")
	add(s.PackagesRemoved, "package(s) removed")
	add(s.PackagesChanged, "package(s) changed")
	add(s.BundlesAdded, "bundle(s) added")
	add(s.BundlesRemoved, "bundle(s) removed")
	add(s.BundlesChanged, "bundle(s) changed")
	add(s.ChannelsAdded, "channel(s) added")
	add(s.ChannelsRemoved, "channel(s) removed")
	add(s.DefaultChannelsMoved, "default channel(s) moved")
	add(s.HeadsMoved, "head(s) moved")
	add(s.EdgesAdded, "edge(s) added")
	add(s.EdgesRemoved, "edge(s) lost")
	add(s.Unreachable, "unreachable bundle(s)")
	add(s.DeprecationsAdded, "deprecation(s) added")
	add(s.DeprecationsRemoved, "deprecation(s) removed")
	add(s.DeprecationsChanged, "deprecation(s) reworded")
	return strings.Join(parts, ", ")
}

// WriteMarkdown prints the diff for a pull-request comment: a heading, the
// summary, a table of packages, then a section per package (folded with
// <details> so that a large diff stays readable).
func WriteMarkdown(w io.Writer, r *Result) error {
	r = printableCopy(r)
	var b strings.Builder
	fmt.Fprintf(&b, "### Catalog diff: %s → %s\n\n", code(r.Old), code(r.New))
	writeMarkdownGates(&b, r)
	if r.Equal {
		b.WriteString("No differences.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "**%s**\n\n", SummaryLine(r))
	b.WriteString("| package | status | bundles +/−/~ | heads moved | edges +/− | unreachable | deprecations + |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, p := range r.Packages {
		heads, ea, er, un := 0, 0, 0, 0
		for _, c := range p.Channels {
			if c.Status == Changed && c.Head != nil {
				heads++
			}
			ea += len(c.EdgesAdded)
			er += len(c.EdgesRemoved)
			un += len(c.Unreachable)
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d/%d | %d | %d/%d | %d | %d |\n", cell(code(p.Name)), cell(string(p.Status)),
			len(p.BundlesAdded), len(p.BundlesRemoved), len(p.BundlesChanged), heads, ea, er, un, len(p.DeprecationsAdded))
	}
	for _, p := range r.Packages {
		fmt.Fprintf(&b, "\n<details><summary><code>%s</code> (%s)</summary>\n\n", mdEscape(p.Name), p.Status)
		if p.DefaultChannel != nil {
			fmt.Fprintf(&b, "- Default channel: %s → %s\n", code(orNone(p.DefaultChannel.Old)), code(orNone(p.DefaultChannel.New)))
		}
		for _, x := range p.BundlesAdded {
			fmt.Fprintf(&b, "- ➕ bundle %s %s %s\n", code(x.Name), x.Version, code(x.Image))
		}
		for _, x := range p.BundlesRemoved {
			fmt.Fprintf(&b, "- ➖ bundle %s %s %s\n", code(x.Name), x.Version, code(x.Image))
		}
		for _, x := range p.BundlesChanged {
			fmt.Fprintf(&b, "- ✏️ bundle %s: %s\n", code(x.Name), mdEscape(bundleChange(x)))
		}
		for _, c := range p.Channels {
			fmt.Fprintf(&b, "- Channel %s (%s)\n", code(c.Name), c.Status)
			if c.Head != nil {
				fmt.Fprintf(&b, "  - Head: %s → %s\n", code(orNone(c.Head.Old)), code(orNone(c.Head.New)))
			}
			if c.Status == Changed {
				for _, e := range c.EntriesAdded {
					fmt.Fprintf(&b, "  - ➕ entry %s\n", code(e))
				}
				for _, e := range c.EntriesRemoved {
					fmt.Fprintf(&b, "  - ➖ entry %s\n", code(e))
				}
			}
			for _, e := range c.EdgesAdded {
				fmt.Fprintf(&b, "  - ➕ edge %s\n", mdEdge(e))
			}
			for _, e := range c.EdgesRemoved {
				fmt.Fprintf(&b, "  - ➖ edge %s\n", mdEdge(e))
			}
			for _, u := range c.Unreachable {
				fmt.Fprintf(&b, "  - ⚠️ %s is unreachable: no upgrade path leads from it to the head\n", code(u))
			}
		}
		for _, d := range p.DeprecationsAdded {
			fmt.Fprintf(&b, "- ➕ deprecation of %s: %s\n", code(deprecated(d.Schema, d.Name)), mdEscape(d.Message))
		}
		for _, d := range p.DeprecationsRemoved {
			fmt.Fprintf(&b, "- ➖ deprecation of %s: %s\n", code(deprecated(d.Schema, d.Name)), mdEscape(d.Message))
		}
		for _, d := range p.DeprecationsChanged {
			fmt.Fprintf(&b, "- ✏️ deprecation of %s: %s → %s\n", code(deprecated(d.Schema, d.Name)), mdEscape(d.Message.Old), mdEscape(d.Message.New))
		}
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEdge(e Edge) string {
	kind := e.Kind
	if e.Range != "" {
		kind += " " + code(e.Range)
	}
	return fmt.Sprintf("%s → %s (%s)", code(e.From), code(e.To), kind)
}

// cell is s made safe for a table cell: a | would end the cell, even
// inside inline code (GitHub reads \| there as |), and a line break the
// table.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\r", " ", "\n", " ").Replace(s)
}

// code is s as inline code, with a fence long enough for backticks in s;
// line breaks become spaces (inline code is one line).
func code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// mdEscape keeps free text (messages) from turning into markup or HTML.
func mdEscape(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "<", "&lt;", ">", "&gt;", "|", "\\|", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]", "\n", " ")
	return r.Replace(s)
}

// printableCopy is r for people to read: a copy whose names and messages
// (from the catalogs) have their control characters shown escaped, so an
// ANSI escape sequence in a package name does not reach the terminal. The
// JSON output renders r itself, exact.
func printableCopy(r *Result) *Result {
	raw, err := json.Marshal(r)
	if err != nil {
		return r
	}
	c := &Result{}
	if err := json.Unmarshal(raw, c); err != nil {
		return r
	}
	printable.Strings(c, printable.Name)
	return c
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeMarkdownGates prints the release gates checked, each passed or
// failed with what tripped it.
func writeMarkdownGates(b *strings.Builder, r *Result) {
	if len(r.FailOn) == 0 {
		return
	}
	b.WriteString("#### Release gates\n\n")
	for _, g := range r.FailOn {
		var hits []Violation
		for _, v := range r.Violations {
			if v.Gate == g {
				hits = append(hits, v)
			}
		}
		if len(hits) == 0 {
			fmt.Fprintf(b, "- ✅ %s: passed\n", code(g))
			continue
		}
		fmt.Fprintf(b, "- ❌ %s: %s\n", code(g), plural(len(hits), "violation", "violations"))
		for _, v := range hits {
			where := code(v.Package)
			if v.Channel != "" {
				where += " channel " + code(v.Channel)
			}
			if v.Package == "" {
				fmt.Fprintf(b, "  - %s\n", mdEscape(v.What))
				continue
			}
			fmt.Fprintf(b, "  - %s: %s\n", where, mdEscape(v.What))
		}
	}
	b.WriteString("\n")
}
