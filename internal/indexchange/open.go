package indexchange

import (
	"context"
	"fmt"
	"os"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indeximage"
)

// Open opens an index argument for reading: a database file as is,
// anything else as an index image whose database layer is fetched (or
// whose file-based catalog is converted) into a temporary directory.
// client is called only for an image. done closes the database and removes
// the temporary files.
func Open(ctx context.Context, arg string, client func() (*image.Client, error)) (db *index.DB, done func(), err error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() || !image.LooksLikeReference(arg) {
		db, err := index.OpenReadOnly(arg)
		if err != nil {
			return nil, nil, err
		}
		return db, func() { _ = db.Close() }, nil
	}
	c, err := client()
	if err != nil {
		return nil, nil, err
	}
	b, err := indeximage.New(c, "")
	if err != nil {
		return nil, nil, err
	}
	if err := b.FetchDatabase(ctx, arg); err != nil {
		_ = b.Close()
		return nil, nil, err
	}
	if err := databaseFromConfigs(ctx, b, arg); err != nil {
		_ = b.Close()
		return nil, nil, err
	}
	db, err = index.OpenReadOnly(b.DatabasePath())
	if err != nil {
		_ = b.Close()
		return nil, nil, fmt.Errorf("database of %s: %w", arg, err)
	}
	return db, func() { _ = db.Close(); _ = b.Close() }, nil
}

// FileOptions say how ApplyFile opens a database file.
type FileOptions struct {
	// MustExist refuses a missing file before opening it (an error that
	// is not an OpenError); otherwise the open reports it.
	MustExist bool
	// VerifiedLog is index.OpenOptions.VerifiedLog.
	VerifiedLog string
}

// OpenError is a database file that could not be opened.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// ApplyFile runs change on the database file path, in the library's one
// transaction. A missing file is an error, not a new index.
func ApplyFile(path string, o FileOptions, change func(*index.DB) error) error {
	if o.MustExist {
		if _, err := os.Stat(path); err != nil {
			return err
		}
	}
	db, err := index.OpenWith(path, index.OpenOptions{VerifiedLog: o.VerifiedLog})
	if err != nil {
		return &OpenError{Err: err}
	}
	err = change(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}
