package fbc

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/opmkit/opm/internal/rawjson"
	"github.com/opmkit/opm/internal/yamldoc"
)

// IgnoreFile is the name of the files holding patterns of catalog files to
// skip, relative to the directory they sit in.
const IgnoreFile = ".indexignore"

// LoadError is one problem with a catalog file, at a line when known.
type LoadError struct {
	File string
	Line int
	Msg  string
	// Err, when set, is the cause Msg describes, for errors.Is (ErrChanged).
	Err error
}

// ErrChanged is the cause of a load error for a catalog file that changed
// while the catalog was read: reading it again once nothing writes to it
// may succeed.
var ErrChanged = errors.New("the catalog changed while it was being read")

func (e *LoadError) Unwrap() error { return e.Err }

func (e *LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// LoadErrors splits an error from Load into its *LoadError parts (and any
// others).
func LoadErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// openCatalogRoot opens the catalog directory dir as an os.Root: a symbolic
// link that leads out of dir is then refused (a finding), as bundle
// directories refuse it, instead of followed.
func openCatalogRoot(dir string) (*os.Root, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("load catalog %s: not a directory (give the catalog's root directory)", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	return root, nil
}

// LoadDir loads the catalog in directory dir, within the default Limits.
func LoadDir(dir string) (*Catalog, error) { return LoadDirWith(dir, LoadOptions{}) }

// LoadDirWith is LoadDir with options.
func LoadDirWith(dir string, opts LoadOptions) (*Catalog, error) {
	fsys, closer, err := OpenDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = closer.Close() }() // read-only
	return LoadWith(fsys, opts)
}

// Load reads every JSON (.json: objects back to back) and YAML (.yaml, .yml:
// documents separated by ---) file under fsys, at any depth, except files
// matched by .indexignore patterns. Each object is one blob. Problems are
// collected, each a *LoadError naming the file and line, and returned
// joined together with the blobs that could be read: a caller that needs a
// whole catalog must treat any error as fatal. Files and blobs over the
// default Limits are such problems.
func Load(fsys fs.FS) (*Catalog, error) { return LoadWith(fsys, LoadOptions{}) }

// LoadWith is Load with options.
func LoadWith(fsys fs.FS, opts LoadOptions) (*Catalog, error) {
	return loadWith(fsys, opts, newBudget(opts.Limits.file()), newBlobCount(opts.Limits))
}

// loadWith is LoadWith sharing mem and blobs with the rest of a reading
// (LoadEachWith reads each part of a catalog with it).
func loadWith(fsys fs.FS, opts LoadOptions, mem *budget, blobs *blobCount) (*Catalog, error) {
	lim := opts.Limits
	c := &Catalog{}
	var errs []error
	files, ignored := catalogFiles(fsys, func(err error) { errs = append(errs, err) })
	c.Ignored = append(c.Ignored, ignored...)
	// Parse the files in parallel, each into its own catalog, and merge
	// them in walk order so the result does not depend on scheduling.
	parts := make([]*Catalog, len(files))
	partErrs := make([][]error, len(files))
	workers := runtime.GOMAXPROCS(0)
	if workers > len(files) {
		workers = len(files)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				part := &Catalog{}
				parts[i] = part
				if blobs.full() {
					continue // reported where it was passed
				}
				data, held, err := readFile(fsys, files[i], lim, mem)
				if err != nil {
					partErrs[i] = []error{err}
				} else {
					partErrs[i] = part.loadFileWithin(files[i], data, opts, blobs)
					mem.release(held)
				}
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, part := range parts {
		c.Merge(part)
		errs = append(errs, partErrs[i]...)
	}
	return c, errors.Join(errs...)
}

// LoadFile reads one catalog file's blobs into c (name is used in messages
// and positions).
func (c *Catalog) LoadFile(name string, data []byte) error {
	return errors.Join(c.loadFile(name, data)...)
}

func (c *Catalog) loadFile(name string, data []byte) []error {
	return c.loadFileWithin(name, data, LoadOptions{}, newBlobCount(Limits{}))
}

// loadFileWithin reads one file's blobs into c, counting them in blobs
// (the catalog's count); with opts.Package, only that package's blobs are
// decoded.
func (c *Catalog) loadFileWithin(name string, data []byte, opts LoadOptions, blobs *blobCount) []error {
	lim := opts.Limits
	var errs []error
	add := func(line int, _ int64, raw []byte) {
		if err := c.addBlobOf(Position{File: name, Line: line}, raw, opts.Package); err != nil {
			errs = append(errs, err)
		}
	}
	if strings.EqualFold(path.Ext(name), ".json") {
		if err := splitJSON(name, data, lim, blobs, add); err != nil && err != errCatalogFull {
			errs = append(errs, err)
		}
		return errs
	}
	if err := yamlDocsFit(name, data, lim, blobs); err != nil {
		return dropFull([]error{err})
	}
	docs, err := yamldoc.Decode(name, data)
	if err != nil {
		var se *yamldoc.SyntaxError
		if errors.As(err, &se) {
			return []error{&LoadError{File: name, Line: se.Line, Msg: "YAML syntax error: " + se.Msg}}
		}
		return []error{&LoadError{File: name, Msg: err.Error()}}
	}
	for _, d := range docs {
		raw, err := yamlBlob(name, d, lim)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		add(d.Line, 0, raw)
	}
	return errs
}

// yamlBlob is a YAML document of a catalog file as JSON, refused when it
// nests deeper than the limit (the file was not split by brackets: a
// YAML document nests by indentation too).
func yamlBlob(name string, d yamldoc.Document, lim Limits) ([]byte, error) {
	raw, err := marshal(d.Value)
	if err != nil {
		return nil, &LoadError{File: name, Line: d.Line, Msg: "document cannot be converted to JSON: " + err.Error()}
	}
	if _, ok := rawjson.ValidValueWithin(raw, 0, lim.depth()); !ok {
		return nil, tooDeep(name, d.Line, 0, lim)
	}
	return raw, nil
}

// splitJSON calls f with each top-level JSON value of data, its line and
// its offset in data; raw may be a slice of data, so f copies what it
// keeps. A value over the blob limit or the depth limit, more blobs than
// the file limit allows, or a blob past the catalog's count in blobs
// (nil: not counted), end the file with a *LoadError before the value is
// decoded (errCatalogFull when another file passed the count).
func splitJSON(name string, data []byte, lim Limits, blobs *blobCount, f func(line int, off int64, raw []byte)) error {
	if spans, ok := splitObjects(data, lim); ok {
		line, counted := 1, 0
		for _, sp := range spans {
			line += bytes.Count(data[counted:sp[0]], []byte("\n"))
			counted = sp[0]
			if blobs != nil {
				if err := blobs.add(name, line, lim); err != nil {
					return err
				}
			}
			f(line, int64(sp[0]), data[sp[0]:sp[1]:sp[1]])
		}
		return nil
	}
	cost, n := int64(0), 0
	dec := json.NewDecoder(bytes.NewReader(data))
	line, counted := 1, int64(0)
	lineAt := func(off int64) int {
		if off > int64(len(data)) {
			off = int64(len(data))
		}
		if off < counted {
			return 1 + bytes.Count(data[:off], []byte("\n"))
		}
		line += bytes.Count(data[counted:off], []byte("\n"))
		counted = off
		return line
	}
	for {
		start := dec.InputOffset()
		for start < int64(len(data)) && rawjson.IsSpace(data[start]) {
			start++
		}
		if start < int64(len(data)) {
			end, too, deep := valueEnd(data, int(start), lim.blob(), lim.depth())
			if too {
				return blobTooBig(name, lineAt(start), lim)
			}
			if deep >= 0 {
				at := lineAt(start)
				return tooDeep(name, lineAt(int64(deep)), at, lim)
			}
			n++
			if cost += max(int64(end)-start, minBlobCost); cost > lim.file() {
				return fileCostTooBig(name, lineAt(start), n, lim)
			}
			if blobs != nil {
				if err := blobs.add(name, lineAt(start), lim); err != nil {
					return err
				}
			}
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return &LoadError{File: name, Line: lineAt(se.Offset), Msg: "JSON syntax error: " + se.Error()}
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return &LoadError{File: name, Line: lineAt(int64(len(data))), Msg: "JSON syntax error: the file ends inside a value (an unclosed { or [)"}
			}
			return &LoadError{File: name, Line: lineAt(start), Msg: "JSON: " + err.Error()}
		}
		f(lineAt(start), start, raw)
	}
}

// splitObjects is splitJSON's fast path: the [start, end) of each blob of
// a file of JSON objects within lim, or ok false for anything else (a
// syntax error, a value that is not an object, a limit exceeded), which
// splitJSON then reads with encoding/json to report it as it always has.
func splitObjects(data []byte, lim Limits) (spans [][2]int, ok bool) {
	cost := int64(0)
	for i := rawjson.SkipSpace(data, 0); i < len(data); i = rawjson.SkipSpace(data, i) {
		if data[i] != '{' {
			return nil, false
		}
		end, ok := rawjson.ValidValueWithin(data, i, lim.depth())
		if !ok || int64(end-i) > lim.blob() {
			return nil, false
		}
		if cost += max(int64(end-i), minBlobCost); cost > lim.file() {
			return nil, false
		}
		spans = append(spans, [2]int{i, end})
		i = end
	}
	return spans, true
}

// hasSpace reports whether raw holds JSON white space: four passes of
// IndexByte outrun one of ContainsAny over the large base64 values.
func hasSpace(raw []byte) bool {
	return bytes.IndexByte(raw, ' ') >= 0 || bytes.IndexByte(raw, '\n') >= 0 ||
		bytes.IndexByte(raw, '\t') >= 0 || bytes.IndexByte(raw, '\r') >= 0
}

// addBlobOf decodes one blob by its schema, when pkg is empty or the
// blob is of package pkg.
func (c *Catalog) addBlobOf(pos Position, raw []byte, pkg string) error {
	h, err := classify(pos, raw)
	if err != nil || h.skip || (pkg != "" && h.pkg != pkg) {
		return err
	}
	return c.decodeBlob(pos, h, bytes.TrimSpace(raw))
}

// blobHead is what classify reads of a blob: its schema and the package it
// belongs to ("" for none), without decoding the rest.
type blobHead struct {
	schema  string
	pkg     string
	name    string // of a blob of another schema (Meta.Name)
	skip    bool   // a null document: nothing to load
	decoded bool   // schema, package and name came from a full head decode
}

// classify finds a blob's schema and package, with the errors of a blob
// that has none.
func classify(pos Position, raw []byte) (blobHead, error) {
	fail := func(format string, args ...any) error {
		return &LoadError{File: pos.File, Line: pos.Line, Msg: fmt.Sprintf(format, args...)}
	}
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		return blobHead{skip: true}, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return blobHead{}, fail("a catalog blob must be an object with a schema, not %s", jsonKind(raw))
	}
	if a, b, ok := caseTwins(raw); ok {
		return blobHead{}, fail("keys %q and %q differ only in letter case: keys are case-sensitive, but a decoder that ignores case (as Go's does) would take either's value; keep one", a, b)
	}
	schema, known := sniffSchema(raw)
	if known {
		key := "package"
		if schema == SchemaPackage {
			key = "name"
		}
		if v, ok := topLevelString(raw, key); ok {
			return blobHead{schema: schema, pkg: v}, nil
		}
	}
	var head struct {
		Schema  any `json:"schema"`
		Package any `json:"package"`
		Name    any `json:"name"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return blobHead{}, fail("%v", err)
	}
	if !known {
		schema, _ = head.Schema.(string)
	}
	if schema == "" {
		if head.Schema == nil {
			return blobHead{}, fail("the blob has no schema (every catalog object needs one, e.g. schema: olm.bundle)")
		}
		return blobHead{}, fail("schema must be a string")
	}
	h := blobHead{schema: schema, decoded: true}
	h.pkg, _ = head.Package.(string)
	h.name, _ = head.Name.(string)
	if schema == SchemaPackage {
		h.pkg = h.name
	}
	return h, nil
}

// caseTwins finds two top-level keys of the object raw that differ only in
// letter case, which upstream refuses as duplicates: "package" beside
// "Package" would otherwise move a bundle to the package named last.
// Keys repeated exactly are left to the decoder (the last wins, as
// upstream). ok is false when there are none, or raw is not readable here
// (the decoder reports it).
func caseTwins(raw []byte) (a, b string, ok bool) {
	var keys [][]byte
	rawjson.Members(raw, func(key, _ []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &k) != nil {
				return false
			}
			key = []byte(k)
		}
		for _, prev := range keys {
			if !bytes.Equal(prev, key) && bytes.EqualFold(prev, key) {
				a, b, ok = string(prev), string(key), true
				return false
			}
		}
		keys = append(keys, key)
		return true
	})
	return a, b, ok
}

// decodeBlob decodes a classified blob (raw trimmed) into c.
func (c *Catalog) decodeBlob(pos Position, h blobHead, raw []byte) error {
	schema := h.schema
	fail := func(format string, args ...any) error {
		return &LoadError{File: pos.File, Line: pos.Line, Msg: fmt.Sprintf(format, args...)}
	}
	decode := func(v any) error {
		if err := json.Unmarshal(raw, v); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return fail("%s blob: field %s must be %s, not %s", schema, te.Field, te.Type.String(), te.Value)
			}
			return fail("%s blob: %v", schema, err)
		}
		return nil
	}
	// encoding/json matches keys regardless of case, so a second key such
	// as "sChemA" would silently replace what the blob was classified by;
	// upstream refuses such blobs as having a duplicate key.
	same := func(key, got, want string) error {
		if got != want {
			return fail("%s blob: %s is given twice, in different letter cases (read as %q and %q); keys are case-sensitive: keep the lowercase one", schema, key, want, got)
		}
		return nil
	}
	switch schema {
	case SchemaPackage:
		var p Package
		if err := decode(&p); err != nil {
			return err
		}
		if err := cmp.Or(same("schema", p.Schema, schema), same("name", p.Name, h.pkg)); err != nil {
			return err
		}
		p.Pos = pos
		compactProps(p.Properties)
		c.Packages = append(c.Packages, p)
	case SchemaChannel:
		var ch Channel
		if err := decode(&ch); err != nil {
			return err
		}
		if err := cmp.Or(same("schema", ch.Schema, schema), same("package", ch.Package, h.pkg)); err != nil {
			return err
		}
		ch.Pos = pos
		compactProps(ch.Properties)
		c.Channels = append(c.Channels, ch)
	case SchemaBundle:
		var b Bundle
		if !decodeBundleFast(raw, &b) {
			b = Bundle{}
			if err := decode(&b); err != nil {
				return err
			}
		}
		if err := cmp.Or(same("schema", b.Schema, schema), same("package", b.Package, h.pkg)); err != nil {
			return err
		}
		b.Pos = pos
		compactProps(b.Properties)
		c.Bundles = append(c.Bundles, b)
	default:
		m := Meta{Schema: schema, Blob: metaBlob(schema, raw), Pos: pos, Package: h.pkg, Name: h.name}
		c.Others = append(c.Others, m)
	}
	return nil
}

// metaBlob is a copy of the blob raw of another schema, re-encoded as
// upstream's reading of a catalog re-encodes it: in canonical form
// (rawjson.Canonical), or for olm.deprecations, which upstream decodes
// into its own type, with its strings so and its keys in their order.
func metaBlob(schema string, raw []byte) json.RawMessage {
	canon := rawjson.Canonical
	if schema == SchemaDeprecations {
		canon = rawjson.CanonicalStrings
	}
	if c, err := canon(raw); err == nil {
		raw = c
	}
	return append(json.RawMessage(nil), raw...)
}

// topLevelString finds key among the top-level keys of the JSON object raw
// (valid JSON) and returns its value when it is a string without escapes;
// ok is false when the key is missing, not such a string, or raw is not
// simple enough to read this way (the caller then decodes).
func topLevelString(raw []byte, key string) (string, bool) {
	i := 1 // past '{'
	skipSpace := func() {
		for i < len(raw) && rawjson.IsSpace(raw[i]) {
			i++
		}
	}
	// str reads a string at raw[i] (a quote); ok is false for one with
	// escapes.
	str := func() (string, bool, bool) {
		j := i + 1
		esc := false
		for j < len(raw) {
			switch raw[j] {
			case '\\':
				esc = true
				j += 2
				continue
			case '"':
				s := string(raw[i+1 : j])
				i = j + 1
				return s, !esc, true
			}
			j++
		}
		return "", false, false
	}
	// skipValue skips a value of any kind starting at raw[i].
	skipValue := func() bool {
		if i >= len(raw) {
			return false
		}
		i = rawjson.SkipValid(raw, i)
		return true
	}
	// Every key is read, not only up to key's: encoding/json takes the
	// last of duplicate keys, so a second one sends the caller to it.
	// Hand-written for speed: a whole catalog's blobs are classified
	// before any is decoded.
	value, found := "", false
	for {
		skipSpace()
		if i >= len(raw) || raw[i] != '"' {
			return "", false
		}
		k, plain, ok := str()
		if !ok || !plain {
			return "", false
		}
		skipSpace()
		if i >= len(raw) || raw[i] != ':' {
			return "", false
		}
		i++
		skipSpace()
		if k == key {
			if found || i >= len(raw) || raw[i] != '"' {
				return "", false
			}
			v, plain, ok := str()
			// encoding/json turns invalid UTF-8 into U+FFFD.
			if !ok || !plain || !utf8.ValidString(v) {
				return "", false
			}
			value, found = v, true
		} else if strings.EqualFold(k, key) || !skipValue() {
			// encoding/json also matches keys case-insensitively.
			return "", false
		}
		skipSpace()
		if i < len(raw) && raw[i] == '}' {
			return value, found
		}
		if i >= len(raw) || raw[i] != ',' {
			return "", false
		}
		i++
	}
}

// sniffSchema reads the schema of a blob that starts with it (as every
// blob opm and upstream write does) without decoding the rest; it says
// whether it is one of the schemas decoded into their own types.
func sniffSchema(raw []byte) (string, bool) {
	i := 1
	skip := func() {
		for i < len(raw) && rawjson.IsSpace(raw[i]) {
			i++
		}
	}
	expect := func(s string) bool {
		skip()
		if !bytes.HasPrefix(raw[i:], []byte(s)) {
			return false
		}
		i += len(s)
		return true
	}
	if !expect(`"schema"`) || !expect(":") || !expect(`"`) {
		return "", false
	}
	end := bytes.IndexByte(raw[i:], '"')
	if end < 0 {
		return "", false
	}
	s := string(raw[i : i+end])
	switch s {
	case SchemaPackage, SchemaChannel, SchemaBundle:
		return s, true
	}
	return "", false
}

// compactProps compacts property values and brings them to canonical form
// (rawjson.Canonical), as upstream's reading of a catalog re-encodes every blob:
// a value written with \u003e or \u00e4, or with its keys in another
// order, is then written back as upstream writes it.
func compactProps(ps []Property) {
	for i := range ps {
		v := ps[i].Value
		if hasSpace(v) {
			if c, ok := compactDataObject(v); ok {
				v = c
			} else if c, err := rawjson.Compact(v); err == nil {
				v = c
			}
		}
		if c, err := rawjson.Canonical(v); err == nil {
			v = c
		}
		ps[i].Value = v
	}
}

// compactDataObject compacts a value of olm.bundle.object's shape, {"data":
// "<string without escapes>"} with any spacing, without json.Compact's
// scan of the whole (large) string; ok is false for any other value. raw
// is valid JSON (it was decoded).
func compactDataObject(raw []byte) (out []byte, ok bool) {
	rest := bytes.TrimLeft(raw, " \t\r\n")
	expect := func(tok string) bool {
		if !bytes.HasPrefix(rest, []byte(tok)) {
			return false
		}
		rest = bytes.TrimLeft(rest[len(tok):], " \t\r\n")
		return true
	}
	if !expect("{") || !expect(`"data"`) || !expect(":") || len(rest) == 0 || rest[0] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return nil, false
	}
	str := rest[1 : 1+end]
	if bytes.IndexByte(str, '\\') >= 0 {
		return nil, false
	}
	rest = bytes.TrimLeft(rest[2+end:], " \t\r\n")
	if !expect("}") || len(rest) != 0 {
		return nil, false
	}
	const head, tail = `{"data":"`, `"}`
	out = make([]byte, 0, len(head)+len(str)+len(tail))
	out = append(append(append(out, head...), str...), tail...)
	return out, true
}

func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a scalar"
}

// ignorer applies .indexignore files: gitignore-style patterns, each file's
// relative to its own directory; a later match wins, "!" re-includes, a
// trailing "/" matches directories only, a pattern without "/" matches a
// name at any depth, "**" matches any number of directories.
type ignorer struct {
	rules []ignoreRule
}

type ignoreRule struct {
	base    string // directory of the .indexignore, "." for the root
	pattern string
	negate  bool
	dirOnly bool
	anyDir  bool // no slash: match the name at any depth
}

func (ig *ignorer) add(dir string, data []byte) {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: dir}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		r.anyDir = !strings.Contains(line, "/")
		r.pattern = strings.TrimPrefix(line, "/")
		if r.pattern != "" {
			ig.rules = append(ig.rules, r)
		}
	}
}

func (ig *ignorer) match(p string, isDir bool) bool {
	ignored := false
	for _, r := range ig.rules {
		rel := p
		if r.base != "." {
			if !strings.HasPrefix(p, r.base+"/") {
				continue
			}
			rel = strings.TrimPrefix(p, r.base+"/")
		}
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.anyDir {
			ok, _ = path.Match(r.pattern, path.Base(rel))
		} else {
			ok = globMatch(strings.Split(r.pattern, "/"), strings.Split(rel, "/"))
		}
		if ok {
			ignored = !r.negate
		}
	}
	return ignored
}

// globMatch matches path segments against pattern segments, "**" standing
// for any number of segments.
func globMatch(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if globMatch(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// catalogFiles walks a catalog directory as Load and Scan read it: the
// .indexignore files applied, symbolic links out of the catalog or to
// directories reported (WalkDir does not enter linked directories: say so
// rather than skip a catalog silently), and the rest split into the files
// that hold blobs (.json, .yaml, .yml) and the ignored ones, in walk order.
// Problems go to report.
func catalogFiles(fsys fs.FS, report func(error)) (files, ignored []string) {
	ign := &ignorer{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			report(&LoadError{File: p, Msg: err.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != "." && ign.match(p, true) {
				return fs.SkipDir
			}
			data, err := readIgnoreFile(fsys, p)
			if err != nil {
				report(&LoadError{File: path.Join(p, IgnoreFile), Msg: err.Error()})
			} else if data != nil {
				ign.add(p, data)
			}
			return nil
		}
		if d.Name() == IgnoreFile || ign.match(p, false) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			st, err := fs.Stat(fsys, p)
			switch {
			case err != nil && strings.Contains(err.Error(), "escapes"):
				report(&LoadError{File: p, Msg: "a symbolic link that leads out of the catalog directory (or is absolute), which opm does not follow: copy its target into the catalog, or make the link relative within it"})
				return nil
			case err != nil:
				report(&LoadError{File: p, Msg: err.Error()})
				return nil
			case st.IsDir():
				report(&LoadError{File: p, Msg: "a symbolic link to a directory, which opm does not follow (nor does upstream opm): copy the directory into the catalog, or give its target"})
				return nil
			}
		}
		switch strings.ToLower(path.Ext(p)) {
		case ".json", ".yaml", ".yml":
			files = append(files, p)
		default:
			ignored = append(ignored, p)
		}
		return nil
	})
	if err != nil {
		report(err)
	}
	return files, ignored
}
