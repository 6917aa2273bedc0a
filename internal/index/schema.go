package index

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3" // the sqlite driver (cgo)

	"github.com/opmkit/opm/internal/atomicfile"
)

// SchemaVersion is the schema_migrations version opm reads and writes: the
// last one upstream operator-registry defined.
const SchemaVersion = 13

// schemaTables are the DDL statements of schema 13, in creation order, with the
// same tables, columns, keys and index as upstream's migrations produce.
var schemaTables = []string{
	`CREATE TABLE schema_migrations (
	version bigint NOT NULL,
	timestamp DATETIME DEFAULT CURRENT_TIMESTAMP
)`,
	`CREATE TABLE api (
	group_name TEXT,
	version TEXT,
	kind TEXT,
	plural TEXT NOT NULL,
	PRIMARY KEY(group_name, version, kind)
)`,
	`CREATE TABLE operatorbundle (
	name TEXT PRIMARY KEY,
	csv TEXT,
	bundle TEXT,
	bundlepath TEXT, skiprange TEXT, version TEXT, replaces TEXT, skips TEXT, substitutesfor TEXT)`,
	`CREATE TABLE package (
	name TEXT PRIMARY KEY,
	default_channel TEXT,
	FOREIGN KEY(name, default_channel) REFERENCES channel(package_name,name) ON DELETE CASCADE
)`,
	`CREATE TABLE channel (
	name TEXT,
	package_name TEXT,
	head_operatorbundle_name TEXT,
	PRIMARY KEY(name, package_name),
	FOREIGN KEY(head_operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE
)`,
	`CREATE TABLE channel_entry (
	entry_id INTEGER PRIMARY KEY,
	channel_name TEXT,
	package_name TEXT,
	operatorbundle_name TEXT,
	replaces INTEGER,
	depth INTEGER,
	FOREIGN KEY(replaces) REFERENCES channel_entry(entry_id) DEFERRABLE INITIALLY DEFERRED,
	FOREIGN KEY(channel_name, package_name) REFERENCES channel(name, package_name) ON DELETE CASCADE
)`,
	`CREATE TABLE related_image (
	image TEXT,
	operatorbundle_name TEXT,
	FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE
)`,
	`CREATE TABLE api_provider (
	group_name TEXT,
	version TEXT,
	kind TEXT,
	operatorbundle_name TEXT,
	operatorbundle_version TEXT,
	operatorbundle_path TEXT,
	FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
	FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE
)`,
	`CREATE TABLE api_requirer (
	group_name TEXT,
	version TEXT,
	kind TEXT,
	operatorbundle_name TEXT,
	operatorbundle_version TEXT,
	operatorbundle_path TEXT,
	FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
	FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE
)`,
	`CREATE UNIQUE INDEX pk ON operatorbundle(name, version, bundlepath)`,
	`CREATE TABLE dependencies (
	type TEXT,
	value TEXT,
	operatorbundle_name TEXT,
	operatorbundle_version TEXT,
	operatorbundle_path TEXT,
	FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE
)`,
	`CREATE TABLE properties (
	type TEXT,
	value TEXT,
	operatorbundle_name TEXT,
	operatorbundle_version TEXT,
	operatorbundle_path TEXT,
	FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE
)`,
	`CREATE TABLE deprecated (
	operatorbundle_name TEXT PRIMARY KEY
)`,
}

// The api cleanup triggers. Upstream's delete an api row when NOT EXISTS a row
// of "api_provider JOIN api_requirer" (a cross join) matching it: when
// api_requirer is empty the join is empty, so removing one provider deleted
// the api and, by ON DELETE CASCADE, every other bundle's provider row too.
// These keep the names and events but test each table on its own, so an api
// stays while any bundle provides or requires it (docs/compatibility.md).
const (
	providerTrigger = `CREATE TRIGGER api_provider_cleanup
AFTER DELETE ON api_provider
WHEN NOT EXISTS (SELECT 1 FROM api_provider WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind)
 AND NOT EXISTS (SELECT 1 FROM api_requirer WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind)
BEGIN
	DELETE FROM api WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind;
END`
	requirerTrigger = `CREATE TRIGGER api_requirer_cleanup
AFTER DELETE ON api_requirer
WHEN NOT EXISTS (SELECT 1 FROM api_provider WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind)
 AND NOT EXISTS (SELECT 1 FROM api_requirer WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind)
BEGIN
	DELETE FROM api WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind;
END`
)

// requiredTables are the tables readers expect.
var requiredTables = []string{"schema_migrations", "api", "operatorbundle", "package", "channel", "channel_entry",
	"related_image", "api_provider", "api_requirer", "dependencies", "properties", "deprecated"}

// Errors of Open.
var (
	// ErrNotIndex: the file is not an operator index database.
	ErrNotIndex = errors.New("not an operator index database")
	// ErrSchemaVersion: the database has a schema version opm does not write.
	ErrSchemaVersion = errors.New("unsupported index schema version")
	// ErrCorrupt: sqlite's integrity check found damage in the database.
	ErrCorrupt = errors.New("index database is corrupt")
)

var sqliteMagic = []byte("SQLite format 3\x00")

// DB is an open index database.
type DB struct {
	path     string
	sql      *sql.DB
	readOnly bool
	// verifiedLog is set when the file was verified on open (checked, or
	// recorded as opm left it): Close records the file as opm leaves it.
	verifiedLog string
	// rolledBack is set when a read-only open found a hot journal and
	// reads a private rolled-back copy; cleanup removes that copy.
	rolledBack bool
	cleanup    func()
}

// RolledBack reports whether the file had the journal of a write that never
// committed, so that what is read is a private copy with the write rolled
// back (the file itself is untouched).
func (d *DB) RolledBack() bool { return d.rolledBack }

// Path is the file the database was opened from.
func (d *DB) Path() string { return d.path }

// Close closes the database.
func (d *DB) Close() error {
	if d == nil || d.sql == nil {
		return nil
	}
	// A backstop for writes that failed without settling (see
	// settleFailedWrite): no journal is left behind a closed handle.
	d.settleFailedWrite()
	err := d.sql.Close()
	d.sql = nil
	if d.cleanup != nil {
		d.cleanup()
		d.cleanup = nil
	}
	if err == nil && d.verifiedLog != "" {
		setVerified(d.verifiedLog, d.path, true)
	}
	return err
}

func dsn(path string, readOnly, scratch bool) string {
	// A file: URI: escape the characters that would end the path.
	p := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
	mode := "rw"
	if readOnly {
		mode = "ro"
	}
	d := "file:" + p + "?mode=" + mode + "&_foreign_keys=1&_busy_timeout=10000&_txlock=immediate"
	if scratch {
		d += "&_sync=OFF"
	}
	return d
}

// Open opens an existing index database for reading and writing. The file
// must be an SQLite database at schema version 13: older versions (0–12,
// written by old upstream releases) are refused, not migrated, with a message
// saying how to proceed (see docs/compatibility.md).
//
// Before any write can happen, Open runs sqlite's quick_check over the whole
// file (about 0.8 s per GiB) and refuses a damaged one with ErrCorrupt; see
// OpenWith to skip that.
func Open(path string) (*DB, error) { return open(path, false, OpenOptions{}) }

// OpenOptions tune OpenWith.
type OpenOptions struct {
	// SkipQuickCheck leaves out the whole-file quick_check, so that opening
	// costs the same whatever the database's size. Damage in the pages a
	// write reads still fails that write with ErrCorrupt (rolled back,
	// nothing written); damage elsewhere is left as it is, unseen.
	SkipQuickCheck bool
	// VerifiedLog, when set, names a file that records databases opm
	// checked and then changed only through sqlite (see DefaultVerifiedLog):
	// a file exactly as opm left it is not checked again, and Close records
	// the file as it leaves it.
	VerifiedLog string
	// Scratch says the database need not survive a crash of the machine:
	// a temporary one, or one whose digest is checked before it is used
	// (a serve cache). Its writes skip sqlite's fsyncs (synchronous=OFF),
	// which at a catalog's size is flushing hundreds of MB to disk.
	Scratch bool
}

// OpenWith is Open with options.
func OpenWith(path string, opts OpenOptions) (*DB, error) { return open(path, false, opts) }

// OpenReadOnly opens an existing index database for reading only (inspect,
// export); it never writes, so it works on read-only files and directories.
// A database left with the journal of a write that never committed (a
// killed writer) is read from a private copy with that write rolled back
// (see RolledBack); one being written now is refused with ErrHotJournal.
func OpenReadOnly(path string) (*DB, error) { return open(path, true, OpenOptions{}) }

func open(path string, readOnly bool, opts OpenOptions) (*DB, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	file, rolledBack, cleanup := path, false, func() {}
	if readOnly {
		// A read-only connection cannot play a hot journal back: sqlite
		// fails with "attempt to write a readonly database".
		var err error
		if file, rolledBack, cleanup, err = Committed(path); err != nil {
			return nil, err
		}
	}
	sdb, err := sql.Open("sqlite3", dsn(file, readOnly, opts.Scratch))
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	// One connection: sqlite has one writer, and transactions stay on it.
	sdb.SetMaxOpenConns(1)
	d := &DB{path: path, sql: sdb, readOnly: readOnly, rolledBack: rolledBack, cleanup: cleanup}
	if err := d.checkSchema(context.Background()); err != nil {
		sdb.Close()
		cleanup()
		return nil, corruptErr(path, err)
	}
	if !readOnly && !opts.SkipQuickCheck {
		// Writing into a damaged file spreads the damage into the pages
		// the write touches and hides it until a reader trips on it.
		if opts.VerifiedLog == "" || !isVerified(opts.VerifiedLog, path) {
			if err := d.QuickCheck(context.Background()); err != nil {
				sdb.Close()
				cleanup()
				if opts.VerifiedLog != "" {
					setVerified(opts.VerifiedLog, path, false)
				}
				return nil, err
			}
		}
		d.verifiedLog = opts.VerifiedLog
	}
	return d, nil
}

// corruptErr turns sqlite's "malformed" errors, met while reading the
// schema or writing, into ErrCorrupt naming the file.
func corruptErr(path string, err error) error {
	if err != nil && !errors.Is(err, ErrCorrupt) && isMalformed(err) {
		return fmt.Errorf("open index %s: %w: %v; restore it from a backup or rebuild the index from its bundles", path, ErrCorrupt, err)
	}
	return err
}

func isMalformed(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	return strings.Contains(err.Error(), "malformed")
}

// QuickCheck runs sqlite's "PRAGMA quick_check" (every page and record well
// formed, without the index-content cross-check of integrity_check) and
// returns ErrCorrupt, naming the file and the first problems found, when it
// reports anything but "ok".
func (d *DB) QuickCheck(ctx context.Context) error {
	rows, err := d.sql.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		if isMalformed(err) {
			return fmt.Errorf("check index %s: %w: %v; restore it from a backup or rebuild the index from its bundles", d.path, ErrCorrupt, err)
		}
		return fmt.Errorf("check index %s: %w", d.path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return fmt.Errorf("check index %s: %w", d.path, err)
		}
		// sqlite heads the list with "*** in database main ***".
		for _, line := range strings.Split(msg, "\n") {
			if line = strings.TrimSpace(line); line != "ok" && line != "" && !strings.HasPrefix(line, "***") {
				problems = append(problems, line)
			}
		}
	}
	if err := rows.Err(); err != nil {
		if isMalformed(err) {
			return fmt.Errorf("check index %s: %w: %v; restore it from a backup or rebuild the index from its bundles", d.path, ErrCorrupt, err)
		}
		return fmt.Errorf("check index %s: %w", d.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("check index %s: %w: sqlite quick_check found: %s; nothing was written; restore it from a backup or rebuild the index from its bundles",
			d.path, ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open index: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open index: %w", err)
	}
	if st.IsDir() {
		return fmt.Errorf("open index %s: %w: it is a directory (give the database file, e.g. database/index.db)", path, ErrNotIndex)
	}
	if st.Size() == 0 {
		return fmt.Errorf("open index %s: %w: the file is empty (create a new index instead)", path, ErrNotIndex)
	}
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, sqliteMagic) {
		return fmt.Errorf("open index %s: %w: the file is not an SQLite database", path, ErrNotIndex)
	}
	return nil
}

func (d *DB) checkSchema(ctx context.Context) error {
	rows, err := d.sql.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return fmt.Errorf("open index %s: read schema: %w", d.path, err)
	}
	tables := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("open index %s: read schema: %w", d.path, err)
		}
		tables[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("open index %s: read schema: %w", d.path, err)
	}
	if !tables["schema_migrations"] {
		return fmt.Errorf("open index %s: %w: an SQLite database without the schema_migrations table", d.path, ErrNotIndex)
	}
	var version sql.NullInt64
	if err := d.sql.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&version); err != nil {
		return fmt.Errorf("open index %s: read schema version: %w", d.path, err)
	}
	switch {
	case !version.Valid:
		return fmt.Errorf("open index %s: %w: schema_migrations is empty", d.path, ErrNotIndex)
	case version.Int64 < SchemaVersion:
		return fmt.Errorf("open index %s: %w: it is at schema version %d and opm reads and writes only version %d; "+
			"opm does not migrate old databases: open it once with a write command of upstream opm v1.73.0 (which migrates to %d), or rebuild the index from its bundles",
			d.path, ErrSchemaVersion, version.Int64, SchemaVersion, SchemaVersion)
	case version.Int64 > SchemaVersion:
		return fmt.Errorf("open index %s: %w: it is at schema version %d, newer than the version %d opm knows; use the tool that wrote it",
			d.path, ErrSchemaVersion, version.Int64, SchemaVersion)
	}
	var missing []string
	for _, t := range requiredTables {
		if !tables[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("open index %s: %w: schema version %d but table(s) %s missing", d.path, ErrNotIndex, SchemaVersion, strings.Join(missing, ", "))
	}
	return nil
}

// Create creates a new, empty index database at path (schema version 13) and
// opens it. The file appears whole or not at all: the schema is written to a
// temporary file in the same directory, which is then linked into place; an
// existing file at path is an error.
func Create(path string) (*DB, error) { return CreateWith(path, OpenOptions{}) }

// CreateWith is Create, opening the new database with options.
func CreateWith(path string, opts OpenOptions) (*DB, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("create index %s: %w", path, os.ErrExist)
	}
	dir := filepath.Dir(path)
	if _, err := atomicfile.CleanStale(path); err != nil {
		return nil, fmt.Errorf("create index %s: clean up after an earlier run: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, atomicfile.TempPattern(path, atomicfile.KindTmp))
	if err != nil {
		return nil, fmt.Errorf("create index %s: %w", path, err)
	}
	tmpName := tmp.Name()
	// CreateTemp makes 0600 files; an index database is read by other
	// users (a serving image runs as another uid), like upstream's 0644.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmpName)
		return nil, fmt.Errorf("create index %s: %w", path, err)
	}
	tmp.Close()
	defer os.Remove(tmpName)
	defer os.Remove(tmpName + "-journal")

	if err := initSchema(tmpName); err != nil {
		return nil, fmt.Errorf("create index %s: %w", path, err)
	}
	if err := syncFile(tmpName); err != nil {
		return nil, fmt.Errorf("create index %s: %w", path, err)
	}
	// Link, not rename: never replace a file that appeared meanwhile.
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create index %s: another process created it meanwhile (two commands creating the same new database at once); run again to add to it: %w", path, os.ErrExist)
		}
		return nil, fmt.Errorf("create index %s: %w", path, err)
	}
	syncDir(dir)
	return OpenWith(path, opts)
}

func initSchema(path string) error {
	sdb, err := sql.Open("sqlite3", "file:"+strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)+"?mode=rwc&_foreign_keys=1&_txlock=immediate")
	if err != nil {
		return err
	}
	defer sdb.Close()
	sdb.SetMaxOpenConns(1)
	tx, err := sdb.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range append(append([]string{}, schemaTables...), providerTrigger, requirerTrigger) {
		if _, err := tx.Exec(stmt); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
	}
	if _, err := tx.Exec(`INSERT INTO schema_migrations(version, timestamp) VALUES (?, ?)`, SchemaVersion, migrationTimestamp()); err != nil {
		return fmt.Errorf("schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return sdb.Close()
}

// fixedTimestamp is schema_migrations.timestamp when SOURCE_DATE_EPOCH is
// not set: no reader uses the column, and a clock value would make two
// builds of the same bundles differ.
const fixedTimestamp = "1970-01-01 00:00:00"

// migrationTimestamp is the schema_migrations.timestamp of a new database:
// SOURCE_DATE_EPOCH (reproducible-builds.org) when it is a valid number of
// seconds, else fixedTimestamp. The text has the form sqlite's
// CURRENT_TIMESTAMP writes.
func migrationTimestamp() string {
	if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil && sec >= 0 {
			return time.Unix(sec, 0).UTC().Format("2006-01-02 15:04:05")
		}
	}
	return fixedTimestamp
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		_ = f.Sync()
		f.Close()
	}
}

// fixTriggers replaces upstream's api cleanup triggers by opm's (see
// providerTrigger) inside tx, and reports whether it changed anything.
func fixTriggers(ctx context.Context, tx *sql.Tx) (bool, error) {
	want := map[string]string{"api_provider_cleanup": providerTrigger, "api_requirer_cleanup": requirerTrigger}
	changed := false
	for _, name := range []string{"api_provider_cleanup", "api_requirer_cleanup"} {
		var got sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?`, name).Scan(&got)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("read trigger %s: %w", name, err)
		}
		if got.Valid && got.String == want[name] {
			continue
		}
		if got.Valid {
			if _, err := tx.ExecContext(ctx, `DROP TRIGGER `+name); err != nil {
				return false, fmt.Errorf("replace trigger %s: %w", name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, want[name]); err != nil {
			return false, fmt.Errorf("replace trigger %s: %w", name, err)
		}
		changed = true
	}
	return changed, nil
}
