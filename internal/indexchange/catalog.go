package indexchange

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbccache"
	"github.com/opmkit/opm/internal/indeximage"
)

// outputFormat is the format to write: the one asked for, else the base
// index image's, else sqlite.
func outputFormat(asked indeximage.Format, b *indeximage.Builder) indeximage.Format {
	if asked != "" {
		return asked
	}
	if f := b.SourceFormat(); f != "" {
		return f
	}
	return indeximage.FormatSQLite
}

// databaseFromConfigs builds the database of an index image that carries
// only a file-based catalog, from its catalog directory.
func databaseFromConfigs(ctx context.Context, b *indeximage.Builder, ref string) error {
	if b.SourceConfigs() == "" {
		return nil
	}
	// A package at a time: memory holds a few packages, not the catalog.
	if _, err := fbc.DirToIndex(ctx, b.SourceConfigs(), b.DatabasePath(), fbc.ToIndexOptions{Scratch: true}, fbc.LoadOptions{}); err != nil {
		return fmt.Errorf("catalog %s of %s: %w", b.ConfigsPath(), ref, err)
	}
	return nil
}

// renderConfigs renders the changed database as the catalog directory
// the image carries, when the format has one.
func renderConfigs(ctx context.Context, b *indeximage.Builder, format indeximage.Format) error {
	if !format.HasConfigs() {
		b.SetOutput(format, "")
		return nil
	}
	dir := filepath.Join(b.Dir(), "configs-out")
	if _, _, err := fbc.RenderIndexFileToDir(ctx, b.DatabasePath(), dir, fbc.RenderOptions{}, fbc.WriteDirOptions{}); err != nil {
		return err
	}
	b.SetOutput(format, dir)
	if format == indeximage.FormatFBC && b.ServesOpmCache() {
		// The image serves from this cache instead of converting the
		// catalog at every start.
		cache := filepath.Join(b.Dir(), "serve-cache")
		if _, _, err := fbccache.Prepare(ctx, dir, fbccache.Options{CacheDir: cache}); err != nil {
			return fmt.Errorf("build the serve cache of the catalog: %w", err)
		}
		b.SetServeCache(cache)
	}
	return nil
}
