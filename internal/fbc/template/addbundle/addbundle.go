// Package addbundle adds a bundle to a catalog template (basic or semver)
// by editing the template's text: the lines it adds take the indentation
// and quoting of the lines around them, and nothing else of the file
// changes (key order, comments, blank lines, flow or block style).
package addbundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/template"
)

// Bundle is the bundle to add, as its image renders.
type Bundle struct {
	Name, Package, Version, Image string
}

// Options say where the bundle goes.
type Options struct {
	// Channels are the channels of a basic template (created when
	// missing; the package's default channel when empty), or the
	// archetypes of a semver template (candidate, fast, stable; candidate
	// when empty).
	Channels []string
	// Replaces, Skips and SkipRange are the new entry's edges in a basic
	// template, as the user gave them; they override CSV.
	Replaces  string
	Skips     []string
	SkipRange string
	// CSV are the edges the bundle's ClusterServiceVersion declares
	// (spec.replaces, spec.skips, olm.skipRange): a basic template's entry
	// takes them when no edge is given above, as an index built from the
	// same bundle would. With none of either, the entry replaces the
	// channel's head.
	CSV Edges
}

// Edges are a channel entry's upgrade edges.
type Edges struct {
	Replaces  string
	Skips     []string
	SkipRange string
}

func (e Edges) empty() bool { return e.Replaces == "" && len(e.Skips) == 0 && e.SkipRange == "" }

// CSVEdges reads the edges a ClusterServiceVersion (as JSON) declares.
func CSVEdges(csv json.RawMessage) (Edges, error) {
	if len(csv) == 0 {
		return Edges{}, nil
	}
	var c struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Replaces string   `json:"replaces"`
			Skips    []string `json:"skips"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(csv, &c); err != nil {
		return Edges{}, fmt.Errorf("read the CSV's replaces, skips and olm.skipRange: %w", err)
	}
	var skips []string
	for _, s := range c.Spec.Skips {
		if s = strings.TrimSpace(s); s != "" {
			skips = append(skips, s)
		}
	}
	return Edges{Replaces: strings.TrimSpace(c.Spec.Replaces), Skips: skips, SkipRange: strings.TrimSpace(c.Metadata.Annotations["olm.skipRange"])}, nil
}

// Result says what Add changed.
type Result struct {
	// Data is the template with the bundle (the input when unchanged).
	Data    []byte
	Changed bool
	// Changes describe each edit, for the user.
	Changes []string
}

// Add adds b to the template in data (source names it in errors).
func Add(source string, data []byte, b Bundle, opts Options) (*Result, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a catalog template (a mapping with a schema)", source)
	}
	root := doc.Content[0]
	e := &editor{source: source, lines: splitLines(data), json: root.Style&yaml.FlowStyle != 0, seqIndent: 2}
	e.flowLists = e.json
	e.learnStyle(root)
	schema := scalar(mapValue(root, "schema"))
	var err error
	switch schema {
	case template.SchemaBasic:
		err = e.basic(root, b, opts)
	case template.SchemaSemver:
		err = e.semver(root, b, opts)
	default:
		return nil, fmt.Errorf("%s: schema %q: add-bundle edits %s and %s templates", source, schema, template.SchemaBasic, template.SchemaSemver)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Data: data, Changes: e.changes}
	if len(e.edits) > 0 {
		res.Data, res.Changed = e.apply(), true
	}
	return res, nil
}

// editor collects text edits against the original lines.
type editor struct {
	source string
	lines  []string // with their line ends
	json   bool     // the template is JSON: new text is JSON too
	// flowLists: nested lists are written [a, b] (JSON, or a file that
	// writes its skips so); seqIndent is how far right of its key a block
	// list's dashes go in this file.
	flowLists bool
	seqIndent int
	edits     []edit
	changes   []string
}

// edit inserts text at (line, col), both 0-based; col -1 inserts whole
// lines before line.
type edit struct {
	line, col int
	text      string
	seq       int
}

func (e *editor) insertLines(before int, text string) {
	e.edits = append(e.edits, edit{line: before, col: -1, text: text, seq: len(e.edits)})
}

func (e *editor) insertAt(line, col int, text string) {
	e.edits = append(e.edits, edit{line: line, col: col, text: text, seq: len(e.edits)})
}

// apply makes the edits, last first, so that earlier places stay put.
func (e *editor) apply() []byte {
	lines := append([]string(nil), e.lines...)
	sort.SliceStable(e.edits, func(i, j int) bool {
		a, b := e.edits[i], e.edits[j]
		if a.line != b.line {
			return a.line > b.line
		}
		if a.col != b.col {
			return a.col > b.col
		}
		return a.seq > b.seq
	})
	for _, ed := range e.edits {
		if ed.col < 0 {
			if ed.line > 0 && ed.line <= len(lines) && !strings.HasSuffix(lines[ed.line-1], "\n") {
				lines[ed.line-1] += "\n"
			}
			lines = append(lines[:ed.line], append([]string{ed.text}, lines[ed.line:]...)...)
			continue
		}
		l := lines[ed.line]
		lines[ed.line] = l[:ed.col] + ed.text + l[ed.col:]
	}
	return []byte(strings.Join(lines, ""))
}

func splitLines(data []byte) []string {
	var out []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, string(data))
			break
		}
		out = append(out, string(data[:i+1]))
		data = data[i+1:]
	}
	return out
}

// quote writes s as a YAML scalar (plain when YAML reads it back as the
// same string), or as a JSON string in a JSON template.
func (e *editor) quote(s string) string {
	if e.json {
		b, _ := json.Marshal(s) // a string: cannot fail
		return string(b)
	}
	out, err := yaml.Marshal(s)
	if err != nil {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return strings.TrimSuffix(string(out), "\n")
}

func (e *editor) key(k string) string {
	if e.json {
		return `"` + k + `"`
	}
	return k
}

// field is a key and its value in a new item: a scalar, a list of
// scalars, or a list of mappings; values already quoted.
type field struct {
	key    string
	scalar string
	list   []string
	items  [][]field
	isList bool
}

func scalarField(k, v string) field { return field{key: k, scalar: v} }

// flow writes fields as a flow mapping: {a: b, c: [d]}.
func flow(fields []field) string {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		parts = append(parts, f.key+": "+flowValue(f))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func flowValue(f field) string {
	if !f.isList {
		return f.scalar
	}
	var parts []string
	parts = append(parts, f.list...)
	for _, it := range f.items {
		parts = append(parts, flow(it))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// block writes fields as the item of a block sequence: the first line
// starts with the dash at column dash, the keys at column dash+inner.
// Lists nested in it are block lists too (flow when the file writes its
// lists so), their dashes seqIndent right of their key.
func (e *editor) block(b *strings.Builder, fields []field, dash, inner int) {
	keyCol := dash + inner
	for i, f := range fields {
		if i == 0 {
			b.WriteString(strings.Repeat(" ", dash) + "-" + strings.Repeat(" ", inner-1))
		} else {
			b.WriteString(strings.Repeat(" ", keyCol))
		}
		if !f.isList || (e.flowLists && len(f.items) == 0) || len(f.list)+len(f.items) == 0 {
			b.WriteString(f.key + ": " + flowValue(f) + "\n")
			continue
		}
		b.WriteString(f.key + ":\n")
		for _, v := range f.list {
			b.WriteString(strings.Repeat(" ", keyCol+e.seqIndent) + "- " + v + "\n")
		}
		for _, it := range f.items {
			e.block(b, it, keyCol+e.seqIndent, 2)
		}
	}
}

// appendItem adds an item to the sequence seq. In a block sequence the
// item goes after the last one, indented as it; in a flow sequence (or an
// empty one, written []) before the closing bracket.
func (e *editor) appendItem(seq *yaml.Node, fields []field) error {
	if seq.Style&yaml.FlowStyle != 0 || len(seq.Content) == 0 {
		end, err := e.flowEnd(seq)
		if err != nil {
			return err
		}
		item := flow(fields)
		if len(seq.Content) > 0 {
			item = ", " + item
			// A bracket on a line of its own: the item goes at the end
			// of the last item's line instead.
			if strings.TrimSpace(e.lines[end[0]][:end[1]]) == "" {
				for l := end[0] - 1; l >= 0; l-- {
					if t := strings.TrimRight(e.lines[l], " \r\n"); t != "" {
						end = [2]int{l, len(t)}
						break
					}
				}
			}
		}
		e.insertAt(end[0], end[1], item)
		return nil
	}
	last := seq.Content[len(seq.Content)-1]
	// The item's line starts with its dash: "  - name: x", its keys at
	// the item's column.
	if last.Line-1 >= len(e.lines) || !strings.HasPrefix(strings.TrimLeft(e.lines[last.Line-1], " "), "-") {
		return fmt.Errorf("%s:%d: cannot tell this sequence's indentation; add the entry by hand", e.source, last.Line)
	}
	dash := len(e.lines[last.Line-1]) - len(strings.TrimLeft(e.lines[last.Line-1], " "))
	inner := last.Column - 1 - dash // from the dash to the item's keys
	if inner < 2 {
		return fmt.Errorf("%s:%d: cannot tell this sequence's indentation; add the entry by hand", e.source, last.Line)
	}
	var b strings.Builder
	e.block(&b, fields, dash, inner)
	e.insertLines(e.blockEnd(last.Line-1, dash), b.String())
	return nil
}

// blockEnd is the line after the block that starts at line start (0-based)
// with its dash at column dash: the lines indented more than the dash,
// blank lines and comments after the last of them excluded.
func (e *editor) blockEnd(start, dash int) int {
	end := start + 1
	for i := start + 1; i < len(e.lines); i++ {
		t := strings.TrimLeft(e.lines[i], " ")
		if strings.TrimSpace(t) == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if len(e.lines[i])-len(t) <= dash {
			break
		}
		end = i + 1
	}
	return end
}

// flowEnd is where a flow sequence's closing bracket is (0-based line and
// column), found by scanning from its opening bracket, minding quotes.
func (e *editor) flowEnd(seq *yaml.Node) ([2]int, error) {
	line, col := seq.Line-1, seq.Column-1
	if line >= len(e.lines) || col >= len(e.lines[line]) || e.lines[line][col] != '[' {
		return [2]int{}, fmt.Errorf("%s:%d: cannot find this sequence's brackets; add the entry by hand", e.source, seq.Line)
	}
	depth := 0
	var quote byte
	for l := line; l < len(e.lines); l++ {
		s := e.lines[l]
		c := 0
		if l == line {
			c = col
		}
		for ; c < len(s); c++ {
			ch := s[c]
			switch {
			case quote != 0:
				if ch == '\\' && quote == '"' {
					c++
				} else if ch == quote {
					quote = 0
				}
			case ch == '"' || ch == '\'':
				quote = ch
			case ch == '[' || ch == '{':
				depth++
			case ch == ']' || ch == '}':
				depth--
				if depth == 0 {
					return [2]int{l, c}, nil
				}
			case ch == '#' && !e.json && (c == 0 || s[c-1] == ' '):
				c = len(s)
			}
		}
	}
	return [2]int{}, fmt.Errorf("%s:%d: unterminated sequence", e.source, seq.Line)
}

// learnStyle reads how the file writes nested lists: the first block
// sequence under a key gives the dashes' indentation, the first skips list
// whether lists of names are flow or block.
func (e *editor) learnStyle(root *yaml.Node) {
	indentSeen, skipsSeen := false, false
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
					if !skipsSeen && k.Value == "skips" {
						skipsSeen = true
						e.flowLists = e.json || v.Style&yaml.FlowStyle != 0
					}
					if !indentSeen && v.Style&yaml.FlowStyle == 0 && v.Content[0].Line-1 < len(e.lines) {
						l := e.lines[v.Content[0].Line-1]
						if dash := len(l) - len(strings.TrimLeft(l, " ")); dash >= k.Column-1 {
							indentSeen = true
							e.seqIndent = dash - (k.Column - 1)
						}
					}
				}
				walk(v)
			}
		}
		if n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(root)
}

// mapValue is the value of key k in mapping m (nil when absent).
func mapValue(m *yaml.Node, k string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// basicChannel is a channel of a basic template.
type basicChannel struct {
	node    *yaml.Node
	entries *yaml.Node
	ch      fbc.Channel
}

func (e *editor) basic(root *yaml.Node, b Bundle, opts Options) error {
	entries := mapValue(root, "entries")
	if entries == nil || entries.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s: entries: not a list of blobs", e.source)
	}
	var pkg, defaultChannel string
	channels := map[string]*basicChannel{}
	var lastChannel *yaml.Node
	hasImage := false
	for _, item := range entries.Content {
		switch scalar(mapValue(item, "schema")) {
		case fbc.SchemaPackage:
			pkg, defaultChannel = scalar(mapValue(item, "name")), scalar(mapValue(item, "defaultChannel"))
		case fbc.SchemaChannel:
			if scalar(mapValue(item, "package")) != b.Package && scalar(mapValue(item, "package")) != "" {
				continue
			}
			c := &basicChannel{node: item, entries: mapValue(item, "entries")}
			if err := decodeJSON(item, &c.ch); err != nil {
				return fmt.Errorf("%s:%d: channel: %w", e.source, item.Line, err)
			}
			channels[c.ch.Name] = c
			lastChannel = item
		case fbc.SchemaBundle:
			hasImage = hasImage || scalar(mapValue(item, "image")) == b.Image
		}
	}
	if pkg != "" && pkg != b.Package {
		return fmt.Errorf("%s: the template is of package %s, the bundle %s of package %s", e.source, pkg, b.Image, b.Package)
	}
	targets := opts.Channels
	if len(targets) == 0 {
		if defaultChannel == "" {
			return fmt.Errorf("%s: the template names no default channel: say which channels the bundle joins (--channel)", e.source)
		}
		targets = []string{defaultChannel}
	}
	given := Edges{Replaces: opts.Replaces, Skips: opts.Skips, SkipRange: opts.SkipRange}
	edges, from := given, ""
	if edges.empty() && !opts.CSV.empty() {
		edges, from = opts.CSV, " (from the CSV)"
	}
	type plan struct {
		c     *basicChannel
		name  string
		entry fbc.ChannelEntry
		from  string
	}
	var plans []plan
	for _, name := range targets {
		c := channels[name]
		if c != nil && hasEntry(c.ch, b.Name) {
			continue // there already: adding twice changes nothing
		}
		entry := fbc.ChannelEntry{Name: b.Name, Replaces: edges.Replaces, Skips: edges.Skips, SkipRange: edges.SkipRange}
		p := plan{c: c, name: name, from: from}
		if c == nil && edges.empty() {
			// A new channel: its entry upgrades from the default
			// channel's head, so that clusters there can move to it.
			if dc := channels[defaultChannel]; dc != nil && name != defaultChannel {
				if heads := graph.Heads(&dc.ch); len(heads) == 1 && heads[0] != b.Name {
					entry.Replaces, p.from = heads[0], " (the head of the default channel "+defaultChannel+")"
				}
			}
		}
		if c != nil {
			heads := graph.Heads(&c.ch)
			if edges.empty() {
				if len(heads) != 1 {
					return fmt.Errorf("%s: channel %s has %d heads (%s): say which one %s replaces (--replaces)", e.source, name, len(heads), strings.Join(heads, ", "), b.Name)
				}
				entry.Replaces, p.from = heads[0], " (the channel's head)"
			}
			next := c.ch
			next.Entries = append(append([]fbc.ChannelEntry(nil), c.ch.Entries...), entry)
			// A skipRange may cover the other heads: without the other
			// bundles' versions that is for opm validate to judge.
			if h := graph.Heads(&next); len(h) > 1 && entry.SkipRange == "" {
				var others []string
				for _, x := range h {
					if x != b.Name {
						others = append(others, x)
					}
				}
				why := ""
				if from != "" {
					why = fmt.Sprintf(" with the CSV's edges (%s)", describe(edges))
				}
				return fmt.Errorf("%s: adding %s to channel %s%s would leave %d heads (%s): make it replace or skip %s (--replaces %s, or --skips %s)",
					e.source, b.Name, name, why, len(h), strings.Join(h, ", "), strings.Join(others, ", "), others[0], strings.Join(others, ","))
			}
		}
		p.entry = entry
		plans = append(plans, p)
	}
	if !hasImage {
		if err := e.appendItem(entries, []field{scalarField(e.key("schema"), e.quote(fbc.SchemaBundle)), scalarField(e.key("image"), e.quote(b.Image))}); err != nil {
			return err
		}
		e.changes = append(e.changes, fmt.Sprintf("bundle %s (%s) added", b.Name, b.Image))
	}
	for _, p := range plans {
		fields := []field{scalarField(e.key("name"), e.quote(p.entry.Name))}
		if p.entry.Replaces != "" {
			fields = append(fields, scalarField(e.key("replaces"), e.quote(p.entry.Replaces)))
		}
		if len(p.entry.Skips) > 0 {
			f := field{key: e.key("skips"), isList: true}
			for _, s := range p.entry.Skips {
				f.list = append(f.list, e.quote(s))
			}
			fields = append(fields, f)
		}
		if p.entry.SkipRange != "" {
			fields = append(fields, scalarField(e.key("skipRange"), e.quote(p.entry.SkipRange)))
		}
		edges := Edges{Replaces: p.entry.Replaces, Skips: p.entry.Skips, SkipRange: p.entry.SkipRange}
		said := ", no upgrade edge"
		if !edges.empty() {
			said = ", " + describe(edges) + p.from
		}
		if p.c != nil {
			if p.c.entries == nil {
				return fmt.Errorf("%s:%d: channel %s has no entries list; add one (entries: [])", e.source, p.c.node.Line, p.name)
			}
			if err := e.appendItem(p.c.entries, fields); err != nil {
				return err
			}
			e.changes = append(e.changes, fmt.Sprintf("channel %s: entry %s%s", p.name, b.Name, said))
			continue
		}
		if err := e.newChannel(entries, lastChannel, b.Package, p.name, fields); err != nil {
			return err
		}
		e.changes = append(e.changes, fmt.Sprintf("channel %s created: entry %s%s", p.name, b.Name, said))
	}
	return nil
}

// describe says a set of edges for the user: "replaces a, skips b,c,
// skipRange <1.0.0".
func describe(e Edges) string {
	var parts []string
	if e.Replaces != "" {
		parts = append(parts, "replaces "+e.Replaces)
	}
	if len(e.Skips) > 0 {
		parts = append(parts, "skips "+strings.Join(e.Skips, ","))
	}
	if e.SkipRange != "" {
		parts = append(parts, "skipRange "+e.SkipRange)
	}
	return strings.Join(parts, ", ")
}

// newChannel adds an olm.channel blob holding one entry: after the last
// channel (or at the end of entries), in the file's style.
func (e *editor) newChannel(entries, after *yaml.Node, pkg, name string, entry []field) error {
	fields := []field{
		scalarField(e.key("schema"), e.quote(fbc.SchemaChannel)),
		scalarField(e.key("package"), e.quote(pkg)),
		scalarField(e.key("name"), e.quote(name)),
		{key: e.key("entries"), isList: true, items: [][]field{entry}},
	}
	if after == nil || entries.Style&yaml.FlowStyle != 0 {
		return e.appendItem(entries, fields)
	}
	// Append after the last channel: as appendItem does, but at that item.
	tmp := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{after}}
	return e.appendItem(tmp, fields)
}

// decodeJSON decodes a YAML node as encoding/json would its JSON form
// (the model's field names are JSON's).
func decodeJSON(n *yaml.Node, v any) error {
	var generic any
	if err := n.Decode(&generic); err != nil {
		return err
	}
	data, err := json.Marshal(generic)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func hasEntry(ch fbc.Channel, name string) bool {
	for _, x := range ch.Entries {
		if x.Name == name {
			return true
		}
	}
	return false
}

// semver adds the image to the archetypes' bundle lists.
func (e *editor) semver(root *yaml.Node, b Bundle, opts Options) error {
	if opts.Replaces != "" || len(opts.Skips) > 0 || opts.SkipRange != "" {
		return errors.New(e.source + ": a semver template's edges come from the bundles' versions: --replaces, --skips and --skip-range are for basic templates")
	}
	archs := opts.Channels
	if len(archs) == 0 {
		archs = []string{"candidate"}
	}
	for _, a := range archs {
		if a != "candidate" && a != "fast" && a != "stable" {
			return fmt.Errorf("%s: %q: a semver template's bundles go under candidate, fast or stable", e.source, a)
		}
		arch := mapValue(root, a)
		if arch == nil {
			if e.json || root.Style&yaml.FlowStyle != 0 {
				return fmt.Errorf("%s: the template has no %s: add \"%s\": {\"bundles\": []} first", e.source, a, a)
			}
			// A new archetype at the end of the file.
			text := a + ":\n  bundles:\n" + strings.Repeat(" ", 2+e.seqIndent) + "- image: " + e.quote(b.Image) + "\n"
			e.insertLines(len(e.lines), text)
			e.changes = append(e.changes, fmt.Sprintf("%s: bundle %s (%s) added", a, b.Name, b.Image))
			continue
		}
		list := mapValue(arch, "bundles")
		if list == nil || list.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s:%d: %s.bundles: not a list", e.source, arch.Line, a)
		}
		there := false
		for _, item := range list.Content {
			there = there || scalar(mapValue(item, "image")) == b.Image
		}
		if there {
			continue
		}
		if err := e.appendItem(list, []field{scalarField(e.key("image"), e.quote(b.Image))}); err != nil {
			return err
		}
		e.changes = append(e.changes, fmt.Sprintf("%s: bundle %s (%s) added", a, b.Name, b.Image))
	}
	return nil
}
