package index

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrHotJournal means a database has the rollback journal of a write that
// never committed: the file holds some of that write's pages, and only a
// rollback restores the committed content.
var ErrHotJournal = errors.New("the database has the journal of an unfinished write")

// journalMagic starts the header of a rollback journal that still has to be
// played back (sqlite zeroes or deletes it once the write commits).
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// JournalState is what JournalOf found beside a database.
type JournalState int

// States of a database's rollback journal.
const (
	// NoJournal: no journal to play back; the file is what was committed.
	NoJournal JournalState = iota
	// HotJournal: a writer stopped (killed, crashed, power lost) before
	// committing; its journal must be played back first.
	HotJournal
	// LiveWriter: a process is writing the database now.
	LiveWriter
)

// JournalOf looks at path's rollback journal. A journal with its header
// intact is hot unless a process holds the database's write lock (then a
// write is in progress; writerPID is that process where the system says).
func JournalOf(path string) (state JournalState, writerPID int, err error) {
	f, err := os.Open(path + "-journal")
	if errors.Is(err, os.ErrNotExist) {
		return NoJournal, 0, nil
	}
	if err != nil {
		return NoJournal, 0, fmt.Errorf("open index %s: read its journal: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(journalMagic))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, journalMagic) {
		return NoJournal, 0, nil // empty or zeroed: committed
	}
	if pid, held := writeLockHolder(path); held {
		return LiveWriter, pid, nil
	}
	return HotJournal, 0, nil
}

// hotJournalError says what happened to path and how to recover.
func hotJournalError(path string, cause error) error {
	msg := fmt.Sprintf("open index %s: %v: %s-journal is left by a write that stopped before committing (a killed or crashed opm, sqlite3 or upstream opm)", path, ErrHotJournal, path)
	if cause != nil {
		msg += fmt.Sprintf(", and rolling it back in a private copy failed (%v)", cause)
	}
	return fmt.Errorf("%s; roll it back by opening the database once with write access, e.g. `sqlite3 %s 'PRAGMA quick_check'` as a user who can write its directory (keep the journal until then: it holds the committed pages), or restore the database from a backup: %w",
		msg, path, ErrHotJournal)
}

// RolledBackWarning is the one line a reader shows when it read path
// through a rolled-back private copy (see Committed): what happened, that
// what it read is the committed content, and how to roll the file itself
// back.
func RolledBackWarning(path string) string {
	return fmt.Sprintf("%s has the journal of a write that never committed (a killed writer); read the committed content from a private copy with that write rolled back (the file is untouched: open it once with write access, e.g. `sqlite3 %s 'PRAGMA quick_check'`, to roll it back in place)", path, path)
}

// liveWriterError says that a process is writing path now.
func liveWriterError(path string, pid int) error {
	who := "another process"
	if pid > 0 {
		who = fmt.Sprintf("process %d", pid)
	}
	return fmt.Errorf("open index %s: %s is writing it now (%s-journal is open); read it once the write has finished: %w", path, who, path, ErrHotJournal)
}

// RolledBackCopy copies path and its hot journal into a new temporary
// directory and lets sqlite play the journal back there: the copy holds the
// database as last committed, and the original is not touched (readers may
// have no write access to it). cleanup removes the copy.
func RolledBackCopy(path string) (copyPath string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "opm-rollback-")
	if err != nil {
		return "", nil, hotJournalError(path, err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	copyPath = filepath.Join(dir, "index.db")
	if err := copyPrivate(path, copyPath); err != nil {
		cleanup()
		return "", nil, hotJournalError(path, err)
	}
	if err := copyPrivate(path+"-journal", copyPath+"-journal"); err != nil {
		cleanup()
		return "", nil, hotJournalError(path, err)
	}
	// The first read of a database with a hot journal and no lock holder
	// rolls the journal back (sqlite's own recovery).
	p := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(copyPath)
	db, err := sql.Open("sqlite3", "file:"+p+"?mode=rw")
	if err == nil {
		var n int
		err = db.QueryRow(`SELECT COUNT(*) FROM sqlite_master`).Scan(&n)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		var st JournalState
		if st, _, err = JournalOf(copyPath); err == nil && st != NoJournal {
			err = errors.New("the journal is still there after the rollback")
		}
	}
	if err != nil {
		cleanup()
		return "", nil, hotJournalError(path, err)
	}
	return copyPath, cleanup, nil
}

// Committed returns a path holding path's committed content for a reader
// that opens files read-only: path itself when it has no hot journal, else
// a rolled-back private copy (rolledBack true; cleanup removes it). A
// database being written now is refused with ErrHotJournal.
func Committed(path string) (committed string, rolledBack bool, cleanup func(), err error) {
	state, pid, err := JournalOf(path)
	if err != nil {
		return "", false, nil, err
	}
	switch state {
	case HotJournal:
		c, cleanup, err := RolledBackCopy(path)
		if err != nil {
			return "", false, nil, err
		}
		return c, true, cleanup, nil
	case LiveWriter:
		return "", false, nil, liveWriterError(path, pid)
	}
	return path, false, func() {}, nil
}

func copyPrivate(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// settleFailedWrite rolls the file back after a write failed. An I/O error
// mid-write (a full disk: ENOSPC while spilling pages or committing) leaves
// sqlite's pager in its error state with the journal still hot, and the
// transaction's rollback does not play it back: the file keeps the pages
// already written until some connection reads it again. Reading once here
// plays the journal back (it rewrites the original pages and shrinks the
// file, so it needs no new space) and deletes it, so a failed write leaves
// the file as it was and readers never meet a "killed writer's" journal.
func (d *DB) settleFailedWrite() {
	if d == nil || d.sql == nil || d.readOnly {
		return
	}
	// Only a hot journal: another process's live write is left alone
	// (reading would wait for it).
	if st, _, err := JournalOf(d.path); err != nil || st != HotJournal {
		return
	}
	var n int
	_ = d.sql.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n)
}

// rollBack ends a write transaction that did not commit (after a commit it
// does nothing) and settles the file (see settleFailedWrite).
func (d *DB) rollBack(tx *sql.Tx) {
	_ = tx.Rollback()
	d.settleFailedWrite()
}

// HasWAL reports whether path has a non-empty write-ahead log beside it: a
// WAL-mode database whose last commits (a writer killed, or still open,
// before a checkpoint) live only in path-wal, not yet in the file.
func HasWAL(path string) bool {
	st, err := os.Stat(path + "-wal")
	return err == nil && st.Mode().IsRegular() && st.Size() > 0
}

// CheckpointedCopy copies path and its write-ahead log into a new temporary
// directory and checkpoints the log into the copy: the copy is a plain
// (rollback-journal) database holding everything committed, for a reader
// that opens files immutable, which ignores the log and would see the
// content before those commits. The original is not touched. cleanup
// removes the copy.
func CheckpointedCopy(path string) (copyPath string, cleanup func(), err error) {
	fail := func(err error) error {
		return fmt.Errorf("open index %s: read the commits in its write-ahead log %s-wal through a private copy: %w", path, path, err)
	}
	dir, err := os.MkdirTemp("", "opm-wal-")
	if err != nil {
		return "", nil, fail(err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	copyPath = filepath.Join(dir, "index.db")
	// The file first, then the log: frames a checkpoint moves into the file
	// meanwhile are still in the copied log, which the copy replays.
	if err := copyPrivate(path, copyPath); err != nil {
		cleanup()
		return "", nil, fail(err)
	}
	if err := copyPrivate(path+"-wal", copyPath+"-wal"); err != nil {
		cleanup()
		return "", nil, fail(err)
	}
	// Leaving WAL mode checkpoints every committed frame into the file and
	// deletes the log; frames of a transaction that never committed are
	// dropped by sqlite's recovery.
	p := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(copyPath)
	db, err := sql.Open("sqlite3", "file:"+p+"?mode=rw")
	if err == nil {
		var mode string
		err = db.QueryRow(`PRAGMA journal_mode = DELETE`).Scan(&mode)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err == nil && mode != "delete" {
			err = fmt.Errorf("journal mode is %q after the checkpoint", mode)
		}
	}
	if err == nil && HasWAL(copyPath) {
		err = errors.New("the log is still there after the checkpoint")
	}
	if err != nil {
		cleanup()
		return "", nil, fail(err)
	}
	return copyPath, cleanup, nil
}
