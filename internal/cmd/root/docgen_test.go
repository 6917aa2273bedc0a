package root_test

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A small generator of the command reference (Markdown, docs/reference/) and
// of man pages (roff, for the release archives) from the real command tree.
// It lives in a test file so that the binary carries none of it; the tests
// in docs_test.go run it.

// docRoot is the command tree as users get it: the real root with the
// completion command cobra adds when it executes.
func docRoot() *cobra.Command {
	s, _, _, _ := iostreams.Test()
	r := root.NewCmd(factory.NewWithEnv(s, nil))
	r.InitDefaultCompletionCmd()
	return r
}

// docCommands is every documented command of the tree, depth first, in
// name order: the available ones (not hidden, not deprecated, not help).
func docCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range documentedChildren(c) {
		out = append(out, docCommands(sub)...)
	}
	return out
}

func documentedChildren(c *cobra.Command) []*cobra.Command {
	var subs []*cobra.Command
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() || sub.Name() == "help" {
			continue
		}
		subs = append(subs, sub)
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name() < subs[j].Name() })
	return subs
}

// docFlag is one flag as the reference shows it.
type docFlag struct {
	names    string // "-o, --output string"
	usage    string
	def      string // "" when there is no default worth showing
	env      string // "OPM_OUTPUT", or "" when the environment does not set it
	repeated bool
}

func docFlags(c *cobra.Command, fs *pflag.FlagSet) []docFlag {
	// OPM_CONFIG names opm's config file (the root's --config), never a
	// command's own --config (alpha mirror's ImageSetConfiguration, a
	// filter configuration): config.Apply leaves those alone.
	opmConfig := c.Root().PersistentFlags().Lookup(config.FlagName)
	var out []docFlag
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		varname, usage := pflag.UnquoteUsage(f)
		names := "--" + f.Name
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			names = "-" + f.Shorthand + ", " + names
		}
		if varname != "" {
			names += " " + varname
		}
		d := docFlag{names: names, usage: usage}
		switch f.Value.Type() {
		case "bool":
			if f.DefValue != "false" {
				d.def = f.DefValue
			}
		case "stringSlice", "stringArray", "intSlice":
			if f.DefValue != "[]" {
				d.def = f.DefValue
			}
			d.repeated = !strings.Contains(f.Usage, "repeatable")
		default:
			if f.DefValue != "" && f.DefValue != "0" {
				d.def = f.DefValue
			}
		}
		if _, noEnv := f.Annotations[config.NoEnvAnnotation]; !noEnv && f.Name != "help" && (f.Name != config.FlagName || f == opmConfig) {
			d.env = config.EnvName(f.Name)
		}
		out = append(out, d)
	})
	return out
}

// docFileName is the reference file of a command: opm_bundle_validate.md.
func docFileName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// manName is the man page name of a command: opm-bundle-validate.
func manName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-")
}

// mdEscape escapes the characters that would turn help text into Markdown
// markup it does not mean: emphasis, HTML tags, links.
func mdEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, `<`, `&lt;`, `>`, `&gt;`, `[`, `\[`, `]`, `\]`, `|`, `\|`).Replace(s)
}

// mdText turns a help text into Markdown paragraphs. Indented lines (command
// examples in help text) become code blocks.
func mdText(s string) string {
	var b strings.Builder
	lines := strings.Split(strings.TrimSpace(s), "\n")
	inCode := false
	for _, l := range lines {
		indented := strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != ""
		switch {
		case indented && !inCode:
			b.WriteString("```\n")
			inCode = true
		case !indented && inCode && strings.TrimSpace(l) != "":
			b.WriteString("```\n\n")
			inCode = false
		}
		if inCode {
			if strings.TrimSpace(l) != "" {
				b.WriteString(strings.TrimPrefix(l, "  ") + "\n")
			}
			continue
		}
		b.WriteString(mdEscape(l) + "\n")
	}
	if inCode {
		b.WriteString("```\n")
	}
	return b.String()
}

const generatedNote = "<!-- Generated from opm's command tree by `make docs` (internal/cmd/root/docgen_test.go). Do not edit. -->\n\n"

// markdownReference renders every command's page, keyed by file name.
func markdownReference(root *cobra.Command) map[string]string {
	files := map[string]string{}
	for _, c := range docCommands(root) {
		files[docFileName(c)] = markdownPage(c)
	}
	return files
}

func markdownPage(c *cobra.Command) string {
	var b strings.Builder
	b.WriteString(generatedNote)
	fmt.Fprintf(&b, "# %s\n\n", c.CommandPath())
	fmt.Fprintf(&b, "%s\n\n", mdEscape(c.Short))
	if c.Long != "" {
		b.WriteString(mdText(c.Long))
		b.WriteString("\n")
	}

	b.WriteString("## Usage\n\n```\n")
	// A group command run alone only prints its help: show its subcommands.
	if c.Runnable() && !c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "%s\n", c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "%s [command]\n", c.CommandPath())
	}
	b.WriteString("```\n\n")
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Aliases: `%s`\n\n", strings.Join(c.Aliases, "`, `"))
	}

	if c.Example != "" {
		b.WriteString("## Examples\n\n```sh\n")
		for _, l := range strings.Split(strings.Trim(c.Example, "\n"), "\n") {
			b.WriteString(strings.TrimPrefix(l, "  ") + "\n")
		}
		b.WriteString("```\n\n")
	}

	if c == c.Root() {
		b.WriteString("## All commands\n\n| command | what it does |\n|---|---|\n")
		for _, sub := range docCommands(c)[1:] {
			fmt.Fprintf(&b, "| [%s](%s) | %s |\n", sub.CommandPath(), docFileName(sub), mdEscape(sub.Short))
		}
		b.WriteString("\n")
	} else if subs := documentedChildren(c); len(subs) > 0 {
		b.WriteString("## Commands\n\n| command | what it does |\n|---|---|\n")
		for _, sub := range subs {
			fmt.Fprintf(&b, "| [%s](%s) | %s |\n", sub.CommandPath(), docFileName(sub), mdEscape(sub.Short))
		}
		b.WriteString("\n")
	}

	writeFlagTable := func(title string, flags []docFlag) {
		if len(flags) == 0 {
			return
		}
		fmt.Fprintf(&b, "## %s\n\n| flag | environment | default | description |\n|---|---|---|---|\n", title)
		for _, f := range flags {
			env, def := "", ""
			if f.env != "" {
				env = "`" + f.env + "`"
			}
			if f.def != "" {
				def = "`" + f.def + "`"
			}
			usage := mdEscape(f.usage)
			if f.repeated {
				usage += " (repeatable)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.names, env, def, usage)
		}
		b.WriteString("\n")
	}
	writeFlagTable("Flags", docFlags(c, c.NonInheritedFlags()))
	writeFlagTable("Global flags", docFlags(c, c.InheritedFlags()))

	var see []string
	if p := c.Parent(); p != nil {
		see = append(see, fmt.Sprintf("[%s](%s) — %s", p.CommandPath(), docFileName(p), mdEscape(p.Short)))
	}
	if c != c.Root() {
		see = append(see, fmt.Sprintf("[all commands](%s)", docFileName(c.Root())))
	}
	if len(see) > 0 {
		b.WriteString("## See also\n\n")
		for _, s := range see {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// roffEscape makes text safe in a roff line: backslashes, hyphens (so that
// they copy and search as ASCII) and control characters at line start.
func roffEscape(s string) string {
	s = strings.NewReplacer(`\`, `\e`, `-`, `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffText turns a help text into roff paragraphs; indented lines are kept
// as they are (no filling).
func roffText(s string) string {
	var b strings.Builder
	inCode := false
	b.WriteString(".PP\n")
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		blank := strings.TrimSpace(l) == ""
		indented := strings.HasPrefix(l, "  ") && !blank
		switch {
		case indented && !inCode:
			b.WriteString(".RS 4\n.nf\n")
			inCode = true
		case !indented && !blank && inCode:
			b.WriteString(".fi\n.RE\n.PP\n")
			inCode = false
		}
		if blank {
			if !inCode {
				b.WriteString(".PP\n")
			}
			continue
		}
		if inCode {
			l = strings.TrimPrefix(l, "  ")
		}
		b.WriteString(roffEscape(l) + "\n")
	}
	if inCode {
		b.WriteString(".fi\n.RE\n")
	}
	return b.String()
}

// manPages renders a man page (section 1) for every command, keyed by file
// name. Pages carry no date, so that the same tree gives the same bytes.
func manPages(root *cobra.Command) map[string]string {
	pages := map[string]string{}
	for _, c := range docCommands(root) {
		pages[manName(c)+".1"] = manPage(c)
	}
	return pages
}

func manPage(c *cobra.Command) string {
	var b strings.Builder
	name := manName(c)
	fmt.Fprintf(&b, ".\\\" Generated from opm's command tree (internal/cmd/root/docgen_test.go). Do not edit.\n")
	fmt.Fprintf(&b, ".TH %q 1 \"\" \"opm\" \"opm manual\"\n", strings.ToUpper(name))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(name), roffEscape(c.Short))

	b.WriteString(".SH SYNOPSIS\n")
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, ".B %s\n[command]\n", c.CommandPath())
	} else if c.Runnable() {
		fmt.Fprintf(&b, ".B %s\n%s\n", c.CommandPath(), roffEscape(strings.TrimSpace(strings.TrimPrefix(c.UseLine(), c.CommandPath()))))
	}

	b.WriteString(".SH DESCRIPTION\n")
	long := c.Long
	if long == "" {
		long = c.Short
	}
	b.WriteString(roffText(long))

	if subs := documentedChildren(c); len(subs) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, sub := range subs {
			fmt.Fprintf(&b, ".TP\n\\fB%s\\fR(1)\n%s\n", roffEscape(manName(sub)), roffEscape(sub.Short))
		}
	}

	writeOptions := func(title string, flags []docFlag) {
		if len(flags) == 0 {
			return
		}
		fmt.Fprintf(&b, ".SH %s\n", title)
		for _, f := range flags {
			fmt.Fprintf(&b, ".TP\n\\fB%s\\fR\n%s", roffEscape(f.names), roffEscape(f.usage))
			if f.repeated {
				b.WriteString(" (repeatable)")
			}
			b.WriteString("\n")
			var extra []string
			if f.def != "" {
				extra = append(extra, "Default: "+roffEscape(f.def)+".")
			}
			if f.env != "" {
				extra = append(extra, "Environment: \\fB"+roffEscape(f.env)+"\\fR.")
			}
			if len(extra) > 0 {
				fmt.Fprintf(&b, ".br\n%s\n", strings.Join(extra, " "))
			}
		}
	}
	writeOptions("OPTIONS", docFlags(c, c.NonInheritedFlags()))
	writeOptions("OPTIONS INHERITED FROM PARENT COMMANDS", docFlags(c, c.InheritedFlags()))

	if c.Example != "" {
		b.WriteString(".SH EXAMPLES\n.RS 4\n.nf\n")
		for _, l := range strings.Split(strings.Trim(c.Example, "\n"), "\n") {
			b.WriteString(roffEscape(strings.TrimPrefix(l, "  ")) + "\n")
		}
		b.WriteString(".fi\n.RE\n")
	}

	if c == c.Root() {
		b.WriteString(".SH EXIT STATUS\n0 no failing finding; 1 failing findings; 2 usage or I/O error; 130 interrupted.\n")
	}

	var see []string
	if p := c.Parent(); p != nil {
		see = append(see, fmt.Sprintf("\\fB%s\\fR(1)", roffEscape(manName(p))))
	}
	for _, sub := range documentedChildren(c) {
		see = append(see, fmt.Sprintf("\\fB%s\\fR(1)", roffEscape(manName(sub))))
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(see, ", "))
	}
	return b.String()
}
