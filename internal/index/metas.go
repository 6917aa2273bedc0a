package index

import (
	"context"
	"database/sql"
	"fmt"
)

// Meta is a blob of a file-based catalog that the tables of schema 13 have
// no place for: an olm.deprecations blob, or one of a schema OLM does not
// define (custom schemas). A database made from a catalog keeps them, as
// they were, in a table of opm's own, so that serving it answers them and
// rendering it gives them back.
type Meta struct {
	Schema string
	// Package is the blob's "package" ("" when it has none).
	Package string
	// Name is the blob's "name" ("" when it has none).
	Name string
	Blob []byte
}

// MetaTable is opm's table of catalog blobs. Upstream's readers and
// writers ignore tables they do not know, so a database holding it stays
// an ordinary schema-13 index; only databases made from a catalog with
// such blobs have it.
const MetaTable = "opm_catalog_meta"

var metaDDL = []string{
	`CREATE TABLE IF NOT EXISTS ` + MetaTable + ` (
	schema TEXT NOT NULL,
	package_name TEXT NOT NULL DEFAULT '',
	name TEXT NOT NULL DEFAULT '',
	blob TEXT NOT NULL
)`,
	// Servers look blobs up by schema and package.
	`CREATE INDEX IF NOT EXISTS ` + MetaTable + `_key ON ` + MetaTable + `(schema, package_name)`,
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// writeMetas stores blobs, in order, creating the table when needed.
func writeMetas(ctx context.Context, tx execer, metas []Meta) error {
	if len(metas) == 0 {
		return nil
	}
	for _, q := range metaDDL {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create %s: %w", MetaTable, err)
		}
	}
	for _, m := range metas {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+MetaTable+` (schema, package_name, name, blob) VALUES (?, ?, ?, ?)`,
			m.Schema, m.Package, m.Name, string(m.Blob)); err != nil {
			return fmt.Errorf("store %s blob of package %q: %w", m.Schema, m.Package, err)
		}
	}
	return nil
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// hasMetaTable reports whether the database has opm's table of blobs.
func hasMetaTable(ctx context.Context, q rowQuerier) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, MetaTable).Scan(&n)
	return n > 0, err
}

// deleteMetas removes the blobs of a package (when the table exists).
func deleteMetas(ctx context.Context, tx *sql.Tx, pkg string) error {
	ok, err := hasMetaTable(ctx, tx)
	if err != nil || !ok {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM `+MetaTable+` WHERE package_name = ?`, pkg)
	return err
}

// Metas reads the catalog blobs the database keeps, in the order they were
// stored; none for a database without opm's table.
func (d *DB) Metas(ctx context.Context) ([]Meta, error) {
	ok, err := hasMetaTable(ctx, d.sql)
	if err != nil {
		return nil, fmt.Errorf("read index %s: %w", d.path, err)
	}
	if !ok {
		return nil, nil
	}
	var out []Meta
	err = queryEach(ctx, d.sql, `SELECT schema, package_name, name, blob FROM `+MetaTable+` ORDER BY rowid`, nil, func(s scanner) error {
		var m Meta
		var blob string
		if err := s.Scan(&m.Schema, &m.Package, &m.Name, &blob); err != nil {
			return err
		}
		m.Blob = []byte(blob)
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read index %s: %s: %w", d.path, MetaTable, err)
	}
	return out, nil
}
