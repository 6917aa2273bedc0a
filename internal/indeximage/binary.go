package indeximage

import "fmt"

// BaseDatabase reports whether the image opened with Base (upstream's
// -i/--binary-image) already is an index image: its config carries the
// database label. Building on it would serve a new database and silently
// drop every bundle of the old one, which is almost always a mix-up of -i
// with -f/--from-index. It returns the label's value (the database path)
// from the first platform image that has one.
func (b *Builder) BaseDatabase() (string, bool) {
	if b.base == nil || b.fromIndex {
		return "", false
	}
	for _, im := range b.base.Images {
		if p := im.Labels()[DatabaseLabel]; p != "" {
			return p, true
		}
	}
	return "", false
}

// BinaryImageWarning is the warning `index add` prints when the
// -i/--binary-image it was given already holds an index database.
func BinaryImageWarning(ref, dbPath string) string {
	return fmt.Sprintf("-i/--binary-image %s is an index image (label %s=%s): the new index is built on it without its bundles; did you mean -f/--from-index %s?", ref, DatabaseLabel, dbPath, ref)
}
