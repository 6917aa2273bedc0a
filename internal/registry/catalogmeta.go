package registry

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/registry/api"
)

// Deprecations and custom schemas: a database made from a file-based
// catalog keeps the catalog's olm.deprecations blobs and blobs of other
// schemas in index.MetaTable. The server answers them as upstream's
// opm serve does: Package.deprecation, Channel.deprecation and
// Bundle.deprecation from the package's olm.deprecations entries, and the
// custom blobs through api.ExperimentalRegistry.

const schemaDeprecations = "olm.deprecations"

// packageDeprecations are the messages of one package's olm.deprecations.
type packageDeprecations struct {
	pkg      *api.Deprecation
	channels map[string]*api.Deprecation
	bundles  map[string]*api.Deprecation
}

// CustomSchemaBackend is a Backend that keeps a catalog's blobs of custom
// schemas.
type CustomSchemaBackend interface {
	// HasCatalogMetas says whether the catalog's other blobs were kept
	// (a database made from a file-based catalog).
	HasCatalogMetas() bool
	// ListCustomSchemas sends the blobs of schema whose package is pkg
	// ("" for blobs without one), in catalog order.
	ListCustomSchemas(ctx context.Context, schema, pkg string, send func(blob []byte) error) error
}

var _ CustomSchemaBackend = (*SQLite)(nil)

// readMetas reads the deprecations of a database that keeps catalog blobs.
func (s *SQLite) readMetas(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, index.MetaTable).Scan(&n); err != nil {
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	if n == 0 {
		return nil
	}
	s.metas = true
	s.deprecations = map[string]*packageDeprecations{}
	rows, err := s.db.QueryContext(ctx, `SELECT package_name, blob FROM `+index.MetaTable+` WHERE schema = ? ORDER BY rowid`, schemaDeprecations)
	if err != nil {
		return fmt.Errorf("open index %s: read deprecations: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var pkg, blob sql.NullString
		if err := rows.Scan(&pkg, &blob); err != nil {
			return fmt.Errorf("open index %s: read deprecations: %w", s.path, err)
		}
		var d struct {
			Entries []struct {
				Reference struct {
					Schema string `json:"schema"`
					Name   string `json:"name"`
				} `json:"reference"`
				Message string `json:"message"`
			} `json:"entries"`
		}
		if err := json.Unmarshal([]byte(blob.String), &d); err != nil {
			return fmt.Errorf("open index %s: the olm.deprecations of package %s is not JSON: %w", s.path, pkg.String, err)
		}
		pd := s.deprecations[pkg.String]
		if pd == nil {
			pd = &packageDeprecations{channels: map[string]*api.Deprecation{}, bundles: map[string]*api.Deprecation{}}
			s.deprecations[pkg.String] = pd
		}
		for _, e := range d.Entries {
			msg := &api.Deprecation{Message: e.Message}
			switch e.Reference.Schema {
			case "olm.package":
				pd.pkg = msg
			case "olm.channel":
				pd.channels[e.Reference.Name] = msg
			case "olm.bundle":
				pd.bundles[e.Reference.Name] = msg
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("open index %s: read deprecations: %w", s.path, err)
	}
	return s.readPackageMetas(ctx)
}

// readPackageMetas reads the kept package blobs (description, icon), for
// the CSVs built from olm.csv.metadata.
func (s *SQLite) readPackageMetas(ctx context.Context) error {
	s.packages = map[string]*packageMeta{}
	rows, err := s.db.QueryContext(ctx, `SELECT package_name, blob FROM `+index.MetaTable+` WHERE schema = 'olm.package' ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("open index %s: read package blobs: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var pkg, blob string
		if err := rows.Scan(&pkg, &blob); err != nil {
			return fmt.Errorf("open index %s: read package blobs: %w", s.path, err)
		}
		var pm packageMeta
		if err := json.Unmarshal([]byte(blob), &pm); err != nil {
			return fmt.Errorf("open index %s: the olm.package blob of %s is not JSON: %w", s.path, pkg, err)
		}
		s.packages[pkg] = &pm
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("open index %s: read package blobs: %w", s.path, err)
	}
	return nil
}

// packageDeprecation, channelDeprecation and bundleDeprecation answer the
// deprecation of a package, channel or bundle; nil when not deprecated.
// Each answer is a new message: callers may change what they send.
func (s *SQLite) packageDeprecation(pkg string) *api.Deprecation {
	if pd := s.deprecations[pkg]; pd != nil {
		return cloneDeprecation(pd.pkg)
	}
	return nil
}

func (s *SQLite) channelDeprecation(pkg, channel string) *api.Deprecation {
	if pd := s.deprecations[pkg]; pd != nil {
		return cloneDeprecation(pd.channels[channel])
	}
	return nil
}

func (s *SQLite) bundleDeprecation(pkg, bundle string) *api.Deprecation {
	if pd := s.deprecations[pkg]; pd != nil {
		return cloneDeprecation(pd.bundles[bundle])
	}
	return nil
}

func cloneDeprecation(d *api.Deprecation) *api.Deprecation {
	if d == nil {
		return nil
	}
	return &api.Deprecation{Message: d.Message}
}

// HasCatalogMetas says whether the database keeps a catalog's blobs.
func (s *SQLite) HasCatalogMetas() bool { return s.metas }

// ListCustomSchemas sends the kept blobs of schema and package pkg.
func (s *SQLite) ListCustomSchemas(ctx context.Context, schema, pkg string, send func([]byte) error) error {
	switch schema {
	case schemaDeprecations, "olm.package", "olm.channel", "olm.bundle":
		// OLM's own schemas are no custom schemas (the table keeps
		// package blobs for what the package table cannot hold).
		return nil
	}
	if !s.metas {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT blob FROM `+index.MetaTable+` WHERE schema = ? AND package_name = ? ORDER BY rowid`, schema, pkg)
	if err != nil {
		return s.wrap("custom schema "+schema, err)
	}
	// Read all, then send: no connection is held while a client is slow
	// to read (the pool is capped).
	var blobs []string
	for rows.Next() {
		var blob string
		if err := rows.Scan(&blob); err != nil {
			rows.Close()
			return s.wrap("custom schema "+schema, err)
		}
		blobs = append(blobs, blob)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.wrap("custom schema "+schema, err)
	}
	for _, b := range blobs {
		if err := send([]byte(b)); err != nil {
			return err
		}
	}
	return nil
}

// acknowledgeHeader is the metadata a caller of api.ExperimentalRegistry
// sends to say it knows the service may change or go away.
const acknowledgeHeader = "x-acknowledge-experimental"

// metaKeyPart is what upstream accepts as a schema or package name in a
// custom-schema query.
var metaKeyPart = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

// experimentalServer answers api.ExperimentalRegistry from a backend that
// keeps custom schemas.
type experimentalServer struct {
	api.UnimplementedExperimentalRegistryServer
	b CustomSchemaBackend
}

// RegisterExperimental adds api.ExperimentalRegistry to s, answered from b
// (before s serves).
func RegisterExperimental(s *grpc.Server, b CustomSchemaBackend) {
	api.RegisterExperimentalRegistryServer(s, &experimentalServer{b: b})
}

// ExperimentalListPackageCustomSchemas streams the blobs of a schema and
// package, each as a google.protobuf.Struct. Like upstream: a caller that
// does not acknowledge the service gets an empty stream, a missing or
// malformed schema or package name is InvalidArgument.
func (e *experimentalServer) ExperimentalListPackageCustomSchemas(req *api.ExperimentalListPackageCustomSchemasRequest, stream grpc.ServerStreamingServer[structpb.Struct]) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	if v := md.Get(acknowledgeHeader); len(v) == 0 || v[0] != "true" {
		return nil
	}
	schema, pkg := req.GetSchema(), req.GetPackageName()
	if schema == "" {
		return status.Error(codes.InvalidArgument, "schema is required")
	}
	if !metaKeyPart.MatchString(schema) {
		return status.Errorf(codes.InvalidArgument, "invalid custom schema query: invalid schema %q: must match %s", schema, metaKeyPart)
	}
	if pkg != "" && !metaKeyPart.MatchString(pkg) {
		return status.Errorf(codes.InvalidArgument, "invalid custom schema query: invalid packageName %q: must match %s", pkg, metaKeyPart)
	}
	err := e.b.ListCustomSchemas(stream.Context(), schema, pkg, func(blob []byte) error {
		st := &structpb.Struct{}
		if err := st.UnmarshalJSON(blob); err != nil {
			return status.Errorf(codes.Internal, "a %s blob of package %q is not a JSON object: %v", schema, pkg, err)
		}
		return stream.Send(st)
	})
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return err
		}
		if stream.Context().Err() != nil {
			return status.FromContextError(stream.Context().Err()).Err()
		}
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}
