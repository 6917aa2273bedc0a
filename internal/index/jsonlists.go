package index

import (
	"bytes"
	"encoding/json"
)

// The report types below marshal every list as [] when it is empty, never
// as null: consumers of -o json then need no null checks. Lists tagged
// omitempty are left out instead.

func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the caller's encoder decides about escaping
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// MarshalJSON writes empty lists as [].
func (r AddResult) MarshalJSON() ([]byte, error) {
	type plain AddResult
	p := plain(r)
	p.Added, p.Packages = orEmpty(p.Added), orEmpty(p.Packages)
	return marshalPlain(p)
}

// MarshalJSON writes empty lists as [].
func (r PackageResult) MarshalJSON() ([]byte, error) {
	type plain PackageResult
	p := plain(r)
	p.Channels = orEmpty(p.Channels)
	return marshalPlain(p)
}

// MarshalJSON writes empty lists as [].
func (r RemoveResult) MarshalJSON() ([]byte, error) {
	type plain RemoveResult
	p := plain(r)
	p.Packages, p.Removed = orEmpty(p.Packages), orEmpty(p.Removed)
	return marshalPlain(p)
}

// MarshalJSON writes empty lists as [].
func (r ExportResult) MarshalJSON() ([]byte, error) {
	type plain ExportResult
	p := plain(r)
	p.Packages = orEmpty(p.Packages)
	return marshalPlain(p)
}

// MarshalJSON writes empty lists as [].
func (x Index) MarshalJSON() ([]byte, error) {
	type plain Index
	p := plain(x)
	p.Packages = orEmpty(p.Packages)
	return marshalPlain(p)
}

// MarshalJSON writes empty lists as [].
func (x Package) MarshalJSON() ([]byte, error) {
	type plain Package
	p := plain(x)
	p.Channels, p.Bundles = orEmpty(p.Channels), orEmpty(p.Bundles)
	return marshalPlain(p)
}

// MarshalJSON writes empty lists as [].
func (x Channel) MarshalJSON() ([]byte, error) {
	type plain Channel
	p := plain(x)
	p.Bundles, p.Edges = orEmpty(p.Bundles), orEmpty(p.Edges)
	return marshalPlain(p)
}

// MarshalJSON writes empty lists as [].
func (x Bundle) MarshalJSON() ([]byte, error) {
	type plain Bundle
	p := plain(x)
	p.Channels = orEmpty(p.Channels)
	return marshalPlain(p)
}
