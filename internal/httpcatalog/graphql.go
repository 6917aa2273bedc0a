package httpcatalog

import (
	"bufio"
	"fmt"
	"io"
	"net/http"

	"github.com/opmkit/opm/internal/catalogql"
)

// The Store is what catalogql answers GraphQL queries from.
var _ catalogql.Source = (*Store)(nil)

// EachBlob calls fn with each blob's schema and line, in catalog order.
func (s *Store) EachBlob(fn func(schema string, blob []byte) error) error {
	r := bufio.NewReaderSize(io.NewSectionReader(s.file, 0, s.size), 1<<16)
	var line []byte
	for _, b := range s.blobs {
		if int64(cap(line)) < b.length {
			line = make([]byte, b.length)
		}
		line = line[:b.length]
		if _, err := io.ReadFull(r, line); err != nil {
			return fmt.Errorf("read stored catalog: %w", err)
		}
		if err := fn(b.schema, line); err != nil {
			return err
		}
	}
	return nil
}

// maxGraphQLBlob is the largest blob catalogd's GraphQL queries read: a
// page holding a larger one is an error (with catalogd's message).
const maxGraphQLBlob = 16 << 20

// SchemaBlobs returns at most limit lines of the blobs of a schema, from
// the offset-th, in catalog order, each admitted by admit before it is read.
func (s *Store) SchemaBlobs(schema string, offset, limit int, admit func(int64) error) ([][]byte, error) {
	idx := s.bySchema[schema]
	if offset >= len(idx) || limit <= 0 {
		return nil, nil
	}
	idx = idx[offset:min(len(idx), offset+limit)]
	out := make([][]byte, len(idx))
	for i, j := range idx {
		b := s.blobs[j]
		if b.length > maxGraphQLBlob {
			return nil, fmt.Errorf("invalid section length %d at offset %d", b.length, b.offset)
		}
		if err := admit(b.length); err != nil {
			return nil, err
		}
		out[i] = make([]byte, b.length)
		if _, err := s.file.ReadAt(out[i], b.offset); err != nil {
			return nil, fmt.Errorf("read stored catalog: %w", err)
		}
	}
	return out, nil
}

// graphQLRoutes mounts catalogd's GraphQL endpoint at the root and under
// /catalogs/{catalog}/.
func graphQLRoutes(mux *http.ServeMux, s *catalogql.Schema, name string, concurrency int) {
	h := catalogql.Handler(s, catalogql.HandlerOptions{Name: name, Concurrency: concurrency})
	mux.Handle("/api/v1/graphql", h)
	mux.Handle("/catalogs/{catalog}/api/v1/graphql", h)
}
