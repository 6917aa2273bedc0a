// Package registry serves a catalog over the gRPC api.Registry service that
// OLM v0 reads from a CatalogSource pod, with grpc.health.v1.Health and server
// reflection. The catalog comes from a Backend: the sqlite index database
// (OpenSQLite) today, a file-based catalog later.
package registry

import (
	"context"
	"errors"

	"github.com/opmkit/opm/internal/registry/api"
)

// Backend answers the queries of the ten api.Registry methods. Streaming
// queries call send once per message, in order, and stop at its first error;
// they hold no database connection while send waits for a slow client. Not-found answers are
// *NotFoundError, whose text clients see (upstream's wording).
type Backend interface {
	ListPackages(ctx context.Context, send func(name string) error) error
	GetPackage(ctx context.Context, name string) (*api.Package, error)
	GetBundle(ctx context.Context, pkg, channel, csvName string) (*api.Bundle, error)
	// GetBundleForChannel answers the channel head: its csvName, csvJson
	// and deprecation only from a sqlite index (as upstream's registry
	// serve), the whole bundle from a catalog (Catalog, as upstream's opm
	// serve).
	GetBundleForChannel(ctx context.Context, pkg, channel string) (*api.Bundle, error)
	GetChannelEntriesThatReplace(ctx context.Context, csvName string, send func(*api.ChannelEntry) error) error
	GetBundleThatReplaces(ctx context.Context, csvName, pkg, channel string) (*api.Bundle, error)
	GetChannelEntriesThatProvide(ctx context.Context, gvk GVK, send func(*api.ChannelEntry) error) error
	GetLatestChannelEntriesThatProvide(ctx context.Context, gvk GVK, send func(*api.ChannelEntry) error) error
	GetDefaultBundleThatProvides(ctx context.Context, gvk GVK) (*api.Bundle, error)
	ListBundles(ctx context.Context, send func(*api.Bundle) error) error
	// Stats counts packages and bundles, for the start-up log line.
	Stats(ctx context.Context) (Stats, error)
	Close() error
}

// GVK names an API: group, version, kind (plural is not part of the match).
type GVK struct {
	Group, Version, Kind string
}

// Stats are counts of a catalog.
type Stats struct {
	Packages int
	Bundles  int
}

// NotFoundError is the answer to a query that matches nothing. Its text is
// upstream's, word for word: clients and scripts match on it.
type NotFoundError struct {
	Message string
}

func (e *NotFoundError) Error() string { return e.Message }

// IsNotFound reports whether err is (or wraps) a NotFoundError.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}
