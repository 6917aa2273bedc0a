package resolve

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/blang/semver/v4"
)

// This file holds the part of CEL that olm.constraint rules use: one
// variable, properties (a list of {type, value} maps), literals, the
// operators, member and index access, the macros has, exists, all and
// exists_one, and the functions size, contains, startsWith, endsWith,
// matches, int, double, string and OLM's semver_compare. A rule outside
// it fails to compile, as a rule that does not type-check fails in OLM.

// celProgram is a compiled rule.
type celProgram struct{ root celNode }

// matches evaluates the rule for one entry's properties: true only when it
// evaluates to true (an evaluation error is false, as in OLM).
func (p *celProgram) matches(properties []any) bool {
	v, err := p.root.eval(celEnv{vars: map[string]any{"properties": properties}})
	if err != nil {
		return false
	}
	b, ok := v.(bool)
	return ok && b
}

// packageHint finds, for the common shape of OLM's rules (an exists over
// properties, at the top or in a top-level &&, whose body's && requires
// p.value.packageName == "NAME"), the NAME every match must have on one of
// its properties; "" when the rule has no such shape. Only entries with
// such a property need evaluating.
func (p *celProgram) packageHint() string {
	for _, c := range conjuncts(p.root) {
		ex, ok := c.(*celComprehension)
		if !ok || ex.kind != "exists" {
			continue
		}
		if id, ok := ex.over.(*celIdent); !ok || id.name != "properties" {
			continue
		}
		for _, b := range conjuncts(ex.body) {
			eq, ok := b.(*celBinary)
			if !ok || eq.op != "==" {
				continue
			}
			for _, side := range [2][2]celNode{{eq.l, eq.r}, {eq.r, eq.l}} {
				lit, ok := side[1].(*celLit)
				if !ok || !selectsPackageName(side[0], ex.v) {
					continue
				}
				if name, ok := lit.v.(string); ok {
					return name
				}
			}
		}
	}
	return ""
}

// conjuncts flattens a tree of &&.
func conjuncts(n celNode) []celNode {
	if b, ok := n.(*celBinary); ok && b.op == "&&" {
		return append(conjuncts(b.l), conjuncts(b.r)...)
	}
	return []celNode{n}
}

// selectsPackageName: n is v.value.packageName.
func selectsPackageName(n celNode, v string) bool {
	s1, ok := n.(*celSelect)
	if !ok || s1.field != "packageName" {
		return false
	}
	s2, ok := s1.x.(*celSelect)
	if !ok || s2.field != "value" {
		return false
	}
	id, ok := s2.x.(*celIdent)
	return ok && id.name == v
}

// maxCELRule bounds a rule's length and nesting, so that a hostile catalog
// cannot make the parser recurse without end.
const (
	maxCELRule  = 1 << 16
	maxCELDepth = 200
)

// compileCEL parses and checks a rule: it must be a boolean expression
// over properties.
func compileCEL(rule string) (*celProgram, error) {
	if len(rule) > maxCELRule {
		return nil, fmt.Errorf("rule is %d bytes, more than %d", len(rule), maxCELRule)
	}
	toks, err := celLex(rule)
	if err != nil {
		return nil, err
	}
	p := &celParser{toks: toks}
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tEOF {
		return nil, fmt.Errorf("unexpected %s at offset %d", p.peek(), p.peek().pos)
	}
	t, err := n.check(map[string]celType{"properties": tList})
	if err != nil {
		return nil, err
	}
	if t != tBool {
		return nil, fmt.Errorf("the rule is of type %s; a constraint's rule must be a bool", t)
	}
	return &celProgram{root: n}, nil
}

// Lexer.

type celTokKind int

const (
	tEOF celTokKind = iota
	tIdent
	tInt
	tUint
	tDouble
	tString
	tOp
)

type celTok struct {
	kind celTokKind
	text string // identifier, operator, or the decoded string
	num  float64
	i    int64
	u    uint64
	pos  int
}

func (t celTok) String() string {
	switch t.kind {
	case tEOF:
		return "end of rule"
	case tString:
		return strconv.Quote(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

var celOps = []string{"&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",", "(", ")", "[", "]", "{", "}"}

func celLex(s string) ([]celTok, error) {
	var out []celTok
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case isIdentStart(c):
			j := i
			for j < len(s) && (isIdentStart(s[j]) || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			word := s[i:j]
			// r"..." and b"..." prefixes.
			if j < len(s) && (s[j] == '"' || s[j] == '\'') && (word == "r" || word == "R" || word == "b" || word == "B" || word == "rb" || word == "br") {
				if strings.ContainsAny(word, "bB") {
					return nil, fmt.Errorf("bytes literals are not supported (offset %d)", i)
				}
				str, n, err := lexString(s[j:], true)
				if err != nil {
					return nil, fmt.Errorf("offset %d: %w", j, err)
				}
				out = append(out, celTok{kind: tString, text: str, pos: i})
				i = j + n
				continue
			}
			out = append(out, celTok{kind: tIdent, text: word, pos: i})
			i = j
			continue
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'):
			t, n, err := lexNumber(s[i:])
			if err != nil {
				return nil, fmt.Errorf("offset %d: %w", i, err)
			}
			t.pos = i
			out = append(out, t)
			i += n
			continue
		case c == '"' || c == '\'':
			str, n, err := lexString(s[i:], false)
			if err != nil {
				return nil, fmt.Errorf("offset %d: %w", i, err)
			}
			out = append(out, celTok{kind: tString, text: str, pos: i})
			i += n
			continue
		}
		matched := false
		for _, op := range celOps {
			if strings.HasPrefix(s[i:], op) {
				out = append(out, celTok{kind: tOp, text: op, pos: i})
				i += len(op)
				matched = true
				break
			}
		}
		if !matched {
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, fmt.Errorf("unexpected character %q at offset %d", r, i)
		}
	}
	return append(out, celTok{kind: tEOF, pos: len(s)}), nil
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func lexNumber(s string) (celTok, int, error) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		j := 2
		for j < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
			j++
		}
		if j < len(s) && (s[j] == 'u' || s[j] == 'U') {
			u, err := strconv.ParseUint(s[2:j], 16, 64)
			if err != nil {
				return celTok{}, 0, fmt.Errorf("bad number %q", s[:j])
			}
			return celTok{kind: tUint, u: u, text: s[:j+1]}, j + 1, nil
		}
		i, err := strconv.ParseInt(s[2:j], 16, 64)
		if err != nil {
			return celTok{}, 0, fmt.Errorf("bad number %q", s[:j])
		}
		return celTok{kind: tInt, i: i, text: s[:j]}, j, nil
	}
	j := 0
	isDouble := false
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j < len(s) && s[j] == '.' && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9' {
		isDouble = true
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && s[k] >= '0' && s[k] <= '9' {
			isDouble = true
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			j = k
		}
	}
	text := s[:j]
	if isDouble {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return celTok{}, 0, fmt.Errorf("bad number %q", text)
		}
		return celTok{kind: tDouble, num: f, text: text}, j, nil
	}
	if j < len(s) && (s[j] == 'u' || s[j] == 'U') {
		u, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return celTok{}, 0, fmt.Errorf("bad number %q", text)
		}
		return celTok{kind: tUint, u: u, text: s[:j+1]}, j + 1, nil
	}
	i, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return celTok{}, 0, fmt.Errorf("integer %q out of range", text)
	}
	return celTok{kind: tInt, i: i, text: text}, j, nil
}

// lexString reads a quoted string at the start of s (single, double or
// triple quotes); raw strings keep backslashes.
func lexString(s string, raw bool) (string, int, error) {
	q := s[:1]
	if strings.HasPrefix(s, q+q+q) {
		q = q + q + q
	}
	var b strings.Builder
	i := len(q)
	for {
		if i >= len(s) {
			return "", 0, errors.New("unterminated string")
		}
		if strings.HasPrefix(s[i:], q) {
			return b.String(), i + len(q), nil
		}
		c := s[i]
		if len(q) == 1 && (c == '\n' || c == '\r') {
			return "", 0, errors.New("newline in string")
		}
		if c != '\\' || raw {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", 0, errors.New("unterminated string")
		}
		e := s[i+1]
		i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\\', '"', '\'', '`', '?':
			b.WriteByte(e)
		case 'x', 'X', 'u', 'U':
			n := map[byte]int{'x': 2, 'X': 2, 'u': 4, 'U': 8}[e]
			if i+n > len(s) {
				return "", 0, errors.New("short escape in string")
			}
			v, err := strconv.ParseUint(s[i:i+n], 16, 32)
			if err != nil || v > utf8.MaxRune || (v >= 0xD800 && v < 0xE000) {
				return "", 0, fmt.Errorf("bad escape \\%c%s", e, s[i:i+n])
			}
			b.WriteRune(rune(v))
			i += n
		default:
			if e >= '0' && e <= '3' && i+1 < len(s) {
				v, err := strconv.ParseUint(s[i-1:i+2], 8, 32)
				if err != nil {
					return "", 0, errors.New("bad octal escape")
				}
				b.WriteRune(rune(v))
				i += 2
				continue
			}
			return "", 0, fmt.Errorf("bad escape \\%c", e)
		}
	}
}

// Parser.

type celParser struct {
	toks  []celTok
	i     int
	depth int
}

func (p *celParser) peek() celTok { return p.toks[p.i] }

func (p *celParser) next() celTok {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *celParser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == op
}

func (p *celParser) want(op string) error {
	if !p.isOp(op) {
		return fmt.Errorf("expected %q at offset %d, found %s", op, p.peek().pos, p.peek())
	}
	p.next()
	return nil
}

func (p *celParser) enter() error {
	p.depth++
	if p.depth > maxCELDepth {
		return fmt.Errorf("rule nests more than %d deep", maxCELDepth)
	}
	return nil
}

func (p *celParser) expr() (celNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	c, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if !p.isOp("?") {
		return c, nil
	}
	p.next()
	a, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if err := p.want(":"); err != nil {
		return nil, err
	}
	b, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &celCond{c, a, b}, nil
}

// Binary operator levels, loosest first.
var celLevels = [][]string{
	{"||"},
	{"&&"},
	{"==", "!=", "<", "<=", ">", ">=", "in"},
	{"+", "-"},
	{"*", "/", "%"},
}

func (p *celParser) binary(level int) (celNode, error) {
	if level == len(celLevels) {
		return p.unary()
	}
	left, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op := ""
		for _, o := range celLevels[level] {
			if (t.kind == tOp && t.text == o) || (o == "in" && t.kind == tIdent && t.text == "in") {
				op = o
				break
			}
		}
		if op == "" {
			return left, nil
		}
		p.next()
		right, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		left = &celBinary{op: op, l: left, r: right}
	}
}

func (p *celParser) unary() (celNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if p.isOp("!") || p.isOp("-") {
		op := p.next().text
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if op == "-" {
			if lit, ok := x.(*celLit); ok {
				switch v := lit.v.(type) {
				case int64:
					return &celLit{-v}, nil
				case float64:
					return &celLit{-v}, nil
				}
			}
		}
		return &celUnary{op: op, x: x}, nil
	}
	return p.member()
}

func (p *celParser) member() (celNode, error) {
	n, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("."):
			p.next()
			t := p.next()
			if t.kind != tIdent {
				return nil, fmt.Errorf("expected a field name at offset %d, found %s", t.pos, t)
			}
			if p.isOp("(") {
				p.next()
				args, err := p.args(")")
				if err != nil {
					return nil, err
				}
				n, err = newCall(t.text, n, args)
				if err != nil {
					return nil, err
				}
				continue
			}
			n = &celSelect{x: n, field: t.text}
		case p.isOp("["):
			p.next()
			idx, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.want("]"); err != nil {
				return nil, err
			}
			n = &celIndex{x: n, i: idx}
		default:
			return n, nil
		}
	}
}

func (p *celParser) args(end string) ([]celNode, error) {
	var out []celNode
	if p.isOp(end) {
		p.next()
		return out, nil
	}
	for {
		a, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		if p.isOp(",") {
			p.next()
			if p.isOp(end) { // trailing comma
				p.next()
				return out, nil
			}
			continue
		}
		if err := p.want(end); err != nil {
			return nil, err
		}
		return out, nil
	}
}

func (p *celParser) primary() (celNode, error) {
	t := p.next()
	switch t.kind {
	case tInt:
		return &celLit{t.i}, nil
	case tUint:
		return &celLit{t.u}, nil
	case tDouble:
		return &celLit{t.num}, nil
	case tString:
		return &celLit{t.text}, nil
	case tIdent:
		switch t.text {
		case "true":
			return &celLit{true}, nil
		case "false":
			return &celLit{false}, nil
		case "null":
			return &celLit{nil}, nil
		}
		if p.isOp("(") {
			p.next()
			args, err := p.args(")")
			if err != nil {
				return nil, err
			}
			return newCall(t.text, nil, args)
		}
		return &celIdent{t.text}, nil
	case tOp:
		switch t.text {
		case "(":
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			return e, p.want(")")
		case "[":
			items, err := p.args("]")
			if err != nil {
				return nil, err
			}
			return &celList{items}, nil
		case "{":
			var keys, vals []celNode
			if p.isOp("}") {
				p.next()
				return &celMap{keys, vals}, nil
			}
			for {
				k, err := p.expr()
				if err != nil {
					return nil, err
				}
				if err := p.want(":"); err != nil {
					return nil, err
				}
				v, err := p.expr()
				if err != nil {
					return nil, err
				}
				keys, vals = append(keys, k), append(vals, v)
				if p.isOp(",") {
					p.next()
					if p.isOp("}") {
						p.next()
						return &celMap{keys, vals}, nil
					}
					continue
				}
				return &celMap{keys, vals}, p.want("}")
			}
		case ".":
			// A leading dot names a root identifier.
			id := p.next()
			if id.kind != tIdent {
				return nil, fmt.Errorf("expected an identifier at offset %d", id.pos)
			}
			return &celIdent{id.text}, nil
		}
	}
	return nil, fmt.Errorf("unexpected %s at offset %d", t, t.pos)
}

// newCall builds a function call, a method call (target set) or a macro.
func newCall(name string, target celNode, args []celNode) (celNode, error) {
	switch name {
	case "has":
		if target != nil || len(args) != 1 {
			return nil, errors.New("has() takes one field selection")
		}
		sel, ok := args[0].(*celSelect)
		if !ok {
			return nil, errors.New("has() takes a field selection such as has(p.value.version)")
		}
		return &celHas{sel}, nil
	case "exists", "all", "exists_one":
		if target == nil || len(args) != 2 {
			return nil, fmt.Errorf("%s() is a macro: list.%s(x, predicate)", name, name)
		}
		v, ok := args[0].(*celIdent)
		if !ok {
			return nil, fmt.Errorf("%s(): the first argument must be a variable name", name)
		}
		return &celComprehension{kind: name, over: target, v: v.name, body: args[1]}, nil
	}
	want := map[string][2]int{
		"size": {0, 1}, "contains": {1, 1}, "startsWith": {1, 1}, "endsWith": {1, 1}, "matches": {1, 1},
		"int": {0, 1}, "double": {0, 1}, "string": {0, 1}, "semver_compare": {0, 2},
	}
	n, ok := want[name]
	if !ok {
		return nil, fmt.Errorf("undeclared reference to function %q", name)
	}
	methodArgs, globalArgs := n[0], n[1]
	switch name {
	case "size", "matches", "contains", "startsWith", "endsWith":
		// size is both a method and a function; the string functions are
		// methods, matches both.
		if name == "size" && target == nil && len(args) == 1 {
			return &celCall{name: name, args: args}, nil
		}
		if name == "matches" && target == nil && len(args) == 2 {
			return &celCall{name: name, args: args}, nil
		}
	}
	if target != nil {
		if len(args) != methodArgs || name == "int" || name == "double" || name == "string" || name == "semver_compare" {
			return nil, fmt.Errorf("no method %s taking %d arguments", name, len(args))
		}
		return &celCall{name: name, args: append([]celNode{target}, args...)}, nil
	}
	if len(args) != globalArgs || name == "contains" || name == "startsWith" || name == "endsWith" {
		return nil, fmt.Errorf("no function %s taking %d arguments", name, len(args))
	}
	return &celCall{name: name, args: args}, nil
}

// Types for the check: dyn when not known until evaluation.

type celType string

const (
	tDyn   celType = "dyn"
	tBool  celType = "bool"
	tIntT  celType = "int"
	tUintT celType = "uint"
	tDblT  celType = "double"
	tStr   celType = "string"
	tNull  celType = "null_type"
	tList  celType = "list"
	tMap   celType = "map"
)

func known(t celType) bool { return t != tDyn }

// AST and evaluation.

// celEnv binds names: a comprehension's variable over the enclosing
// bindings.
type celEnv struct {
	vars   map[string]any
	name   string
	value  any
	parent *celEnv
}

func (e celEnv) with(name string, v any) celEnv {
	return celEnv{name: name, value: v, parent: &e}
}

func (e celEnv) lookup(name string) (any, bool) {
	for cur := &e; cur != nil; cur = cur.parent {
		if cur.vars != nil {
			v, ok := cur.vars[name]
			return v, ok
		}
		if cur.name == name {
			return cur.value, true
		}
	}
	return nil, false
}

type celNode interface {
	eval(env celEnv) (any, error)
	check(vars map[string]celType) (celType, error)
}

type celLit struct{ v any }

func (n *celLit) eval(celEnv) (any, error) { return n.v, nil }

func (n *celLit) check(map[string]celType) (celType, error) { return typeOf(n.v), nil }

func typeOf(v any) celType {
	switch v.(type) {
	case bool:
		return tBool
	case int64:
		return tIntT
	case uint64:
		return tUintT
	case float64:
		return tDblT
	case string:
		return tStr
	case nil:
		return tNull
	case []any:
		return tList
	case map[string]any:
		return tMap
	}
	return tDyn
}

type celIdent struct{ name string }

func (n *celIdent) eval(env celEnv) (any, error) {
	v, ok := env.lookup(n.name)
	if !ok {
		return nil, fmt.Errorf("no such attribute %q", n.name)
	}
	return v, nil
}

func (n *celIdent) check(vars map[string]celType) (celType, error) {
	t, ok := vars[n.name]
	if !ok {
		return "", fmt.Errorf("undeclared reference to %q", n.name)
	}
	return t, nil
}

type celSelect struct {
	x     celNode
	field string
}

func (n *celSelect) eval(env celEnv) (any, error) {
	x, err := n.x.eval(env)
	if err != nil {
		return nil, err
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no such key %q on %s", n.field, typeOf(x))
	}
	v, ok := m[n.field]
	if !ok {
		return nil, fmt.Errorf("no such key: %s", n.field)
	}
	return v, nil
}

func (n *celSelect) check(vars map[string]celType) (celType, error) {
	t, err := n.x.check(vars)
	if err != nil {
		return "", err
	}
	if known(t) && t != tMap {
		return "", fmt.Errorf("type %s has no field %q", t, n.field)
	}
	return tDyn, nil
}

type celHas struct{ sel *celSelect }

func (n *celHas) eval(env celEnv) (any, error) {
	x, err := n.sel.x.eval(env)
	if err != nil {
		return nil, err
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("has() on %s", typeOf(x))
	}
	_, ok = m[n.sel.field]
	return ok, nil
}

func (n *celHas) check(vars map[string]celType) (celType, error) {
	if _, err := n.sel.check(vars); err != nil {
		return "", err
	}
	return tBool, nil
}

type celIndex struct{ x, i celNode }

func (n *celIndex) eval(env celEnv) (any, error) {
	x, err := n.x.eval(env)
	if err != nil {
		return nil, err
	}
	i, err := n.i.eval(env)
	if err != nil {
		return nil, err
	}
	switch c := x.(type) {
	case []any:
		k, ok := toIndex(i)
		if !ok {
			return nil, fmt.Errorf("list index of type %s", typeOf(i))
		}
		if k < 0 || k >= int64(len(c)) {
			return nil, fmt.Errorf("index %d out of range (size %d)", k, len(c))
		}
		return c[k], nil
	case map[string]any:
		s, ok := i.(string)
		if !ok {
			return nil, fmt.Errorf("no such key %v", i)
		}
		v, ok := c[s]
		if !ok {
			return nil, fmt.Errorf("no such key: %s", s)
		}
		return v, nil
	}
	return nil, fmt.Errorf("cannot index %s", typeOf(x))
}

func toIndex(v any) (int64, bool) {
	switch k := v.(type) {
	case int64:
		return k, true
	case uint64:
		if k > math.MaxInt64 {
			return -1, true
		}
		return int64(k), true
	case float64:
		if k == math.Trunc(k) && math.Abs(k) < 1<<53 {
			return int64(k), true
		}
	}
	return 0, false
}

func (n *celIndex) check(vars map[string]celType) (celType, error) {
	t, err := n.x.check(vars)
	if err != nil {
		return "", err
	}
	if _, err := n.i.check(vars); err != nil {
		return "", err
	}
	if known(t) && t != tList && t != tMap {
		return "", fmt.Errorf("cannot index %s", t)
	}
	if t == tList && vars["properties"] == tList {
		// properties[i] is a map.
		if id, ok := n.x.(*celIdent); ok && id.name == "properties" {
			return tMap, nil
		}
	}
	return tDyn, nil
}

type celList struct{ items []celNode }

func (n *celList) eval(env celEnv) (any, error) {
	out := make([]any, len(n.items))
	for i, it := range n.items {
		v, err := it.eval(env)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (n *celList) check(vars map[string]celType) (celType, error) {
	for _, it := range n.items {
		if _, err := it.check(vars); err != nil {
			return "", err
		}
	}
	return tList, nil
}

type celMap struct{ keys, vals []celNode }

func (n *celMap) eval(env celEnv) (any, error) {
	out := make(map[string]any, len(n.keys))
	for i := range n.keys {
		k, err := n.keys[i].eval(env)
		if err != nil {
			return nil, err
		}
		s, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("map keys other than strings are not supported")
		}
		if _, dup := out[s]; dup {
			return nil, fmt.Errorf("duplicate map key %q", s)
		}
		v, err := n.vals[i].eval(env)
		if err != nil {
			return nil, err
		}
		out[s] = v
	}
	return out, nil
}

func (n *celMap) check(vars map[string]celType) (celType, error) {
	for i := range n.keys {
		t, err := n.keys[i].check(vars)
		if err != nil {
			return "", err
		}
		if known(t) && t != tStr {
			return "", fmt.Errorf("map keys of type %s are not supported", t)
		}
		if _, err := n.vals[i].check(vars); err != nil {
			return "", err
		}
	}
	return tMap, nil
}

type celCond struct{ c, a, b celNode }

func (n *celCond) eval(env celEnv) (any, error) {
	c, err := n.c.eval(env)
	if err != nil {
		return nil, err
	}
	b, ok := c.(bool)
	if !ok {
		return nil, fmt.Errorf("condition of type %s", typeOf(c))
	}
	if b {
		return n.a.eval(env)
	}
	return n.b.eval(env)
}

func (n *celCond) check(vars map[string]celType) (celType, error) {
	c, err := n.c.check(vars)
	if err != nil {
		return "", err
	}
	if known(c) && c != tBool {
		return "", fmt.Errorf("condition of type %s", c)
	}
	a, err := n.a.check(vars)
	if err != nil {
		return "", err
	}
	b, err := n.b.check(vars)
	if err != nil {
		return "", err
	}
	if a == b {
		return a, nil
	}
	if a == tNull || b == tNull || !known(a) || !known(b) {
		return tDyn, nil
	}
	return "", fmt.Errorf("branches of types %s and %s", a, b)
}

type celUnary struct {
	op string
	x  celNode
}

func (n *celUnary) eval(env celEnv) (any, error) {
	x, err := n.x.eval(env)
	if err != nil {
		return nil, err
	}
	if n.op == "!" {
		b, ok := x.(bool)
		if !ok {
			return nil, fmt.Errorf("no such overload: !%s", typeOf(x))
		}
		return !b, nil
	}
	switch v := x.(type) {
	case int64:
		if v == math.MinInt64 {
			return nil, errors.New("integer overflow")
		}
		return -v, nil
	case float64:
		return -v, nil
	}
	return nil, fmt.Errorf("no such overload: -%s", typeOf(x))
}

func (n *celUnary) check(vars map[string]celType) (celType, error) {
	t, err := n.x.check(vars)
	if err != nil {
		return "", err
	}
	if n.op == "!" {
		if known(t) && t != tBool {
			return "", fmt.Errorf("no such overload: !%s", t)
		}
		return tBool, nil
	}
	if known(t) && t != tIntT && t != tDblT {
		return "", fmt.Errorf("no such overload: -%s", t)
	}
	return t, nil
}

type celBinary struct {
	op   string
	l, r celNode
}

func (n *celBinary) eval(env celEnv) (any, error) {
	if n.op == "&&" || n.op == "||" {
		// CEL's logical operators are commutative: an error on one side
		// is absorbed when the other side decides.
		decide := n.op == "||"
		l, lerr := n.l.eval(env)
		lb, lok := l.(bool)
		if lerr == nil && lok && lb == decide {
			return decide, nil
		}
		r, rerr := n.r.eval(env)
		rb, rok := r.(bool)
		if rerr == nil && rok && rb == decide {
			return decide, nil
		}
		if lerr != nil {
			return nil, lerr
		}
		if !lok {
			return nil, fmt.Errorf("no such overload: %s %s", typeOf(l), n.op)
		}
		if rerr != nil {
			return nil, rerr
		}
		if !rok {
			return nil, fmt.Errorf("no such overload: %s %s", n.op, typeOf(r))
		}
		return !decide, nil
	}
	l, err := n.l.eval(env)
	if err != nil {
		return nil, err
	}
	r, err := n.r.eval(env)
	if err != nil {
		return nil, err
	}
	switch n.op {
	case "==":
		return celEqual(l, r), nil
	case "!=":
		return !celEqual(l, r), nil
	case "<", "<=", ">", ">=":
		c, err := celCompare(l, r)
		if err != nil {
			return nil, err
		}
		switch n.op {
		case "<":
			return c < 0, nil
		case "<=":
			return c <= 0, nil
		case ">":
			return c > 0, nil
		}
		return c >= 0, nil
	case "in":
		switch c := r.(type) {
		case []any:
			for _, x := range c {
				if celEqual(l, x) {
					return true, nil
				}
			}
			return false, nil
		case map[string]any:
			s, ok := l.(string)
			if !ok {
				return false, nil
			}
			_, ok = c[s]
			return ok, nil
		}
		return nil, fmt.Errorf("no such overload: %s in %s", typeOf(l), typeOf(r))
	}
	return celArith(n.op, l, r)
}

func (n *celBinary) check(vars map[string]celType) (celType, error) {
	l, err := n.l.check(vars)
	if err != nil {
		return "", err
	}
	r, err := n.r.check(vars)
	if err != nil {
		return "", err
	}
	switch n.op {
	case "&&", "||":
		for _, t := range []celType{l, r} {
			if known(t) && t != tBool {
				return "", fmt.Errorf("no such overload: %s %s", t, n.op)
			}
		}
		return tBool, nil
	case "==", "!=":
		// The checker unifies both sides: two known types must agree.
		if known(l) && known(r) && l != r {
			return "", fmt.Errorf("no such overload: %s %s %s", l, n.op, r)
		}
		return tBool, nil
	case "<", "<=", ">", ">=":
		if known(l) && known(r) {
			if _, err := celCompare(zeroOf(l), zeroOf(r)); err != nil {
				return "", fmt.Errorf("no such overload: %s %s %s", l, n.op, r)
			}
		}
		return tBool, nil
	case "in":
		if known(r) && r != tList && r != tMap {
			return "", fmt.Errorf("no such overload: in %s", r)
		}
		return tBool, nil
	}
	if known(l) && known(r) {
		v, err := celArith(n.op, zeroOf(l), oneOf(r))
		if err != nil {
			return "", fmt.Errorf("no such overload: %s %s %s", l, n.op, r)
		}
		return typeOf(v), nil
	}
	if known(l) && l != tIntT && l != tUintT && l != tDblT && l != tStr && l != tList {
		return "", fmt.Errorf("no such overload: %s %s", l, n.op)
	}
	if known(l) {
		return l, nil
	}
	if known(r) {
		return r, nil
	}
	return tDyn, nil
}

func zeroOf(t celType) any {
	switch t {
	case tBool:
		return false
	case tIntT:
		return int64(0)
	case tUintT:
		return uint64(0)
	case tDblT:
		return float64(0)
	case tStr:
		return ""
	case tList:
		return []any{}
	case tMap:
		return map[string]any{}
	}
	return nil
}

func oneOf(t celType) any {
	switch t {
	case tIntT:
		return int64(1)
	case tUintT:
		return uint64(1)
	case tDblT:
		return float64(1)
	}
	return zeroOf(t)
}

// celEqual is CEL's equality: values of different types are unequal,
// except numbers, which compare by value.
func celEqual(a, b any) bool {
	if x, ok := numeric(a); ok {
		if y, ok := numeric(b); ok {
			return cmpNumbers(a, b, x, y) == 0
		}
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !celEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !celEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

func numeric(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// cmpNumbers compares two numbers exactly where both are integers.
func cmpNumbers(a, b any, x, y float64) int {
	switch p := a.(type) {
	case int64:
		switch q := b.(type) {
		case int64:
			return cmp3(p < q, p > q)
		case uint64:
			if p < 0 {
				return -1
			}
			return cmp3(uint64(p) < q, uint64(p) > q)
		}
	case uint64:
		switch q := b.(type) {
		case uint64:
			return cmp3(p < q, p > q)
		case int64:
			if q < 0 {
				return 1
			}
			return cmp3(p < uint64(q), p > uint64(q))
		}
	}
	if math.IsNaN(x) || math.IsNaN(y) {
		return 2 // unordered: neither equal nor less
	}
	return cmp3(x < y, x > y)
}

func cmp3(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

func celCompare(a, b any) (int, error) {
	if x, ok := numeric(a); ok {
		if y, ok := numeric(b); ok {
			c := cmpNumbers(a, b, x, y)
			if c == 2 {
				return 2, nil
			}
			return c, nil
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp3(!x && y, x && !y), nil
		}
	}
	return 0, fmt.Errorf("no such overload: %s < %s", typeOf(a), typeOf(b))
}

func celArith(op string, a, b any) (any, error) {
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		if !ok {
			break
		}
		switch op {
		case "+":
			r := x + y
			if (r > x) != (y > 0) {
				return nil, errors.New("integer overflow")
			}
			return r, nil
		case "-":
			r := x - y
			if (r < x) != (y > 0) {
				return nil, errors.New("integer overflow")
			}
			return r, nil
		case "*":
			if x != 0 && y != 0 {
				r := x * y
				if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
					return nil, errors.New("integer overflow")
				}
				return r, nil
			}
			return int64(0), nil
		case "/", "%":
			if y == 0 {
				return nil, errors.New("division by zero")
			}
			if x == math.MinInt64 && y == -1 {
				return nil, errors.New("integer overflow")
			}
			if op == "/" {
				return x / y, nil
			}
			return x % y, nil
		}
	case uint64:
		y, ok := b.(uint64)
		if !ok {
			break
		}
		switch op {
		case "+":
			if x+y < x {
				return nil, errors.New("unsigned integer overflow")
			}
			return x + y, nil
		case "-":
			if y > x {
				return nil, errors.New("unsigned integer overflow")
			}
			return x - y, nil
		case "*":
			if x != 0 && (x*y)/x != y {
				return nil, errors.New("unsigned integer overflow")
			}
			return x * y, nil
		case "/", "%":
			if y == 0 {
				return nil, errors.New("division by zero")
			}
			if op == "/" {
				return x / y, nil
			}
			return x % y, nil
		}
	case float64:
		y, ok := b.(float64)
		if !ok {
			break
		}
		switch op {
		case "+":
			return x + y, nil
		case "-":
			return x - y, nil
		case "*":
			return x * y, nil
		case "/":
			return x / y, nil
		}
	case string:
		if y, ok := b.(string); ok && op == "+" {
			return x + y, nil
		}
	case []any:
		if y, ok := b.([]any); ok && op == "+" {
			out := make([]any, 0, len(x)+len(y))
			return append(append(out, x...), y...), nil
		}
	}
	return nil, fmt.Errorf("no such overload: %s %s %s", typeOf(a), op, typeOf(b))
}

type celComprehension struct {
	kind string
	over celNode
	v    string
	body celNode
}

// maxCELIterations bounds nested comprehensions over a bundle's
// properties.
const maxCELIterations = 1 << 20

func (n *celComprehension) eval(env celEnv) (any, error) {
	x, err := n.over.eval(env)
	if err != nil {
		return nil, err
	}
	var items []any
	switch c := x.(type) {
	case []any:
		items = c
	case map[string]any:
		for k := range c {
			items = append(items, k)
		}
	default:
		return nil, fmt.Errorf("%s() over %s", n.kind, typeOf(x))
	}
	if len(items) > maxCELIterations {
		return nil, errors.New("too many iterations")
	}
	count := 0
	var firstErr error
	for _, it := range items {
		v, err := n.body.eval(env.with(n.v, it))
		b, ok := v.(bool)
		if err == nil && !ok {
			err = fmt.Errorf("%s() predicate of type %s", n.kind, typeOf(v))
		}
		if err != nil {
			if n.kind == "exists_one" {
				return nil, err
			}
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		switch n.kind {
		case "exists":
			if b {
				return true, nil
			}
		case "all":
			if !b {
				return false, nil
			}
		default:
			if b {
				count++
			}
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	switch n.kind {
	case "exists":
		return false, nil
	case "all":
		return true, nil
	}
	return count == 1, nil
}

func (n *celComprehension) check(vars map[string]celType) (celType, error) {
	t, err := n.over.check(vars)
	if err != nil {
		return "", err
	}
	if known(t) && t != tList && t != tMap {
		return "", fmt.Errorf("%s() over %s", n.kind, t)
	}
	inner := make(map[string]celType, len(vars)+1)
	for k, v := range vars {
		inner[k] = v
	}
	inner[n.v] = tDyn
	if id, ok := n.over.(*celIdent); ok && id.name == "properties" && vars["properties"] == tList {
		inner[n.v] = tMap
	} else if t == tMap {
		inner[n.v] = tDyn
	}
	bt, err := n.body.check(inner)
	if err != nil {
		return "", err
	}
	if known(bt) && bt != tBool {
		return "", fmt.Errorf("%s() predicate of type %s", n.kind, bt)
	}
	return tBool, nil
}

type celCall struct {
	name string
	args []celNode
}

func (n *celCall) eval(env celEnv) (any, error) {
	vals := make([]any, len(n.args))
	for i, a := range n.args {
		v, err := a.eval(env)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	switch n.name {
	case "size":
		switch x := vals[0].(type) {
		case string:
			return int64(utf8.RuneCountInString(x)), nil
		case []any:
			return int64(len(x)), nil
		case map[string]any:
			return int64(len(x)), nil
		}
	case "contains", "startsWith", "endsWith", "matches":
		s, ok1 := vals[0].(string)
		t, ok2 := vals[1].(string)
		if !ok1 || !ok2 {
			break
		}
		switch n.name {
		case "contains":
			return strings.Contains(s, t), nil
		case "startsWith":
			return strings.HasPrefix(s, t), nil
		case "endsWith":
			return strings.HasSuffix(s, t), nil
		}
		re, err := regexp.Compile(t)
		if err != nil {
			return nil, fmt.Errorf("bad regular expression %q: %w", t, err)
		}
		return re.MatchString(s), nil
	case "int":
		switch x := vals[0].(type) {
		case int64:
			return x, nil
		case uint64:
			if x > math.MaxInt64 {
				return nil, errors.New("integer overflow")
			}
			return int64(x), nil
		case float64:
			if math.IsNaN(x) || x <= math.MinInt64 || x >= math.MaxInt64 {
				return nil, errors.New("integer overflow")
			}
			return int64(x), nil
		case string:
			i, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("cannot convert %q to int", x)
			}
			return i, nil
		}
	case "double":
		switch x := vals[0].(type) {
		case int64:
			return float64(x), nil
		case uint64:
			return float64(x), nil
		case float64:
			return x, nil
		case string:
			f, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return nil, fmt.Errorf("cannot convert %q to double", x)
			}
			return f, nil
		}
	case "string":
		switch x := vals[0].(type) {
		case string:
			return x, nil
		case bool:
			return strconv.FormatBool(x), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case uint64:
			return strconv.FormatUint(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
	case "semver_compare":
		a, err := semverOf(vals[0])
		if err != nil {
			return nil, err
		}
		b, err := semverOf(vals[1])
		if err != nil {
			return nil, err
		}
		return int64(a.Compare(b)), nil
	}
	return nil, fmt.Errorf("no such overload: %s(%s)", n.name, typeNames(vals))
}

// semverOf reads a version the way OLM's semver_compare does: the value
// printed, then parsed tolerantly.
func semverOf(v any) (semver.Version, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		s = "<nil>"
	default:
		s = fmt.Sprint(x)
	}
	sv, err := semver.ParseTolerant(s)
	if err != nil {
		return semver.Version{}, fmt.Errorf("semver_compare: %q is not a version", s)
	}
	return sv, nil
}

func typeNames(vals []any) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(typeOf(v))
	}
	return strings.Join(s, ", ")
}

func (n *celCall) check(vars map[string]celType) (celType, error) {
	ts := make([]celType, len(n.args))
	for i, a := range n.args {
		t, err := a.check(vars)
		if err != nil {
			return "", err
		}
		ts[i] = t
	}
	switch n.name {
	case "size":
		if known(ts[0]) && ts[0] != tStr && ts[0] != tList && ts[0] != tMap {
			return "", fmt.Errorf("no such overload: size(%s)", ts[0])
		}
		return tIntT, nil
	case "contains", "startsWith", "endsWith", "matches":
		for _, t := range ts {
			if known(t) && t != tStr {
				return "", fmt.Errorf("no such overload: %s(%s)", n.name, t)
			}
		}
		if lit, ok := n.args[1].(*celLit); ok && n.name == "matches" {
			if s, ok := lit.v.(string); ok {
				if _, err := regexp.Compile(s); err != nil {
					return "", fmt.Errorf("bad regular expression %q: %w", s, err)
				}
			}
		}
		return tBool, nil
	case "int":
		return tIntT, nil
	case "double":
		return tDblT, nil
	case "string":
		return tStr, nil
	case "semver_compare":
		return tIntT, nil
	}
	return "", fmt.Errorf("undeclared reference to function %q", n.name)
}
