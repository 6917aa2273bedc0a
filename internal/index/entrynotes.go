package index

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
)

// EntryNoteTable is opm's table of what schema 13 cannot say about the
// channel entries of a file-based catalog:
//
//   - Rows that are not entries of their channel. An entry that replaces or
//     skips a bundle of another channel needs a row naming that bundle in
//     its own channel (the replaces column points at a row), and every
//     reader takes a row whose name is a bundle for a member of the
//     channel. Such rows are noted edge_only.
//   - An entry's skipRange when it is not the bundle's: operatorbundle has
//     one skiprange per bundle, a catalog one per channel entry.
//
// A database made from a catalog notes them so that opm's readers (render,
// migrate, opm serve) give the catalog back as it was. Upstream's readers
// ignore the table: to them such a bundle is an entry of the channel, with
// the bundle's skipRange, as in every database upstream wrote. Only
// databases that need a note have the table.
const EntryNoteTable = "opm_channel_entry_note"

var entryNoteDDL = `CREATE TABLE IF NOT EXISTS ` + EntryNoteTable + ` (
	package_name TEXT NOT NULL,
	channel_name TEXT NOT NULL,
	operatorbundle_name TEXT NOT NULL,
	edge_only INTEGER NOT NULL DEFAULT 0,
	skiprange TEXT,
	PRIMARY KEY (package_name, channel_name, operatorbundle_name)
)`

// EntryKey names a bundle in a channel.
type EntryKey struct {
	Package, Channel, Bundle string
}

// EntryNote is what EntryNoteTable says of a bundle in a channel.
type EntryNote struct {
	// EdgeOnly says the channel's rows name the bundle only as the
	// target of an upgrade edge: it is not an entry of the channel.
	EdgeOnly bool
	// SkipRange, when HasSkipRange, is the entry's skipRange ("" for
	// none), in place of the bundle's.
	SkipRange    string
	HasSkipRange bool
}

type entryNote struct {
	EntryKey
	EntryNote
}

// writeEntryNotes stores notes, creating the table when needed.
func writeEntryNotes(ctx context.Context, tx execer, notes []entryNote) error {
	if len(notes) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, entryNoteDDL); err != nil {
		return fmt.Errorf("create %s: %w", EntryNoteTable, err)
	}
	for _, n := range notes {
		var sr any
		if n.HasSkipRange {
			sr = n.SkipRange
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO `+EntryNoteTable+` (package_name, channel_name, operatorbundle_name, edge_only, skiprange) VALUES (?, ?, ?, ?, ?)`,
			n.Package, n.Channel, n.Bundle, n.EdgeOnly, sr); err != nil {
			return fmt.Errorf("note entry %s of channel %s: %w", n.Bundle, n.Channel, err)
		}
	}
	return nil
}

// deleteEntryNotes forgets the notes of a package whose channels are
// rewritten or removed: a rewrite lays channels out from bundles, as
// upstream does, and every row it writes is an entry with its bundle's
// skipRange.
func deleteEntryNotes(ctx context.Context, tx Querier, pkg string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, EntryNoteTable).Scan(&n); err != nil || n == 0 {
		return err
	}
	_, err := tx.(execer).ExecContext(ctx, `DELETE FROM `+EntryNoteTable+` WHERE package_name = ?`, pkg)
	return err
}

// ReadEntryNotes reads EntryNoteTable (none when the database lacks it).
func ReadEntryNotes(ctx context.Context, q Querier) (map[EntryKey]EntryNote, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, EntryNoteTable).Scan(&n); err != nil {
		return nil, fmt.Errorf("read %s: %w", EntryNoteTable, err)
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT package_name, channel_name, operatorbundle_name, edge_only, skiprange FROM `+EntryNoteTable)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", EntryNoteTable, err)
	}
	defer rows.Close()
	out := map[EntryKey]EntryNote{}
	for rows.Next() {
		var k EntryKey
		var v EntryNote
		var sr sql.NullString
		if err := rows.Scan(&k.Package, &k.Channel, &k.Bundle, &v.EdgeOnly, &sr); err != nil {
			return nil, fmt.Errorf("read %s: %w", EntryNoteTable, err)
		}
		v.SkipRange, v.HasSkipRange = sr.String, sr.Valid
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", EntryNoteTable, err)
	}
	return out, nil
}

// Querier reads a database: *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// CatalogEntry is an entry of a channel as a file-based catalog states it.
type CatalogEntry struct {
	Name      string
	Replaces  string
	Skips     []string
	SkipRange string
}

// ChannelEntries derives a channel's entries from its channel_entry rows
// (in entry id order) the way upstream read them: the chain starts at the
// rows at depth tip (the head) and follows replaces; a bundle's replaces is
// the (greatest) name its chain rows replace, and its skips are the names
// its other rows replace, in row order. Rows whose name is no bundle of the
// package (bundle says which, and gives its skipRange) or that are noted
// EdgeOnly are no entries. Entries are sorted by name.
func ChannelEntries(rows []EntryDump, tip int64, bundle func(name string) (skipRange string, ok bool)) []CatalogEntry {
	byID := make(map[int64]*EntryDump, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	chain := map[int64]bool{}
	var stack []int64
	for _, e := range rows {
		if e.Depth == tip {
			stack = append(stack, e.ID)
		}
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e, ok := byID[id]
		if !ok || chain[id] {
			continue
		}
		chain[id] = true
		if e.Replaces != 0 {
			stack = append(stack, e.Replaces)
		}
	}
	entries := map[string]*CatalogEntry{}
	var names []string
	for _, e := range rows {
		if e.EdgeOnly {
			continue // a replaced or skipped name, not an entry of the channel
		}
		skipRange, ok := bundle(e.Bundle)
		if !ok {
			continue // a skipped name, not a bundle of the package
		}
		ce := entries[e.Bundle]
		if ce == nil {
			ce = &CatalogEntry{Name: e.Bundle, SkipRange: skipRange}
			entries[e.Bundle] = ce
			names = append(names, e.Bundle)
		}
		if e.HasSkipRange {
			ce.SkipRange = e.SkipRange
		}
		if e.Replaces == 0 {
			continue
		}
		to, ok := byID[e.Replaces]
		if !ok {
			continue
		}
		if chain[e.ID] {
			if to.Bundle > ce.Replaces {
				ce.Replaces = to.Bundle
			}
		} else {
			ce.Skips = append(ce.Skips, to.Bundle)
		}
	}
	sort.Strings(names)
	out := make([]CatalogEntry, 0, len(names))
	for _, n := range names {
		out = append(out, *entries[n])
	}
	return out
}
