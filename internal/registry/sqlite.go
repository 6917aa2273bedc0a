package registry

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/registry/api"
)

// mmapBytes is how much of a database file is read through a mapping;
// the rest is read with read calls into sqlite's page cache. Uncapped,
// the 145 MB benchmark database became 152 MB of the server's resident
// set under ListBundles (issue 40: 2,000 stalled streams peaked at
// 447 MB, 114 MB of it the server's own memory). Each connection of the
// pool maps the file apart, and a page mapped by several counts once per
// mapping in the resident set: so the cap is shared out between them
// (capped at 64 MiB each, four connections held 107 MB of the file).
const mmapBytes = 64 << 20

// poolConns is the size of a database's connection pool.
func poolConns() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// gvkType is the property (and dependency) type of a provided (required) API.
const gvkType = "olm.gvk"

// The driver of the serving connections: every connection keeps temporary
// b-trees (sorting, DISTINCT) in memory, so that serving writes no file at
// all, not even to a temporary directory that a read-only root lacks.
const readOnlyDriver = "sqlite3_opm_registry"

var registerDriver sync.Once

// SQLite is a Backend over an index database (schema 13, as internal/index
// writes it). It opens the file read-only and immutable: it writes nothing
// beside it (no journal, no lock files), so it works on a read-only file
// system and for a user who cannot write the directory. The file must not
// change while it is open. A hot rollback journal or a non-empty
// write-ahead log beside it is applied in a private copy, which is served
// instead (see index.Committed and index.CheckpointedCopy).
type SQLite struct {
	path string
	db   *sql.DB
	// The properties and dependencies tables have no index on the bundle
	// name, and a read-only file cannot be given one: these map a bundle
	// name to its rows' rowids (ascending), built once at open.
	props map[string][]int64
	deps  map[string][]int64
	// providers maps an olm.gvk property value to the bundles that have it,
	// for the queries by API (same reason: no index on properties.value).
	providers map[string][]string
	// entries maps a bundle name to its channel_entry ids and replacedBy an
	// entry id to the ids of the entries that replace (or skip) it: the
	// table has no index on either column.
	entries    map[string][]int64
	replacedBy map[int64][]int64
	// metas says the database keeps a catalog's other blobs
	// (index.MetaTable); deprecations are their olm.deprecations, by
	// package.
	metas        bool
	deprecations map[string]*packageDeprecations
	// packages are the kept package blobs, by name.
	packages   map[string]*packageMeta
	rolledBack bool
	walCopied  bool
	cleanup    func()
	// list holds ListBundles' rows once read (see listRows).
	listMu sync.Mutex
	list   []listRow
	// Statements of the hottest calls, prepared once: sqlite compiles a
	// statement's text anew on every unprepared query.
	headStmt, packageStmt *sql.Stmt
	// layouts caches each bundle's manifestLayout, by name.
	layouts sync.Map
}

var _ Backend = (*SQLite)(nil)

// OpenSQLite opens the index database at path for serving, checks that it is
// an index at schema version 13, and reads the lookups it serves from.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("open index %s: %w: it is a directory (give the database file, e.g. database/index.db)", path, index.ErrNotIndex)
	}
	registerDriver.Do(func() {
		sql.Register(readOnlyDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			if _, err := c.Exec("PRAGMA temp_store = MEMORY", nil); err != nil {
				return err
			}
			// Read the (immutable) file through a shared mapping: a
			// bundle's manifests span many overflow pages, each a read
			// call and a copy without it. Mapped pages are the page
			// cache's, shared by every connection, but count in the
			// server's resident set once touched: a ListBundles touches
			// the whole file, so the mapping is capped (mmapBytes, for
			// the whole pool).
			_, err := c.Exec(fmt.Sprintf("PRAGMA mmap_size = %d", mmapBytes/poolConns()), nil)
			return err
		}})
	})
	// immutable=1 makes sqlite ignore journals: a database with the
	// journal of a write that never committed would be served half
	// written. Serve the committed content (a rolled-back private copy).
	file, rolledBack, cleanup, err := index.Committed(path)
	if err != nil {
		return nil, err
	}
	// It ignores a write-ahead log too: a WAL-mode database whose writer
	// committed and was killed (or is still open) before a checkpoint has
	// those commits only in its -wal, and would be served as it was before
	// them. Serve a private copy with the log checkpointed into it.
	walCopied := false
	if !rolledBack && index.HasWAL(path) {
		c, walCleanup, err := index.CheckpointedCopy(path)
		if err != nil {
			cleanup()
			return nil, err
		}
		file, walCopied = c, true
		prev := cleanup
		cleanup = func() { walCleanup(); prev() }
	}
	p := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(file)
	db, err := sql.Open(readOnlyDriver, "file:"+p+"?mode=ro&immutable=1&_query_only=1")
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	// No call holds a connection while it waits for its client (streams
	// read, then send), so a small pool serves any number of streams; each
	// connection has its own page cache, and an uncapped pool grew one per
	// concurrent stream.
	conns := poolConns()
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	s := &SQLite{path: path, db: db, rolledBack: rolledBack, walCopied: walCopied, cleanup: cleanup}
	if err := s.open(ctx); err != nil {
		_ = s.Close() // read-only; the open error is what matters
		return nil, err
	}
	return s, nil
}

func (s *SQLite) open(ctx context.Context) error {
	var err error
	if err := s.check(ctx); err != nil {
		return err
	}
	if s.props, err = s.rowidsByBundle(ctx, "properties"); err != nil {
		return err
	}
	if s.deps, err = s.rowidsByBundle(ctx, "dependencies"); err != nil {
		return err
	}
	if s.providers, err = s.providersByAPI(ctx); err != nil {
		return err
	}
	if err := s.readEntries(ctx); err != nil {
		return err
	}
	if s.headStmt, err = s.db.PrepareContext(ctx, `SELECT ob.name, ob.csv
		FROM channel c JOIN operatorbundle ob ON ob.name = c.head_operatorbundle_name
		WHERE c.package_name = ? AND c.name = ?`); err != nil {
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	if s.packageStmt, err = s.db.PrepareContext(ctx, `SELECT p.default_channel, c.name, c.head_operatorbundle_name
		FROM package p JOIN channel c ON c.package_name = p.name
		WHERE p.name = ? ORDER BY c.name`); err != nil {
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	return s.readMetas(ctx)
}

// RolledBack reports whether the file had the journal of a write that never
// committed: what is served is a private copy with that write rolled back.
func (s *SQLite) RolledBack() bool { return s.rolledBack }

// CheckpointedWAL reports whether the file had a write-ahead log with
// commits not yet checkpointed into it: what is served is a private copy
// with the log checkpointed in.
func (s *SQLite) CheckpointedWAL() bool { return s.walCopied }

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database (and removes a rolled-back copy).
func (s *SQLite) Close() error {
	for _, st := range []*sql.Stmt{s.headStmt, s.packageStmt} {
		if st != nil {
			_ = st.Close() // read statements: nothing to lose
		}
	}
	err := s.db.Close()
	if s.cleanup != nil {
		s.cleanup()
		s.cleanup = nil
	}
	return err
}

func (s *SQLite) check(ctx context.Context) error {
	tables := map[string]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		var se sqlite3.Error
		if errors.As(err, &se) && se.Code == sqlite3.ErrNotADB {
			return fmt.Errorf("open index %s: %w: the file is not an SQLite database", s.path, index.ErrNotIndex)
		}
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("open index %s: %w", s.path, err)
		}
		tables[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	if !tables["schema_migrations"] {
		return fmt.Errorf("open index %s: %w: no schema_migrations table (an empty file or another database)", s.path, index.ErrNotIndex)
	}
	var version sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&version); err != nil {
		return fmt.Errorf("open index %s: read schema version: %w", s.path, err)
	}
	if !version.Valid || version.Int64 != index.SchemaVersion {
		return fmt.Errorf("open index %s: %w: schema version %d, and opm serves only version %d: open it once with a write command of upstream opm v1.73.0 (which migrates it), or rebuild the index from its bundles",
			s.path, index.ErrSchemaVersion, version.Int64, index.SchemaVersion)
	}
	var missing []string
	for _, t := range []string{"package", "channel", "channel_entry", "operatorbundle", "api", "properties", "dependencies"} {
		if !tables[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("open index %s: %w: table(s) %s missing", s.path, index.ErrNotIndex, strings.Join(missing, ", "))
	}
	return nil
}

func (s *SQLite) rowidsByBundle(ctx context.Context, table string) (map[string][]int64, error) {
	out := map[string][]int64{}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid, operatorbundle_name FROM `+table+` WHERE operatorbundle_name IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("open index %s: read %s: %w", s.path, table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("open index %s: read %s: %w", s.path, table, err)
		}
		out[name] = append(out[name], id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("open index %s: read %s: %w", s.path, table, err)
	}
	return out, nil
}

func (s *SQLite) providersByAPI(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT value, operatorbundle_name FROM properties
		WHERE type = ? AND value IS NOT NULL AND operatorbundle_name IS NOT NULL ORDER BY 1, 2`, gvkType)
	if err != nil {
		return nil, fmt.Errorf("open index %s: read properties: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var value, name string
		if err := rows.Scan(&value, &name); err != nil {
			return nil, fmt.Errorf("open index %s: read properties: %w", s.path, err)
		}
		out[value] = append(out[value], name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("open index %s: read properties: %w", s.path, err)
	}
	return out, nil
}

// providerArgs is the SQL list "(?,?,…)" of the channel entries of the
// bundles providing g, and its arguments; false when there are none.
func (s *SQLite) providerArgs(g GVK) (string, []any, bool) {
	var ids []int64
	for _, n := range s.providers[gvkValue(g)] {
		ids = append(ids, s.entries[n]...)
	}
	if len(ids) == 0 {
		return "", nil, false
	}
	in, args := inList(ids)
	return in, args, true
}

func (s *SQLite) readEntries(ctx context.Context) error {
	s.entries, s.replacedBy = map[string][]int64{}, map[int64][]int64{}
	rows, err := s.db.QueryContext(ctx, `SELECT entry_id, operatorbundle_name, replaces FROM channel_entry ORDER BY entry_id`)
	if err != nil {
		return fmt.Errorf("open index %s: read channel_entry: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name sql.NullString
		var replaces sql.NullInt64
		if err := rows.Scan(&id, &name, &replaces); err != nil {
			return fmt.Errorf("open index %s: read channel_entry: %w", s.path, err)
		}
		if name.Valid {
			s.entries[name.String] = append(s.entries[name.String], id)
		}
		if replaces.Valid {
			s.replacedBy[replaces.Int64] = append(s.replacedBy[replaces.Int64], id)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("open index %s: read channel_entry: %w", s.path, err)
	}
	return nil
}

// inList is the SQL list "(?,?,…)" of ids and its arguments. Long lists go
// as one JSON array argument, under sqlite's limit on arguments.
func inList(ids []int64) (string, []any) {
	if len(ids) > 500 {
		b, _ := json.Marshal(ids)
		return "(SELECT value FROM json_each(?))", []any{string(b)}
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "(?" + strings.Repeat(",?", max(len(ids)-1, 0)) + ")", args
}

// replacers are the ids of the entries that replace or skip any of ids.
func (s *SQLite) replacers(ids []int64) []int64 {
	var out []int64
	for _, id := range ids {
		out = append(out, s.replacedBy[id]...)
	}
	return out
}

// Stats counts packages and the bundles in channels.
func (s *SQLite) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM package),
		(SELECT COUNT(*) FROM operatorbundle WHERE name IN (SELECT operatorbundle_name FROM channel_entry))`).Scan(&st.Packages, &st.Bundles)
	if err != nil {
		return st, fmt.Errorf("read index %s: count: %w", s.path, err)
	}
	return st, nil
}

func (s *SQLite) wrap(what string, err error) error {
	return fmt.Errorf("read index %s: %s: %w", s.path, what, err)
}

// ListPackages sends every package name, sorted. The names are read first
// and sent after: no connection is held while a client is slow to read.
func (s *SQLite) ListPackages(ctx context.Context, send func(string) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM package WHERE name IS NOT NULL ORDER BY name`)
	if err != nil {
		return s.wrap("list packages", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return s.wrap("list packages", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.wrap("list packages", err)
	}
	for _, n := range names {
		if err := send(n); err != nil {
			return err
		}
	}
	return nil
}

// GetPackage answers a package with its channels (sorted by name) and their
// heads. A package without channels is not found, as upstream.
func (s *SQLite) GetPackage(ctx context.Context, name string) (*api.Package, error) {
	rows, err := s.packageStmt.QueryContext(ctx, name)
	if err != nil {
		return nil, s.wrap("package "+name, err)
	}
	defer rows.Close()
	var pkg *api.Package
	for rows.Next() {
		var def, ch, head sql.NullString
		if err := rows.Scan(&def, &ch, &head); err != nil {
			return nil, s.wrap("package "+name, err)
		}
		if pkg == nil {
			pkg = &api.Package{Name: name, DefaultChannelName: def.String, Deprecation: s.packageDeprecation(name)}
		}
		pkg.Channels = append(pkg.Channels, &api.Channel{Name: ch.String, CsvName: head.String, Deprecation: s.channelDeprecation(name, ch.String)})
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("package "+name, err)
	}
	if pkg == nil {
		return nil, &NotFoundError{fmt.Sprintf("package %s not found", name)}
	}
	return pkg, nil
}

// bundleRow is what the single-bundle queries read of a bundle.
type bundleRow struct {
	name, path, version, skipRange sql.NullString
	content                        ownedText
}

// ownedText is sql.NullString for a large column, without its second copy.
// go-sqlite3 hands a BLOB value over as a fresh Go copy of sqlite's bytes
// (C.GoBytes, per row), which nothing else holds, so the string takes it
// over rather than copying it again (a bundle's manifests are tens of
// kilobytes to megabytes, read on every bundle answer).
type ownedText struct {
	String string
	Valid  bool
}

// Scan implements sql.Scanner.
func (t *ownedText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		t.String, t.Valid = "", false
	case string:
		t.String, t.Valid = v, true
	case []byte:
		t.String, t.Valid = unsafe.String(unsafe.SliceData(v), len(v)), true
	default:
		return fmt.Errorf("want text, got %T", src)
	}
	return nil
}

// apiBundle assembles a full bundle message: manifests from the bundle
// column, APIs with plurals, dependencies and properties of the bundle's
// version and path.
func (s *SQLite) apiBundle(ctx context.Context, r bundleRow, pkg, channel string) (*api.Bundle, error) {
	out := &api.Bundle{}
	if r.content.String != "" {
		objs, csv, err := s.manifests(r.name.String, r.content.String)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", r.name.String, err)
		}
		out.Object, out.CsvJson = objs, csv
	}
	out.CsvName, out.PackageName, out.ChannelName = r.name.String, pkg, channel
	out.BundlePath, out.Version, out.SkipRange = r.path.String, r.version.String, r.skipRange.String
	out.Deprecation = s.bundleDeprecation(pkg, r.name.String)

	props, err := s.typedRows(ctx, "properties", s.props[r.name.String], r.version.String, r.path.String, true)
	if err != nil {
		return nil, err
	}
	deps, err := s.typedRows(ctx, "dependencies", s.deps[r.name.String], r.version.String, r.path.String, true)
	if err != nil {
		return nil, err
	}
	for _, p := range props {
		if servedProperty(p.typ) {
			out.Properties = append(out.Properties, &api.Property{Type: p.typ, Value: p.value})
		}
	}
	if out.CsvJson == "" && len(out.Object) == 0 {
		csv, err := s.csvFromMetadata(ctx, out.CsvName, pkg, out.Version, props)
		if err != nil {
			return nil, err
		}
		if csv != "" {
			out.CsvJson, out.Object = csv, []string{csv}
		}
	}
	for _, d := range deps {
		out.Dependencies = append(out.Dependencies, &api.Dependency{Type: d.typ, Value: d.value})
	}
	// Provided APIs are every olm.gvk property row, duplicates kept, and
	// required APIs the distinct olm.gvk dependencies, whatever their version
	// and path (upstream reads them through the channel entry, by name).
	all, err := s.typedRows(ctx, "properties", s.props[r.name.String], "", "", false)
	if err != nil {
		return nil, err
	}
	out.ProvidedApis = gvks(all, false)
	allDeps, err := s.typedRows(ctx, "dependencies", s.deps[r.name.String], "", "", false)
	if err != nil {
		return nil, err
	}
	out.RequiredApis = gvks(allDeps, true)
	for _, g := range append(append([]*api.GroupVersionKind{}, out.ProvidedApis...), out.RequiredApis...) {
		var plural sql.NullString
		err := s.db.QueryRowContext(ctx, `SELECT plural FROM api WHERE group_name = ? AND version = ? AND kind = ?`, g.Group, g.Version, g.Kind).Scan(&plural)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, s.wrap("api "+g.Kind, err)
		}
		g.Plural = plural.String
	}
	return out, nil
}

// servedProperty says whether a property is answered in Bundle.properties.
// Like upstream's server of file-based catalogs, never the manifests
// (olm.bundle.object) nor their summary (olm.csv.metadata): OLM copies the
// properties into an annotation of the installed CSV, which would outgrow
// what the cluster stores. Databases made from a catalog keep them to
// render the catalog back; upstream's databases never hold them.
func servedProperty(typ string) bool {
	return typ != "olm.bundle.object" && typ != "olm.csv.metadata"
}

type typedRow struct {
	typ, value string
}

// typedRows reads the (type, value) rows of properties or dependencies with
// the given rowids, in rowid order. With match, only rows whose version and
// path are NULL or equal to the bundle's, without duplicates.
func (s *SQLite) typedRows(ctx context.Context, table string, ids []int64, version, path string, match bool) ([]typedRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := `SELECT type, value, operatorbundle_version, operatorbundle_path FROM ` + table +
		` WHERE rowid IN (?` + strings.Repeat(",?", len(ids)-1) + `) ORDER BY rowid`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("read "+table, err)
	}
	defer rows.Close()
	var out []typedRow
	seen := map[typedRow]bool{}
	for rows.Next() {
		var typ, value, v, p sql.NullString
		if err := rows.Scan(&typ, &value, &v, &p); err != nil {
			return nil, s.wrap("read "+table, err)
		}
		if !typ.Valid || !value.Valid {
			continue
		}
		r := typedRow{typ.String, value.String}
		if match {
			if (v.Valid && v.String != version) || (p.Valid && p.String != path) || seen[r] {
				continue
			}
			seen[r] = true
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("read "+table, err)
	}
	return out, nil
}

// gvks turns the olm.gvk rows into APIs (without plurals), skipping values
// that are not JSON objects; distinct drops repeated values.
func gvks(rows []typedRow, distinct bool) []*api.GroupVersionKind {
	var out []*api.GroupVersionKind
	seen := map[string]bool{}
	for _, r := range rows {
		if r.typ != gvkType || (distinct && seen[r.value]) {
			continue
		}
		seen[r.value] = true
		var g struct {
			Group   string `json:"group"`
			Version string `json:"version"`
			Kind    string `json:"kind"`
		}
		if json.Unmarshal([]byte(r.value), &g) != nil {
			continue
		}
		out = append(out, &api.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind})
	}
	return out
}

// manifestLayout is where a bundle column's objects are and which is the
// CSV: found once per bundle (scanning a bundle's JSON, up to megabytes,
// was most of the time of a bundle answer) and used while the immutable
// file is served.
type manifestLayout struct {
	size   int      // the column's length, to catch a mismatch
	bounds [][2]int // start and end of each object
	csv    int      // the index of the CSV in bounds
}

// manifests splits a bundle's column into its objects and finds the CSV,
// with the layout cached by bundle name.
func (s *SQLite) manifests(name, content string) ([]string, string, error) {
	if v, ok := s.layouts.Load(name); ok {
		if l := v.(*manifestLayout); l.size == len(content) {
			objs := make([]string, len(l.bounds))
			for i, b := range l.bounds {
				objs[i] = content[b[0]:b[1]]
			}
			return objs, objs[l.csv], nil
		}
	}
	l, err := splitManifests(content)
	if err != nil {
		return nil, "", err
	}
	s.layouts.Store(name, l)
	objs := make([]string, len(l.bounds))
	for i, b := range l.bounds {
		objs[i] = content[b[0]:b[1]]
	}
	return objs, objs[l.csv], nil
}

// splitManifests finds the objects of a bundle column (JSON objects one
// after another) and the CSV among them.
func splitManifests(content string) (*manifestLayout, error) {
	if l, ok := splitLines(content); ok {
		return l, nil
	}
	return decodeManifests(content)
}

// decodeManifests is splitManifests through a JSON decoder: any layout.
func decodeManifests(content string) (*manifestLayout, error) {
	dec := json.NewDecoder(strings.NewReader(content))
	l := &manifestLayout{size: len(content), csv: -1}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("read manifests: %w", err)
		}
		end := int(dec.InputOffset())
		l.bounds = append(l.bounds, [2]int{end - len(raw), end})
	}
	for i, b := range l.bounds {
		o := content[b[0]:b[1]]
		// Only kind and metadata.name matter: decoding the whole manifest
		// into maps cost most of a bundle answer's time.
		var m struct {
			Kind     any             `json:"kind"`
			Metadata json.RawMessage `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(o), &m); err != nil {
			return nil, fmt.Errorf("read manifests: %w", err)
		}
		if kind, _ := m.Kind.(string); kind != "ClusterServiceVersion" {
			continue
		}
		var md struct {
			Name any `json:"name"`
		}
		if len(m.Metadata) > 0 && m.Metadata[0] == '{' {
			if err := json.Unmarshal(m.Metadata, &md); err != nil {
				return nil, fmt.Errorf("read manifests: %w", err)
			}
		}
		if name, _ := md.Name.(string); name != "" {
			l.csv = i
			return l, nil
		}
		break
	}
	return nil, errors.New("no csv in bundle")
}

// splitLines is splitManifests for the column as opm's writers store it:
// one compact object a line. Only an object that names the CSV kind is
// decoded (manifests are written checked; the rest are not scanned again).
// False when the column is not so laid out, or its CSV is not plain: the
// caller then reads it with a JSON decoder.
func splitLines(content string) (*manifestLayout, bool) {
	l := &manifestLayout{size: len(content), csv: -1}
	for start := 0; start < len(content); {
		end := strings.IndexByte(content[start:], '\n')
		if end < 0 {
			end = len(content)
		} else {
			end += start
		}
		if line := content[start:end]; line != "" {
			if line[0] != '{' || line[len(line)-1] != '}' {
				return nil, false
			}
			l.bounds = append(l.bounds, [2]int{start, end})
		}
		start = end + 1
	}
	for i, b := range l.bounds {
		o := content[b[0]:b[1]]
		if !strings.Contains(o, `"ClusterServiceVersion"`) {
			continue
		}
		var m struct {
			Kind     any `json:"kind"`
			Metadata struct {
				Name any `json:"name"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(o), &m) != nil {
			return nil, false
		}
		if kind, _ := m.Kind.(string); kind != "ClusterServiceVersion" {
			continue
		}
		if name, _ := m.Metadata.Name.(string); name == "" {
			return nil, false
		}
		l.csv = i
		return l, true
	}
	return nil, false
}

// GetBundle answers one bundle of a channel.
func (s *SQLite) GetBundle(ctx context.Context, pkg, channel, csvName string) (*api.Bundle, error) {
	notFound := &NotFoundError{fmt.Sprintf("no entry found for %s %s %s", pkg, channel, csvName)}
	ids := s.entries[csvName]
	if len(ids) == 0 {
		return nil, notFound
	}
	in, args := inList(ids)
	var r bundleRow
	err := s.db.QueryRowContext(ctx, `SELECT ob.name, ob.bundle, ob.bundlepath, ob.version, ob.skiprange
		FROM channel_entry e JOIN operatorbundle ob ON ob.name = e.operatorbundle_name
		WHERE e.entry_id IN `+in+` AND e.package_name = ? AND e.channel_name = ?
		ORDER BY e.entry_id LIMIT 1`, append(args, pkg, channel)...).Scan(&r.name, &r.content, &r.path, &r.version, &r.skipRange)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, s.wrap("bundle "+csvName, err)
	}
	return s.apiBundle(ctx, r, pkg, channel)
}

// GetBundleForChannel answers the channel head's name and CSV.
func (s *SQLite) GetBundleForChannel(ctx context.Context, pkg, channel string) (*api.Bundle, error) {
	var name sql.NullString
	var csv ownedText
	err := s.headStmt.QueryRowContext(ctx, pkg, channel).Scan(&name, &csv)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFoundError{fmt.Sprintf("no entry found for %s %s", pkg, channel)}
	}
	if err != nil {
		return nil, s.wrap("channel "+channel, err)
	}
	out := &api.Bundle{CsvName: name.String, CsvJson: csv.String, Deprecation: s.bundleDeprecation(pkg, name.String)}
	if out.CsvJson == "" && s.metas {
		var version sql.NullString
		if err := s.db.QueryRowContext(ctx, `SELECT version FROM operatorbundle WHERE name = ?`, name.String).Scan(&version); err != nil {
			return nil, s.wrap("channel "+channel, err)
		}
		props, err := s.typedRows(ctx, "properties", s.props[name.String], "", "", false)
		if err != nil {
			return nil, err
		}
		if out.CsvJson, err = s.csvFromMetadata(ctx, name.String, pkg, version.String, props); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *SQLite) sendEntries(ctx context.Context, what string, send func(*api.ChannelEntry) error, replaces func(sql.NullString) string, q string, args ...any) (int, error) {
	// Read all, then send: no connection is held while a client is slow to
	// read (the pool is capped). These answers are a few entries.
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, s.wrap(what, err)
	}
	var out []*api.ChannelEntry
	for rows.Next() {
		var pkg, ch, b, r sql.NullString
		if err := rows.Scan(&pkg, &ch, &b, &r); err != nil {
			rows.Close()
			return 0, s.wrap(what, err)
		}
		out = append(out, &api.ChannelEntry{PackageName: pkg.String, ChannelName: ch.String, BundleName: b.String, Replaces: replaces(r)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, s.wrap(what, err)
	}
	for i, e := range out {
		if err := send(e); err != nil {
			return i, err
		}
	}
	return len(out), nil
}

// GetChannelEntriesThatReplace sends the entries whose bundle replaces (or
// skips) csvName.
func (s *SQLite) GetChannelEntriesThatReplace(ctx context.Context, csvName string, send func(*api.ChannelEntry) error) error {
	notFound := &NotFoundError{fmt.Sprintf("no channel entries found that replace %s", csvName)}
	ids := s.replacers(s.entries[csvName])
	if len(ids) == 0 {
		return notFound
	}
	in, args := inList(ids)
	n, err := s.sendEntries(ctx, "entries that replace "+csvName, send, func(sql.NullString) string { return csvName },
		`SELECT DISTINCT package_name, channel_name, operatorbundle_name, NULL
		FROM channel_entry WHERE entry_id IN `+in+` ORDER BY 1, 2, 3`, args...)
	if err == nil && n == 0 {
		err = notFound
	}
	return err
}

// GetBundleThatReplaces answers the bundle of the channel that replaces
// csvName.
func (s *SQLite) GetBundleThatReplaces(ctx context.Context, csvName, pkg, channel string) (*api.Bundle, error) {
	notFound := &NotFoundError{fmt.Sprintf("no entry found for %s %s", pkg, channel)}
	own := s.entries[csvName]
	next := s.replacers(own)
	if len(next) == 0 {
		return nil, notFound
	}
	inOwn, args := inList(own)
	inNext, nextArgs := inList(next)
	var r bundleRow
	err := s.db.QueryRowContext(ctx, `SELECT ob.name, ob.bundle, ob.bundlepath, ob.version, ob.skiprange
		FROM channel_entry e
		JOIN channel_entry n ON n.replaces = e.entry_id
		JOIN operatorbundle ob ON ob.name = n.operatorbundle_name
		WHERE e.entry_id IN `+inOwn+` AND n.entry_id IN `+inNext+` AND e.package_name = ? AND e.channel_name = ?
		ORDER BY e.entry_id, n.entry_id LIMIT 1`, append(append(args, nextArgs...), pkg, channel)...).
		Scan(&r.name, &r.content, &r.path, &r.version, &r.skipRange)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, s.wrap("bundle that replaces "+csvName, err)
	}
	return s.apiBundle(ctx, r, pkg, channel)
}

// gvkValue is the olm.gvk property value naming an API, as the index stores
// it (encoding/json of a map: keys sorted).
func gvkValue(g GVK) string {
	b, _ := json.Marshal(map[string]string{"group": g.Group, "version": g.Version, "kind": g.Kind})
	return string(b)
}

func nullString(r sql.NullString) string { return r.String }

// GetChannelEntriesThatProvide sends every channel entry whose bundle
// provides the API.
func (s *SQLite) GetChannelEntriesThatProvide(ctx context.Context, g GVK, send func(*api.ChannelEntry) error) error {
	notFound := &NotFoundError{fmt.Sprintf("no channel entries found that provide %s %s %s", g.Group, g.Version, g.Kind)}
	in, args, ok := s.providerArgs(g)
	if !ok {
		return notFound
	}
	n, err := s.sendEntries(ctx, "entries that provide "+g.Kind, send, nullString,
		`SELECT DISTINCT e.package_name, e.channel_name, e.operatorbundle_name, r.operatorbundle_name
		FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces
		WHERE e.entry_id IN `+in+` ORDER BY 1, 2, 3, 4`, args...)
	if err == nil && n == 0 {
		err = notFound
	}
	return err
}

// GetLatestChannelEntriesThatProvide sends, per package and channel, the
// entry nearest the head whose bundle provides the API.
func (s *SQLite) GetLatestChannelEntriesThatProvide(ctx context.Context, g GVK, send func(*api.ChannelEntry) error) error {
	notFound := &NotFoundError{fmt.Sprintf("no channel entries found that provide %s %s %s", g.Group, g.Version, g.Kind)}
	in, args, ok := s.providerArgs(g)
	if !ok {
		return notFound
	}
	// SQLite takes the bare columns of a MIN() aggregate from the row holding
	// the minimum.
	n, err := s.sendEntries(ctx, "latest entries that provide "+g.Kind, send, nullString,
		`SELECT package_name, channel_name, bundle, replaced FROM (
			SELECT e.package_name, e.channel_name, e.operatorbundle_name AS bundle, r.operatorbundle_name AS replaced, MIN(e.depth)
			FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces
			WHERE e.entry_id IN `+in+`
			GROUP BY e.package_name, e.channel_name)
		ORDER BY 1, 2`, args...)
	if err == nil && n == 0 {
		err = notFound
	}
	return err
}

// GetDefaultBundleThatProvides answers the bundle nearest the head of a
// default channel that provides the API (the first package by name).
func (s *SQLite) GetDefaultBundleThatProvides(ctx context.Context, g GVK) (*api.Bundle, error) {
	notFound := &NotFoundError{fmt.Sprintf("no entry found that provides %s %s %s", g.Group, g.Version, g.Kind)}
	in, args, ok := s.providerArgs(g)
	if !ok {
		return nil, notFound
	}
	// Choose by name first and read the chosen row after: reading the
	// manifests of every candidate row would walk their overflow pages.
	var name, pkg, ch sql.NullString
	var depth sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT ob.name, e.package_name, e.channel_name, MIN(e.depth)
		FROM channel_entry e
		JOIN operatorbundle ob ON ob.name = e.operatorbundle_name
		JOIN package pk ON pk.name = e.package_name
		WHERE e.entry_id IN `+in+` AND pk.default_channel = e.channel_name
		GROUP BY e.package_name, e.channel_name ORDER BY e.package_name, e.channel_name LIMIT 1`, args...).
		Scan(&name, &pkg, &ch, &depth)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, s.wrap("default bundle that provides "+g.Kind, err)
	}
	var r bundleRow
	err = s.db.QueryRowContext(ctx, `SELECT name, bundle, bundlepath, version, skiprange FROM operatorbundle WHERE name = ?`, name.String).
		Scan(&r.name, &r.content, &r.path, &r.version, &r.skipRange)
	if err != nil {
		return nil, s.wrap("default bundle that provides "+g.Kind, err)
	}
	// A bundle whose manifests the index does not hold (upstream's semver
	// modes keep only channel heads') is not an answer.
	if !r.content.Valid {
		return nil, notFound
	}
	return s.apiBundle(ctx, r, pkg.String, ch.String)
}

// listBundlesQuery gives one row per bundle and channel, with the channel
// graph's replaces and skips of that bundle (not the operatorbundle columns,
// which semver modes leave empty). channel_entry holds a bundle's inbound
// upgrade edges, several per bundle when it skips others: the edges on the
// chain followed from the entries of least depth (the heads) are "replaces"
// (the greatest replaced name when several), every other edge is a skip, in
// entry order. This is how upstream answers, and how it renders a database
// as a file-based catalog.
const listBundlesQuery = `WITH RECURSIVE
chain(entry_id, replaces) AS (
	SELECT entry_id, replaces FROM channel_entry WHERE depth = (SELECT MIN(depth) FROM channel_entry)
	UNION
	SELECT e.entry_id, e.replaces FROM channel_entry e JOIN chain c ON e.entry_id = c.replaces
),
member(package_name, channel_name, name, replaces) AS (
	SELECT e.package_name, e.channel_name, e.operatorbundle_name, MAX(r.operatorbundle_name)
	FROM channel_entry e
	LEFT JOIN chain c ON c.entry_id = e.entry_id
	LEFT JOIN channel_entry r ON r.entry_id = c.replaces
	GROUP BY e.operatorbundle_name, e.package_name, e.channel_name
),
skip_edge(entry_id, skipped) AS (
	SELECT entry_id, replaces FROM channel_entry WHERE replaces IS NOT NULL
	EXCEPT
	SELECT entry_id, replaces FROM chain
),
skipping(package_name, channel_name, name, skips) AS (
	SELECT package_name, channel_name, name, group_concat(skipped_name, ',') FROM (
		SELECT e.package_name, e.channel_name, e.operatorbundle_name AS name, s.operatorbundle_name AS skipped_name
		FROM skip_edge k
		JOIN channel_entry e ON e.entry_id = k.entry_id
		JOIN channel_entry s ON s.entry_id = k.skipped
		ORDER BY k.entry_id, k.skipped)
	GROUP BY name, package_name, channel_name
)
SELECT m.package_name, m.channel_name, ob.name, ob.bundlepath, ob.version, ob.skiprange, m.replaces, k.skips
FROM member m
JOIN operatorbundle ob ON ob.name = m.name
LEFT JOIN skipping k ON k.package_name = m.package_name AND k.channel_name = m.channel_name AND k.name = m.name
WHERE ob.version IS NOT NULL AND ob.bundlepath IS NOT NULL AND m.channel_name IS NOT NULL
ORDER BY ob.name, m.package_name, m.channel_name`

// ListBundles sends one message per bundle and channel, ordered by bundle
// name, package and channel, without manifests. The rows of the answer are
// read once and shared by every stream (the file never changes); each
// message's properties and dependencies are read when it is sent. So a
// stream holds no cursor and no sorted copy of a table while it waits for
// its client: a client that opens streams and never reads them costs the
// server little beyond gRPC's own per-stream buffer.
func (s *SQLite) ListBundles(ctx context.Context, send func(*api.Bundle) error) error {
	rows, err := s.listRows(ctx)
	if err != nil {
		return err
	}
	var cur string
	var curProps, curDeps []typedRow
	loaded := false
	for i := range rows {
		r := &rows[i]
		if !loaded || r.name != cur {
			cur, loaded = r.name, true
			if curProps, err = s.typedRows(ctx, "properties", s.props[cur], "", "", false); err != nil {
				return err
			}
			if curDeps, err = s.typedRows(ctx, "dependencies", s.deps[cur], "", "", false); err != nil {
				return err
			}
			curProps, curDeps = distinct(curProps), distinct(curDeps)
		}
		b := &api.Bundle{
			CsvName: r.name, PackageName: r.pkg, ChannelName: r.ch,
			BundlePath: r.path, Version: r.version, SkipRange: r.skipRange, Replaces: r.replaces,
			Deprecation: s.bundleDeprecation(r.pkg, r.name),
		}
		if r.hasSkips {
			b.Skips = strings.Split(r.skips, ",")
		}
		for _, p := range curProps {
			if servedProperty(p.typ) {
				b.Properties = append(b.Properties, &api.Property{Type: p.typ, Value: p.value})
			}
		}
		for _, d := range curDeps {
			b.Dependencies = append(b.Dependencies, &api.Dependency{Type: d.typ, Value: d.value})
		}
		b.ProvidedApis = gvks(curProps, false)
		b.RequiredApis = gvks(curDeps, true)
		if err := send(b); err != nil {
			return err
		}
	}
	return nil
}

// listRow is one row of listBundlesQuery.
type listRow struct {
	pkg, ch, name, path, version, skipRange, replaces, skips string
	hasSkips                                                 bool
}

// listRows runs listBundlesQuery once and keeps its rows. A failed or
// cancelled read is not kept: the next call tries again.
func (s *SQLite) listRows(ctx context.Context) ([]listRow, error) {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	if s.list != nil {
		return s.list, nil
	}
	rows, err := s.db.QueryContext(ctx, listBundlesQuery)
	if err != nil {
		return nil, s.wrap("list bundles", err)
	}
	defer rows.Close()
	out := []listRow{}
	for rows.Next() {
		var pkg, ch, name, path, version, skipRange, replaces, skips sql.NullString
		if err := rows.Scan(&pkg, &ch, &name, &path, &version, &skipRange, &replaces, &skips); err != nil {
			return nil, s.wrap("list bundles", err)
		}
		out = append(out, listRow{pkg.String, ch.String, name.String, path.String, version.String, skipRange.String, replaces.String, skips.String, skips.Valid})
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("list bundles", err)
	}
	s.list = out
	return out, nil
}

func distinct(rows []typedRow) []typedRow {
	seen := map[typedRow]bool{}
	out := rows[:0]
	for _, r := range rows {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
