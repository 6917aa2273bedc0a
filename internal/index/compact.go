package index

import (
	"context"
	"fmt"
)

// CompactThreshold is the share of free pages above which Compact rewrites
// the database.
const CompactThreshold = 0.2

// Compact rewrites the database without its free pages (VACUUM) when more
// than CompactThreshold of them are free: adds rebuild whole packages and
// removals delete rows, and an index image should not carry the holes. It
// reports whether it rewrote the file.
func (d *DB) Compact(ctx context.Context) (bool, error) {
	if d.readOnly {
		return false, fmt.Errorf("compact index %s: opened read-only", d.path)
	}
	var pages, free int64
	if err := d.sql.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return false, fmt.Errorf("compact index %s: %w", d.path, err)
	}
	if err := d.sql.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
		return false, fmt.Errorf("compact index %s: %w", d.path, err)
	}
	if pages == 0 || float64(free)/float64(pages) <= CompactThreshold {
		return false, nil
	}
	if _, err := d.sql.ExecContext(ctx, "VACUUM"); err != nil {
		return false, fmt.Errorf("compact index %s: %w", d.path, err)
	}
	return true, nil
}
