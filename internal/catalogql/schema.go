package catalogql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
)

// Source is a stored catalog, as internal/httpcatalog keeps it.
type Source interface {
	// EachBlob calls fn with each blob's schema and JSON, in catalog order.
	EachBlob(fn func(schema string, blob []byte) error) error
	// SchemaBlobs returns at most limit blobs of a schema, skipping the
	// first offset, in catalog order. It calls admit with each blob's
	// size before reading it, and fails with admit's error.
	SchemaBlobs(schema string, offset, limit int, admit func(size int64) error) ([][]byte, error)
}

// Schema is a catalog's GraphQL schema, answering from its Source.
type Schema struct {
	schema  graphql.Schema
	src     Source
	summary []any // of map[string]any: name, totalObjects, totalFields
	limits  Limits
}

// Paging bounds, as catalogd's: limit defaults to 100 and is at most 100.
const (
	defaultLimit = 100
	maxLimit     = 100
)

// QueryTimeout bounds the execution of one query, as catalogd bounds it;
// here its work stops then too (Limits).
const QueryTimeout = 5 * time.Second

// Build discovers the schema of the catalog in src. It fails when two FBC
// schemas would get the same GraphQL type or query field name, where
// catalogd refuses to serve the catalog.
func Build(src Source) (*Schema, error) {
	d := &discovery{schemas: map[string]*schemaInfo{}}
	if err := src.EachBlob(func(schema string, blob []byte) error {
		d.add(schema, blob)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("graphql schema: %w", err)
	}
	names := make([]string, 0, len(d.schemas))
	for n := range d.schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	types, queries := map[string]string{}, map[string]string{}
	for _, n := range names {
		if prev, ok := types[typeName(n)]; ok {
			return nil, fmt.Errorf("graphql schema: schemas %q and %q would both be the GraphQL type %s: rename one (catalogd would refuse this catalog too)", prev, n, typeName(n))
		}
		types[typeName(n)] = n
		if prev, ok := queries[queryField(n)]; ok {
			return nil, fmt.Errorf("graphql schema: schemas %q and %q would both be the query field %s: rename one (catalogd would refuse this catalog too)", prev, n, queryField(n))
		}
		queries[queryField(n)] = n
	}
	s := &Schema{src: src}
	s.SetLimits(Limits{})
	root := graphql.Fields{}
	for _, n := range names {
		info := d.schemas[n]
		root[queryField(n)] = s.listField(n, objectType(n, info))
		s.summary = append(s.summary, map[string]any{"name": n, "totalObjects": info.total, "totalFields": len(info.fields)})
	}
	root["summary"] = s.summaryField(len(names))
	gs, err := graphql.NewSchema(graphql.SchemaConfig{Query: graphql.NewObject(graphql.ObjectConfig{Name: "Query", Fields: root})})
	if err != nil {
		// A schema whose name makes no GraphQL name ("1x"), or clashes with
		// a type of its own (Query, CatalogSummary) or of a list field of
		// another schema; catalogd refuses such a catalog too.
		return nil, fmt.Errorf("graphql schema: %w: rename the schema, or serve without --http-graphql (catalogd would refuse this catalog too)", err)
	}
	s.schema = gs
	return s, nil
}

func scalarType(t scalar) graphql.Output {
	switch t {
	case tInt:
		return graphql.Int
	case tFloat:
		return graphql.Float
	case tBoolean:
		return graphql.Boolean
	}
	return graphql.String
}

func fieldType(f *field) graphql.Output {
	if f.list {
		return graphql.NewList(scalarType(f.typ))
	}
	return scalarType(f.typ)
}

// objectType is the GraphQL type of a schema's blobs.
func objectType(schema string, info *schemaInfo) *graphql.Object {
	fields := graphql.Fields{}
	for name, f := range info.fields {
		if len(f.nested) == 0 {
			fields[name] = &graphql.Field{Type: fieldType(f), Resolve: byFieldName(name, true)}
			continue
		}
		nested := graphql.Fields{}
		for nn, nf := range f.nested {
			nested[nn] = &graphql.Field{Type: fieldType(nf), Resolve: nestedValue(nn)}
		}
		elem := graphql.NewObject(graphql.ObjectConfig{Name: typeName(schema) + typeName(name), Fields: nested})
		fields[name] = &graphql.Field{Type: graphql.NewList(elem), Resolve: byFieldName(name, false)}
	}
	return graphql.NewObject(graphql.ObjectConfig{Name: typeName(schema), Fields: fields})
}

// byFieldName resolves a field of a blob by the key it was named after;
// scalar fields answer objects and lists as their JSON text.
func byFieldName(name string, flatten bool) graphql.FieldResolveFn {
	return func(p graphql.ResolveParams) (any, error) {
		obj, ok := p.Source.(map[string]any)
		if !ok {
			return nil, nil
		}
		q := queryOf(p.Context)
		for _, k := range sortedKeys(obj) {
			if fieldName(k) == name {
				if !flatten {
					return charged(q, obj[k])
				}
				return charged(q, asJSONText(obj[k]))
			}
		}
		return charged(q, nil)
	}
}

// nestedValue resolves a field of an object in a list: the key of that
// name first, else the key named after it.
func nestedValue(name string) graphql.FieldResolveFn {
	byName := byFieldName(name, true)
	return func(p graphql.ResolveParams) (any, error) {
		if obj, ok := p.Source.(map[string]any); ok {
			if v, ok := obj[name]; ok {
				return charged(queryOf(p.Context), asJSONText(v))
			}
		}
		return byName(p)
	}
}

// charged answers v when the query's budget has room for it, else nothing
// (the query is stopped, and its answer will say why).
func charged(q *query, v any) (any, error) {
	n := int64(valueCost)
	if s, ok := v.(string); ok {
		n += int64(len(s))
	}
	if !q.charge(n) {
		return nil, nil
	}
	return v, nil
}

// asJSONText turns objects and lists into their JSON (encoding/json's,
// HTML-escaped, as catalogd's).
func asJSONText(v any) any {
	if v == nil {
		return nil
	}
	if k := reflect.ValueOf(v).Kind(); k != reflect.Map && k != reflect.Slice {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// listField is a root query field: a page of a schema's blobs.
func (s *Schema) listField(schema string, t *graphql.Object) *graphql.Field {
	return &graphql.Field{
		Type: graphql.NewList(t),
		Args: graphql.FieldConfigArgument{
			"limit":  &graphql.ArgumentConfig{Type: graphql.Int, DefaultValue: defaultLimit, Description: "Maximum number of items to return"},
			"offset": &graphql.ArgumentConfig{Type: graphql.Int, DefaultValue: 0, Description: "Number of items to skip"},
		},
		Resolve: func(p graphql.ResolveParams) (any, error) {
			q := queryOf(p.Context)
			if !q.charge(valueCost) {
				return nil, nil
			}
			limit, _ := p.Args["limit"].(int)
			if limit <= 0 || limit > maxLimit {
				limit = maxLimit
			}
			offset, _ := p.Args["offset"].(int)
			offset = max(offset, 0)
			blobs, err := s.src.SchemaBlobs(schema, offset, limit, func(n int64) error {
				if !q.charge(readFactor * n) {
					return ErrOverBudget
				}
				return nil
			})
			if q != nil && q.stopped.Load() {
				return nil, nil // why is answered instead
			}
			if err != nil {
				return nil, fmt.Errorf("error loading objects for schema %s: %w", schema, err)
			}
			out := make([]any, 0, len(blobs))
			for _, b := range blobs {
				var obj map[string]any
				if json.Unmarshal(b, &obj) == nil {
					out = append(out, obj)
				}
			}
			return out, nil
		},
	}
}

// summaryField counts schemas, their blobs and fields (schemas by name).
func (s *Schema) summaryField(n int) *graphql.Field {
	schemaSummary := graphql.NewObject(graphql.ObjectConfig{Name: "SchemaSummary", Fields: graphql.Fields{
		"name":         &graphql.Field{Type: graphql.String},
		"totalObjects": &graphql.Field{Type: graphql.Int},
		"totalFields":  &graphql.Field{Type: graphql.Int},
	}})
	return &graphql.Field{
		Type: graphql.NewObject(graphql.ObjectConfig{Name: "CatalogSummary", Fields: graphql.Fields{
			"totalSchemas": &graphql.Field{Type: graphql.Int},
			"schemas":      &graphql.Field{Type: graphql.NewList(schemaSummary)},
		}}),
		Resolve: func(p graphql.ResolveParams) (any, error) {
			return charged(queryOf(p.Context), map[string]any{"totalSchemas": n, "schemas": s.summary})
		},
	}
}

// Do answers a query: a query over catalogd's bounds (depth, fields,
// aliases), of a shape graphql-go would recurse on without bound, or that
// does not parse is one error; otherwise graphql-go's result, within the
// Schema's Limits: a query whose time or budget runs out, or whose ctx
// ends, stops its work and is answered with one error saying which.
func (s *Schema) Do(ctx context.Context, query string) *graphql.Result {
	if res := refused(query); res != nil {
		return res
	}
	return s.run(ctx, query)
}

// refused is the answer to a query over catalogd's bounds, or nil.
func refused(query string) *graphql.Result {
	if err := checkComplexity(query); err != nil {
		return &graphql.Result{Errors: []gqlerrors.FormattedError{gqlerrors.FormatError(err)}}
	}
	return nil
}

func (s *Schema) run(ctx context.Context, text string) *graphql.Result {
	ctx, cancel := context.WithTimeout(ctx, s.limits.Timeout)
	defer cancel()
	q := &query{}
	q.left.Store(s.limits.Memory)
	// graphql-go gives up on a query whose context ends but leaves its
	// executor running: the resolvers stop it.
	unhook := context.AfterFunc(ctx, func() { q.stop(ctx.Err()) })
	defer unhook()
	res := graphql.Do(graphql.Params{Schema: s.schema, RequestString: text, Context: context.WithValue(ctx, queryKey{}, q)})
	if !q.stopped.Load() {
		return res
	}
	why := q.reason()
	if errors.Is(why, ErrOverBudget) {
		why = overBudget(s.limits.Memory)
	}
	return &graphql.Result{Errors: []gqlerrors.FormattedError{gqlerrors.FormatError(why)}}
}
