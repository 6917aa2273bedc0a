package yamldoc

import (
	"bytes"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// yaml.v3 reads a character at a time through a scanner, a token queue, a
// parser and an event stream: most of what loading a bundle costs. The
// manifests tools write (controller-gen, kubectl, operator-sdk, yq) use a
// small part of YAML: block mappings and sequences, plain and quoted
// scalars, literal and folded block scalars, comments and `---`. parseFast
// reads exactly that part, a line at a time, into the same yaml.Node trees
// yaml.v3 builds (kind, style, tag, value and line of every node), so the
// conversion to values, the ambiguity checks and LineOf are shared code.
// On anything outside that part, or anything it is not sure of, it gives
// up and the file goes through yaml.v3 whole: errors always come from
// yaml.v3. Its scalar scanners follow yaml.v3's rules for folding lines,
// escapes and block scalar indentation; FuzzFastYAML and
// TestFastYAMLMatchesYAMLv3 hold the two paths to the same results.

// fastGiveUp is what the parser panics with to hand the file to yaml.v3.
type fastGiveUp struct{ why string }

// fastMaxDepth bounds nesting on the fast path; deeper files are yaml.v3's
// (and the converter's) to refuse.
const fastMaxDepth = 64

// fastMaxKey is the longest key taken: yaml.v3 refuses simple keys over
// 1024 characters.
const fastMaxKey = 1000

const (
	lineContent = iota
	lineBlank   // only spaces
	lineComment // spaces, then '#'
	lineDocStart
)

type fastLine struct {
	start, end int // src[start:end] is the line without its '\n'
	indent     int // leading spaces
	kind       uint8
}

type fastParser struct {
	src   []byte
	str   string // src as a string: plain scalars are substrings of it
	lines []fastLine
	li    int // the line to look at next
	depth int
	nodes []yaml.Node  // slab the nodes come from
	ptrs  []*yaml.Node // slab the Content slices come from
	kids  []*yaml.Node // children of the collections being read
	buf   []byte       // scratch for scalars that are not verbatim
	tmp   yaml.Node    // for resolving plain scalars' tags
}

// parseFast returns the root nodes of text's documents (empty documents
// left out), or why text is not in the subset it reads.
func parseFast(text []byte) (roots []*yaml.Node, why string) {
	if !fastBytesOK(text) {
		return nil, "tab, carriage return, control character, BOM or line separator"
	}
	p := &fastParser{src: text}
	if why := p.splitLines(); why != "" {
		return nil, why
	}
	defer func() {
		if r := recover(); r != nil {
			g, ok := r.(fastGiveUp)
			if !ok {
				panic(r)
			}
			roots, why = nil, g.why
		}
	}()
	p.str = string(text)
	p.nodes = make([]yaml.Node, 0, len(p.lines)+8)
	for {
		l := p.nextContent()
		if l < 0 {
			break
		}
		if p.lines[l].kind == lineDocStart {
			p.li++
			continue
		}
		root := p.block(p.lines[l].indent)
		if l := p.nextContent(); l >= 0 && p.lines[l].kind != lineDocStart {
			p.giveUp("content after the root collection")
		}
		roots = append(roots, root)
	}
	return roots, ""
}

func (p *fastParser) giveUp(why string) { panic(fastGiveUp{why}) }

// fastBytesOK refuses what the line reader does not handle: tabs, carriage
// returns, control characters, byte order marks, line and paragraph
// separators, NEL and bytes that are not UTF-8.
func fastBytesOK(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		switch asciiClass[c] {
		case 0:
			i++
			continue
		case 1:
			return false
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF ||
			(r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += size
	}
	return true
}

// asciiClass is 0 for the bytes fastBytesOK takes as they are, 1 for
// those it refuses and 2 for the start of a multi-byte character.
var asciiClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = 2
		case (c < 0x20 && c != '\n') || c == 0x7f:
			t[c] = 1
		}
	}
	return t
}()

// splitLines indexes the lines and refuses directives, document end
// markers and anything at the left margin that looks like a marker but is
// not a plain `---`.
func (p *fastParser) splitLines() string {
	src := p.src
	p.lines = make([]fastLine, 0, bytes.Count(src, []byte{'\n'})+1)
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := src[start:end]
		ind := 0
		for ind < len(line) && line[ind] == ' ' {
			ind++
		}
		kind := uint8(lineContent)
		switch {
		case ind == len(line):
			kind = lineBlank
		case line[ind] == '#':
			kind = lineComment
		case ind == 0 && (line[0] == '%' || bytes.HasPrefix(line, []byte("..."))):
			return "directive or document end marker"
		case ind == 0 && bytes.HasPrefix(line, []byte("---")):
			rest := line[3:]
			if len(rest) > 0 && rest[0] != ' ' {
				return "text after ---"
			}
			rest = bytes.TrimLeft(rest, " ")
			if len(rest) > 0 && rest[0] != '#' {
				return "text after ---"
			}
			kind = lineDocStart
		}
		p.lines = append(p.lines, fastLine{start: start, end: end, indent: ind, kind: kind})
		start = end + 1
	}
	return ""
}

// nextContent moves p.li past blank and comment lines and returns it, or
// -1 at the end.
func (p *fastParser) nextContent() int {
	for p.li < len(p.lines) {
		if k := p.lines[p.li].kind; k != lineBlank && k != lineComment {
			return p.li
		}
		p.li++
	}
	return -1
}

func (p *fastParser) line(l int) []byte { return p.src[p.lines[l].start:p.lines[l].end] }

func (p *fastParser) node(kind yaml.Kind, tag string, line int) *yaml.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]yaml.Node, 0, 256)
	}
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	n.Kind, n.Tag, n.Line = kind, tag, line
	return n
}

func (p *fastParser) scalar(style yaml.Style, value string, line int) *yaml.Node {
	tag := "!!str"
	if style == 0 {
		if value == "<<" {
			p.giveUp("merge key") // a merge key
		}
		tag = p.plainTag(value)
	}
	n := p.node(yaml.ScalarNode, tag, line)
	n.Style, n.Value = style, value
	return n
}

// plainFirst classifies the first byte of a plain scalar the way yaml.v3's
// resolver does: 0 for a byte no scalar but a string starts with, 'M' for
// the letters that start the words of its table (true, null, ...: at most
// five bytes), 'X' for what may start a number, '.inf' or '~'.
var plainFirst = func() (t [256]byte) {
	for _, c := range "yYnNtTfFoO" {
		t[c] = 'M'
	}
	for _, c := range "+-.~0123456789" {
		t[c] = 'X'
	}
	return t
}()

// plainTag is the tag yaml.v3 gives a plain scalar. The strings its
// resolver is sure to leave strings skip it; the others go through
// yaml.v3 (Node.ShortTag resolves an untagged scalar).
func (p *fastParser) plainTag(v string) string {
	if v != "" {
		switch plainFirst[v[0]] {
		case 0:
			return "!!str"
		case 'M':
			if len(v) > 5 {
				return "!!str"
			}
		}
	}
	p.tmp.Kind, p.tmp.Style, p.tmp.Tag, p.tmp.Value = yaml.ScalarNode, 0, "", v
	return p.tmp.ShortTag()
}

// content moves the children pushed since mark into a Content slice.
func (p *fastParser) content(mark int) []*yaml.Node {
	k := p.kids[mark:]
	if len(k) == 0 {
		return nil
	}
	if len(p.ptrs) < len(k) {
		p.ptrs = make([]*yaml.Node, max(len(k), 512))
	}
	out := p.ptrs[:len(k):len(k)]
	p.ptrs = p.ptrs[len(k):]
	copy(out, k)
	clear(k)
	p.kids = p.kids[:mark]
	return out
}

func isSeqEntry(line []byte, col int) bool {
	return col < len(line) && line[col] == '-' && (col+1 == len(line) || line[col+1] == ' ')
}

// block reads the mapping or sequence whose first entry starts line p.li
// at column ind.
func (p *fastParser) block(ind int) *yaml.Node {
	if p.depth++; p.depth > fastMaxDepth {
		p.giveUp("nesting too deep")
	}
	var n *yaml.Node
	if isSeqEntry(p.line(p.li), ind) {
		n = p.sequence(ind)
	} else {
		n = p.mapping(ind)
	}
	p.depth--
	return n
}

// mapping reads a block mapping whose keys sit at column m, the first on
// line p.li.
func (p *fastParser) mapping(m int) *yaml.Node {
	n := p.node(yaml.MappingNode, "!!map", p.li+1)
	mark := len(p.kids)
	for first := true; ; first = false {
		if !first {
			l := p.nextContent()
			if l < 0 || p.lines[l].kind == lineDocStart || p.lines[l].indent < m {
				break
			}
			if p.lines[l].indent > m {
				p.giveUp("mapping key indented past its mapping")
			}
		}
		key, after, ok := p.key(m, false)
		if !ok {
			p.giveUp("not a simple key")
		}
		p.kids = append(p.kids, key)
		p.kids = append(p.kids, p.value(after, m, true))
	}
	n.Content = p.content(mark)
	return n
}

// sequence reads a block sequence whose dashes sit at column d, the first
// on line p.li.
func (p *fastParser) sequence(d int) *yaml.Node {
	n := p.node(yaml.SequenceNode, "!!seq", p.li+1)
	mark := len(p.kids)
	for first := true; ; first = false {
		if !first {
			l := p.nextContent()
			if l < 0 || p.lines[l].kind == lineDocStart || p.lines[l].indent < d {
				break
			}
			if p.lines[l].indent > d {
				p.giveUp("sequence entry indented past its sequence")
			}
			if !isSeqEntry(p.line(l), d) {
				break // the next key of the mapping holding an indentless sequence
			}
		}
		line := p.line(p.li)
		i := d + 1
		for i < len(line) && line[i] == ' ' {
			i++
		}
		switch {
		case i == len(line) || line[i] == '#':
			p.kids = append(p.kids, p.value(d+1, d, false))
		case isSeqEntry(line, i):
			p.giveUp("nested sequence on one line") // "- - a"
		default:
			if _, _, ok := p.key(i, true); ok {
				if p.depth++; p.depth > fastMaxDepth {
					p.giveUp("nesting too deep")
				}
				p.kids = append(p.kids, p.mapping(i))
				p.depth--
			} else {
				p.kids = append(p.kids, p.value(d+1, d, false))
			}
		}
	}
	n.Content = p.content(mark)
	return n
}

// plainStart reports whether a plain scalar may start at line[i] in block
// context.
func plainStart(line []byte, i int) bool {
	switch line[i] {
	case '-', '?', ':':
		return i+1 < len(line) && line[i+1] != ' '
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// key reads the mapping key at column col of line p.li and returns it with
// the offset just after its ':' (ok false when the line holds no simple
// key there). A probe only says whether there is one.
func (p *fastParser) key(col int, probe bool) (*yaml.Node, int, bool) {
	line := p.line(p.li)
	if col >= len(line) {
		return nil, 0, false
	}
	base := p.lines[p.li].start
	switch line[col] {
	case '"', '\'':
		v, end, endLine, ok := p.quoted(base+col, -1)
		if !ok || endLine != p.li {
			return nil, 0, false
		}
		q := end - base
		if q >= len(line) || line[q] != ':' || (q+1 < len(line) && line[q+1] != ' ') || q-col > fastMaxKey {
			return nil, 0, false
		}
		if probe {
			return nil, q + 1, true
		}
		style := yaml.DoubleQuotedStyle
		if line[col] == '\'' {
			style = yaml.SingleQuotedStyle
		}
		return p.scalar(style, v, p.li+1), q + 1, true
	}
	if !plainStart(line, col) {
		return nil, 0, false
	}
	for j := col; j < len(line); j++ {
		switch line[j] {
		case ':':
			if j+1 == len(line) || line[j+1] == ' ' {
				e := j
				for line[e-1] == ' ' {
					e--
				}
				if j-col > fastMaxKey || (e-col == 2 && line[col] == '<' && line[col+1] == '<') {
					return nil, 0, false
				}
				if probe {
					return nil, j + 1, true
				}
				return p.scalar(0, p.str[base+col:base+e], p.li+1), j + 1, true
			}
		case '#':
			if line[j-1] == ' ' {
				return nil, 0, false
			}
		}
	}
	return nil, 0, false
}

// value reads the value that follows an indicator (a mapping's ':' or a
// sequence's '-') ending before line[pos] on line p.li, within a block
// collection whose indentation is coll. A mapping value may be a sequence
// at the mapping's own indentation.
func (p *fastParser) value(pos, coll int, mapValue bool) *yaml.Node {
	line := p.line(p.li)
	lineNo := p.li + 1
	i := pos
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i == len(line) || line[i] == '#' {
		p.li++
		if l := p.nextContent(); l >= 0 && p.lines[l].kind != lineDocStart {
			ind := p.lines[l].indent
			if ind > coll {
				if _, _, key := p.key(ind, true); key || isSeqEntry(p.line(l), ind) {
					return p.block(ind)
				}
				// A scalar on a line of its own ("description:" then
				// its text, indented, on the lines below).
				return p.scalarAt(ind, coll)
			}
			if mapValue && ind == coll && isSeqEntry(p.line(l), ind) {
				if p.depth++; p.depth > fastMaxDepth {
					p.giveUp("nesting too deep")
				}
				n := p.sequence(ind)
				p.depth--
				return n
			}
		}
		return p.scalar(0, "", lineNo)
	}
	return p.scalarAt(i, coll)
}

// scalarAt reads the scalar or flow collection that starts at line[i] of
// line p.li, in a block collection indented by coll.
func (p *fastParser) scalarAt(i, coll int) *yaml.Node {
	line := p.line(p.li)
	lineNo := p.li + 1
	switch line[i] {
	case '|', '>':
		return p.blockScalar(i, coll)
	case '"', '\'':
		v, end, endLine, ok := p.quoted(p.lines[p.li].start+i, coll)
		if !ok {
			p.giveUp("quoted scalar outside the subset")
		}
		p.li = endLine
		p.lineEnd(end - p.lines[endLine].start)
		style := yaml.DoubleQuotedStyle
		if line[i] == '\'' {
			style = yaml.SingleQuotedStyle
		}
		return p.scalar(style, v, lineNo)
	case '[', '{':
		n, e := p.flow(i)
		p.lineEnd(e)
		return n
	}
	if !plainStart(line, i) {
		p.giveUp("indicator starting a value (anchor, alias, tag, reserved)")
	}
	return p.plain(i, coll)
}

// flow reads a flow sequence or mapping that opens at line[i] of line
// p.li and closes on that line, and returns the offset after it. Its
// entries are one-line plain or quoted scalars and nested flow
// collections, with `key: value` pairs in a mapping: what tools write for
// keyword lists and small JSON objects. Anything else is yaml.v3's.
func (p *fastParser) flow(i int) (*yaml.Node, int) {
	if p.depth++; p.depth > fastMaxDepth {
		p.giveUp("nesting too deep")
	}
	line := p.line(p.li)
	isMap := line[i] == '{'
	closer := line[i] + 2 // ']' and '}' follow '[' and '{' by two
	var n *yaml.Node
	if isMap {
		n = p.node(yaml.MappingNode, "!!map", p.li+1)
	} else {
		n = p.node(yaml.SequenceNode, "!!seq", p.li+1)
	}
	n.Style = yaml.FlowStyle
	mark := len(p.kids)
	j := skipSpaces(line, i+1)
	if j < len(line) && line[j] == closer {
		j++
	} else {
		for {
			if isMap {
				key, e := p.flowKey(j)
				p.kids = append(p.kids, key)
				j = skipSpaces(line, e)
			}
			item, e := p.flowItem(j)
			p.kids = append(p.kids, item)
			j = skipSpaces(line, e)
			switch {
			case j >= len(line):
				p.giveUp("flow collection over several lines")
			case line[j] == ',':
				j = skipSpaces(line, j+1)
				if j >= len(line) || line[j] == closer {
					p.giveUp("flow collection over several lines or with an empty entry")
				}
				continue
			case line[j] == closer:
				j++
			default:
				p.giveUp("flow collection outside the subset")
			}
			break
		}
	}
	n.Content = p.content(mark)
	p.depth--
	return n, j
}

func skipSpaces(line []byte, j int) int {
	for j < len(line) && line[j] == ' ' {
		j++
	}
	return j
}

// flowPlainStart reports whether a plain scalar may start at line[j]
// within a flow collection (more strictly than YAML: a '-' must be
// followed by a character that cannot end the scalar).
func flowPlainStart(line []byte, j int) bool {
	if line[j] == '-' {
		return j+1 < len(line) && !bytes.ContainsRune([]byte(" ,[]{}#:?"), rune(line[j+1]))
	}
	return plainStart(line, j)
}

// flowItem reads a scalar or nested flow collection at line[j] within a
// flow collection and returns it with the offset after it.
func (p *fastParser) flowItem(j int) (*yaml.Node, int) {
	line := p.line(p.li)
	if j >= len(line) {
		p.giveUp("flow collection over several lines")
	}
	base := p.lines[p.li].start
	switch line[j] {
	case '[', '{':
		return p.flow(j)
	case '"', '\'':
		v, end, _, ok := p.quoted(base+j, -1)
		if !ok {
			p.giveUp("quoted scalar outside the subset")
		}
		e := end - base
		if e < len(line) && line[e] == ':' {
			p.giveUp("single-pair mapping in a flow sequence")
		}
		style := yaml.DoubleQuotedStyle
		if line[j] == '\'' {
			style = yaml.SingleQuotedStyle
		}
		return p.scalar(style, v, p.li+1), e
	}
	if !flowPlainStart(line, j) {
		p.giveUp("indicator in a flow collection")
	}
	k := j
	for ; k < len(line); k++ {
		c := line[k]
		if c == ',' || c == '[' || c == ']' || c == '{' || c == '}' {
			break
		}
		if c == ':' || c == '?' || (c == '#' && line[k-1] == ' ') {
			p.giveUp("':', '?' or a comment in a flow scalar")
		}
	}
	if k == len(line) {
		p.giveUp("flow collection over several lines")
	}
	e := k
	for line[e-1] == ' ' {
		e--
	}
	return p.scalar(0, p.str[base+j:base+e], p.li+1), k
}

// flowKey reads the key of a flow mapping entry at line[j] and returns it
// with the offset after its ':'.
func (p *fastParser) flowKey(j int) (*yaml.Node, int) {
	line := p.line(p.li)
	if j >= len(line) {
		p.giveUp("flow collection over several lines")
	}
	base := p.lines[p.li].start
	switch line[j] {
	case '"', '\'':
		v, end, _, ok := p.quoted(base+j, -1)
		e := end - base
		if !ok || e >= len(line) || line[e] != ':' || e-j > fastMaxKey {
			p.giveUp("flow mapping key outside the subset")
		}
		style := yaml.DoubleQuotedStyle
		if line[j] == '\'' {
			style = yaml.SingleQuotedStyle
		}
		return p.scalar(style, v, p.li+1), e + 1
	}
	if !flowPlainStart(line, j) {
		p.giveUp("flow mapping key outside the subset")
	}
	for k := j; k < len(line); k++ {
		switch c := line[k]; c {
		case ':':
			if k+1 == len(line) || line[k+1] != ' ' || k-j > fastMaxKey {
				p.giveUp("flow mapping key outside the subset")
			}
			e := k
			for line[e-1] == ' ' {
				e--
			}
			return p.scalar(0, p.str[base+j:base+e], p.li+1), k + 1
		case ',', '[', ']', '{', '}', '?':
			p.giveUp("flow mapping key outside the subset")
		case '#':
			if line[k-1] == ' ' {
				p.giveUp("comment in a flow collection")
			}
		}
	}
	p.giveUp("flow collection over several lines")
	return nil, 0
}

// lineEnd checks that line p.li holds only blanks and a comment from pos
// on, and moves to the next line.
func (p *fastParser) lineEnd(pos int) {
	line := p.line(p.li)
	j := pos
	for j < len(line) && line[j] == ' ' {
		j++
	}
	if j < len(line) && (line[j] != '#' || j == pos) {
		p.giveUp("text after a scalar")
	}
	p.li++
}

// plain reads a plain scalar starting at line[i] of line p.li, with the
// lines that continue it (indented past coll), folded as yaml.v3 folds
// them.
func (p *fastParser) plain(i, coll int) *yaml.Node {
	line := p.line(p.li)
	lineNo := p.li + 1
	base := p.lines[p.li].start
	end, comment := plainEnd(line, i)
	if end < 0 {
		p.giveUp(`": " in a plain scalar`)
	}
	p.li++
	first := p.str[base+i : base+end]
	if comment {
		return p.scalar(0, first, lineNo)
	}
	var b []byte
	for {
		k, breaks := p.li, 0
		for k < len(p.lines) && p.lines[k].kind == lineBlank {
			k++
			breaks++
		}
		if k == len(p.lines) || p.lines[k].indent < coll+1 || p.lines[k].kind == lineComment {
			break
		}
		next := p.line(k)
		e, comment := plainEnd(next, p.lines[k].indent)
		if e < 0 || comment {
			p.giveUp(`plain scalar continuation holding ": " or a comment`)
		}
		if b == nil {
			b = append(p.buf[:0], first...)
		}
		if breaks == 0 {
			b = append(b, ' ')
		}
		for range breaks {
			b = append(b, '\n')
		}
		b = append(b, next[p.lines[k].indent:e]...)
		p.li = k + 1
	}
	if b == nil {
		return p.scalar(0, first, lineNo)
	}
	p.buf = b
	return p.scalar(0, string(b), lineNo)
}

// plainEnd returns where the plain scalar text starting at line[i] ends
// (trailing blanks left out) and whether a comment follows it, or -1 when
// the line holds a ": " yaml.v3 would take for a mapping value.
func plainEnd(line []byte, i int) (int, bool) {
	j := i
	comment := false
scan:
	for ; j < len(line); j++ {
		switch line[j] {
		case ':':
			if j+1 == len(line) || line[j+1] == ' ' {
				return -1, false
			}
		case '#':
			if line[j-1] == ' ' {
				comment = true
				break scan
			}
		}
	}
	for j > i && line[j-1] == ' ' {
		j--
	}
	return j, comment
}

// quoted reads the single- or double-quoted scalar whose opening quote is
// at src[start], folding and unescaping as yaml.v3 does. It returns the
// value, the offset after the closing quote and the line that holds it.
// With coll < 0 the scalar must end on its first line; otherwise its
// continuation lines must be indented past coll. ok is false for anything
// else (an unknown escape, the end of the text, a line indented too
// little).
func (p *fastParser) quoted(start, coll int) (string, int, int, bool) {
	src := p.src
	single := src[start] == '\''
	l := p.li
	pos := start + 1
	// The common case: no escapes and no line break before the closing quote.
	for j := pos; j < len(src); j++ {
		c := src[j]
		if c == '\n' || c == '\\' && !single {
			break
		}
		if single && c == '\'' {
			if j+1 < len(src) && src[j+1] == '\'' {
				break
			}
			return p.str[pos:j], j + 1, l, true
		}
		if !single && c == '"' {
			return p.str[pos:j], j + 1, l, true
		}
	}
	s := p.buf[:0]
	var ws []byte
	for {
		if pos >= len(src) {
			return "", 0, 0, false
		}
		leadingBlanks := false
		for pos < len(src) && src[pos] != ' ' && src[pos] != '\n' {
			c := src[pos]
			if single {
				if c == '\'' {
					if pos+1 < len(src) && src[pos+1] == '\'' {
						s = append(s, '\'')
						pos += 2
						continue
					}
					break
				}
				s = append(s, c)
				pos++
				continue
			}
			if c == '"' {
				break
			}
			if c != '\\' {
				s = append(s, c)
				pos++
				continue
			}
			if pos+1 >= len(src) {
				return "", 0, 0, false
			}
			if src[pos+1] == '\n' { // an escaped line break
				if coll < 0 {
					return "", 0, 0, false
				}
				pos += 2
				l++
				leadingBlanks = true
				break
			}
			codeLen := 0
			switch src[pos+1] {
			case '0':
				s = append(s, 0)
			case 'a':
				s = append(s, '\a')
			case 'b':
				s = append(s, '\b')
			case 't':
				s = append(s, '\t')
			case 'n':
				s = append(s, '\n')
			case 'v':
				s = append(s, '\v')
			case 'f':
				s = append(s, '\f')
			case 'r':
				s = append(s, '\r')
			case 'e':
				s = append(s, 0x1b)
			case ' ':
				s = append(s, ' ')
			case '"':
				s = append(s, '"')
			case '\'':
				s = append(s, '\'')
			case '\\':
				s = append(s, '\\')
			case 'N':
				s = append(s, "\u0085"...)
			case '_':
				s = append(s, "\u00a0"...)
			case 'L':
				s = append(s, "\u2028"...)
			case 'P':
				s = append(s, "\u2029"...)
			case 'x':
				codeLen = 2
			case 'u':
				codeLen = 4
			case 'U':
				codeLen = 8
			default:
				return "", 0, 0, false
			}
			pos += 2
			if codeLen > 0 {
				if pos+codeLen > len(src) {
					return "", 0, 0, false
				}
				v := 0
				for k := range codeLen {
					h := hexVal(src[pos+k])
					if h < 0 {
						return "", 0, 0, false
					}
					v = v<<4 + h
				}
				if (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF {
					return "", 0, 0, false
				}
				s = utf8.AppendRune(s, rune(v))
				pos += codeLen
			}
		}
		if pos < len(src) && (single && src[pos] == '\'' || !single && src[pos] == '"') {
			break
		}
		// Blanks and line breaks.
		ws = ws[:0]
		leadingBreak, trailingBreaks := false, 0
		for pos < len(src) && (src[pos] == ' ' || src[pos] == '\n') {
			if src[pos] == ' ' {
				if !leadingBlanks {
					ws = append(ws, ' ')
				}
				pos++
				continue
			}
			if coll < 0 {
				return "", 0, 0, false
			}
			pos++
			l++
			if !leadingBlanks {
				ws = ws[:0]
				leadingBreak, leadingBlanks = true, true
			} else {
				trailingBreaks++
			}
		}
		if leadingBlanks {
			// A line that goes on must be indented past its collection.
			if pos >= len(src) || pos-p.lines[l].start < coll+1 {
				return "", 0, 0, false
			}
			if leadingBreak && trailingBreaks == 0 {
				s = append(s, ' ')
			}
			for range trailingBreaks {
				s = append(s, '\n')
			}
		} else {
			s = append(s, ws...)
		}
	}
	p.buf = s
	return string(s), pos + 1, l, true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// blockScalar reads the literal or folded scalar whose indicator is at
// line[i] of line p.li, in a collection indented by coll, as yaml.v3 does:
// the content's indentation is the first non-empty line's (or more, when
// an empty line before it is longer), lines fold in a folded scalar unless
// they start with a blank, and the chomping indicator decides the trailing
// line breaks.
func (p *fastParser) blockScalar(i, coll int) *yaml.Node {
	line := p.line(p.li)
	lineNo := p.li + 1
	literal := line[i] == '|'
	j := i + 1
	chomp, increment := 0, 0
	for k := 0; k < 2 && j < len(line); k++ {
		switch c := line[j]; {
		case chomp == 0 && (c == '+' || c == '-'):
			chomp = 1
			if c == '-' {
				chomp = -1
			}
		case increment == 0 && c >= '1' && c <= '9':
			increment = int(c - '0')
		case c == '0':
			p.giveUp("block scalar indentation indicator 0")
		default:
			k = 2
			continue
		}
		j++
	}
	p.lineEnd(j)
	if p.li >= len(p.lines) {
		p.giveUp("empty block scalar at the end")
	}
	src := p.src
	pos := p.lines[p.li].start
	// Leading empty lines, and the indentation: the indicator's, or the
	// first non-empty line's (or more, when an empty line before it is
	// longer).
	indent := 0
	if increment > 0 {
		indent = coll + increment
	}
	trailingBreaks, maxIndent, col := 0, 0, 0
	for {
		col = 0
		for (indent == 0 || col < indent) && pos < len(src) && src[pos] == ' ' {
			pos++
			col++
		}
		maxIndent = max(maxIndent, col)
		if pos < len(src) && src[pos] == '\n' {
			trailingBreaks++
			pos++
			continue
		}
		break
	}
	if indent == 0 {
		indent = max(maxIndent, coll+1, 1)
	}
	s := p.buf[:0]
	leadingBreak, leadingBlank, lines := false, false, 0
	for col == indent && pos < len(src) {
		trailingBlank := src[pos] == ' '
		if !literal && !leadingBlank && !trailingBlank && leadingBreak {
			if trailingBreaks == 0 {
				s = append(s, ' ')
			}
		} else if leadingBreak {
			s = append(s, '\n')
		}
		for range trailingBreaks {
			s = append(s, '\n')
		}
		trailingBreaks = 0
		leadingBlank = trailingBlank
		e := bytes.IndexByte(src[pos:], '\n')
		if e < 0 {
			e = len(src)
		} else {
			e += pos
		}
		s = append(s, src[pos:e]...)
		pos = e
		leadingBreak = false
		if pos < len(src) {
			leadingBreak = true
			pos++
		}
		lines++
		for {
			col = 0
			for col < indent && pos < len(src) && src[pos] == ' ' {
				pos++
				col++
			}
			if pos < len(src) && src[pos] == '\n' {
				trailingBreaks++
				pos++
				continue
			}
			break
		}
	}
	if lines == 0 {
		p.giveUp("empty block scalar")
	}
	if chomp != -1 && leadingBreak {
		s = append(s, '\n')
	}
	if chomp == 1 {
		for range trailingBreaks {
			s = append(s, '\n')
		}
	}
	p.buf = s
	if pos >= len(src) {
		p.li = len(p.lines)
	}
	for p.li < len(p.lines) && pos > p.lines[p.li].end {
		p.li++
	}
	style := yaml.FoldedStyle
	if literal {
		style = yaml.LiteralStyle
	}
	return p.scalar(style, string(s), lineNo)
}
